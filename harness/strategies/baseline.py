"""baseline: plain sampling. One Actor call per attempt: no tests, no feedback, no memory;
n independent attempts are scored with the unbiased pass@k estimator."""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Sequence

from harness.core import grade_hidden, verdicts, write_code
from harness.strategies.base import Strategy, Traits

if TYPE_CHECKING:
    from harness.core import AttemptContext
    from harness.rundata import TrialRecord
    from harness.tasks.base import Task


class Baseline(Strategy):
    traits = Traits(
        name="baseline",
        description="plain sampling: one answer, no tests, no feedback",
        writes_tests=False, iterates=False, writes_lessons=False, reference=True,
        groups=("both", "all"), order=90, plot_style=("--", "s"), calls_per_trial=(1.0, 0.0),
    )

    def run_attempt(self, ctx: "AttemptContext", task: "Task", attempt: int,
                    done: Sequence["TrialRecord"]) -> Iterator["TrialRecord"]:
        scope = ctx.trial(task, self.traits.name, attempt, 1)
        draft = write_code(scope, previous=None, settings=ctx.settings.first_call(attempt))
        hidden = grade_hidden(scope, draft)
        found = verdicts(None, hidden, [], task)
        yield scope.record(final=True, stop_reason="single_sample", code=draft.code, raw_output=draft.raw_output,
                           error=draft.error, temperature_used=draft.temperature_used, oracle_feedback=False, **found)
