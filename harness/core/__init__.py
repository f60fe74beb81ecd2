"""The core: what strategies compose (harness/strategies/), public and small.

`AttemptContext` is what a run's attempts share; `TrialScope` one trial in the making
(its model calls, events, sandbox time) and `TrialScope.record` its record; the steps
write tests, write code, evaluate on the agent's tests, grade hidden, reflect, show
memory and recall, each appending its events.
"""
from harness.core.context import (
    AttemptContext, AttemptIncomplete, LoopSettings, Stopped, TrialLedger, TrialScope, now,
)
from harness.core.steps import (
    Draft, Previous, evaluate, grade_hidden, lessons_of, memory_lessons, recall_lessons, reflect, run_script,
    store_lessons, tests_of, verdicts, write_code, write_tests,
)

__all__ = [
    "AttemptContext", "AttemptIncomplete", "LoopSettings", "Stopped", "TrialLedger", "TrialScope", "now",
    "Draft", "Previous", "evaluate", "grade_hidden", "lessons_of", "memory_lessons", "recall_lessons", "reflect",
    "run_script", "store_lessons", "tests_of", "verdicts", "write_code", "write_tests",
]
