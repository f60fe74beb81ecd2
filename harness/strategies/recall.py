"""reflexion+recall: reflexion, with up to K lessons from other tasks recalled before
each Actor call from the run's frozen pool (harness/core/recall.py), in their own section."""
from __future__ import annotations

from harness.core import Previous, TrialScope, recall_lessons
from harness.strategies.base import Traits
from harness.strategies.iterative import Seen
from harness.strategies.reflexion import Reflexion


class ReflexionRecall(Reflexion):
    traits = Traits(
        name="reflexion+recall",
        description="reflexion with lessons recalled from other tasks (needs --recall-from)",
        writes_tests=True, iterates=True, writes_lessons=True, recalls=True, sees_previous=True,
        isolates="reflexion",
        groups=("recall",), order=15, plot_style=("-", "P"), calls_per_trial=(2.0, 2.0),
    )

    def prepare(self, scope: TrialScope, previous: Previous | None) -> Seen:
        recalled = recall_lessons(scope, previous.feedback if previous is not None else None)
        return Seen(previous=previous, lessons=self.lessons(scope, previous), recalled=[r.lesson for r in recalled])
