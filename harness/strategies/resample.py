"""resample: independent samples checked by the agent's own tests, no feedback, no
lessons (the compute-matched rival of repair)."""
from __future__ import annotations

from harness.core import Previous, TrialScope
from harness.strategies.base import Traits
from harness.strategies.iterative import IterativeStrategy, Seen


class Resample(IterativeStrategy):
    traits = Traits(
        name="resample",
        description="independent samples checked by the agent's own tests, no feedback",
        writes_tests=True, iterates=True, writes_lessons=False,
        groups=("all",), order=30, plot_style=((0, (5, 1, 1, 1, 1, 1)), "v"), calls_per_trial=(2.0, 1.0),
    )

    def prepare(self, scope: TrialScope, previous: Previous | None) -> Seen:
        # An independent sample needs its own seed and a temperature above 0.
        return Seen(settings=scope.ctx.settings.fresh_sample(scope.attempt, scope.trial))
