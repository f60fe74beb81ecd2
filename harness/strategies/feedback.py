"""feedback: retry with the previous implementation and its test feedback, no lessons
(the ablation that isolates the value of reflexion's verbal lesson)."""
from __future__ import annotations

from harness.core import Previous, TrialScope
from harness.strategies.base import Traits
from harness.strategies.iterative import IterativeStrategy, Seen


class Feedback(IterativeStrategy):
    traits = Traits(
        name="feedback",
        description="retry with test feedback, no reflection",
        writes_tests=True, iterates=True, writes_lessons=False, sees_previous=True,
        groups=("all",), order=20, plot_style=("-.", "^"), calls_per_trial=(2.0, 1.0),
    )

    def prepare(self, scope: TrialScope, previous: Previous | None) -> Seen:
        return Seen(previous=previous)
