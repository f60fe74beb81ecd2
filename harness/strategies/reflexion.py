"""reflexion (Shinn et al. 2023, the programming setting): tests once; from trial 2 the
Actor sees its previous implementation, that implementation's feedback, and the last
`memory_window` lessons of long-term memory, the newest written by Self-Reflection on
the previous trial at the start of this one."""
from __future__ import annotations

from harness.core import Previous, TrialScope, memory_lessons, reflect
from harness.strategies.base import Traits
from harness.strategies.iterative import IterativeStrategy, Seen


class Reflexion(IterativeStrategy):
    traits = Traits(
        name="reflexion",
        description="retry with test feedback and a verbal lesson from Self-Reflection",
        writes_tests=True, iterates=True, writes_lessons=True, sees_previous=True,
        rival="resample", isolates="feedback",
        groups=("both", "all", "recall"), order=10, plot_style=("-", "o"), calls_per_trial=(2.0, 2.0),
    )

    def lessons(self, scope: TrialScope, previous: Previous | None) -> list[str]:
        lesson = None
        if previous is not None:
            lesson = reflect(scope, scope.attempt, code=previous.code, feedback=previous.feedback,
                             about_trial=scope.trial - 1)
        return memory_lessons(scope, new=[lesson] if lesson else [])

    def prepare(self, scope: TrialScope, previous: Previous | None) -> Seen:
        return Seen(previous=previous, lessons=self.lessons(scope, previous))
