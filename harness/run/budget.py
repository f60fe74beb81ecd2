"""Budgets before spending: what a run will ask of the model, estimated without calling it.

The call structure comes from the strategy: a strategy class may offer
`estimate_calls(trials) -> Sequence[CallCount]` (its calls per attempt, by role, at the
fewest and at the most); one that does not is estimated from its declared traits
(harness/strategies/base.py): `calls_per_trial` (first trial, each later trial), one
trial unless it `iterates`; of the first trial's calls one writes the tests when it
`writes_tests`, of each later trial's one writes a lesson when it `writes_lessons`, and
the rest are Actor calls, whose later prompts show the previous trial when it
`sees_previous`. A tool-using strategy without the hook has no estimate (its calls
depend on the turns it takes).

Tokens come from the tasks' own prompts: each call's prompt is rendered with the run's
templates (the first Actor and test-writer calls exactly as sent; later calls with the
previous answer at its whole `max_tokens` and the lessons at theirs), counted at ~4
characters a token; each answer counts at its whole `max_tokens` (an upper bound).
"At the fewest": every attempt stops after its first trial; "at the most": every
attempt spends its whole trial budget. Dollars are the tokens at the model's price,
unknown without one (never 0).

`Spend` is what a run's records say it spent (calls made, dollars), read when a session
starts: a budget already spent stops it at once. The caps themselves are enforced before
every call, by the model's budget gate (harness/models/gate.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from harness.core.actor import Previous, messages_for
from harness.kinds.base import Evaluation, IoFailure
from harness.kinds.languages.kind import kind_for, template_values
from harness.models.base import Price
from harness.text.prompting import Prompts
from harness.rundata import TestRecord
from harness.tasks.base import Task

CHARS_PER_TOKEN = 4  # as the rate limiter's pre-call estimate (harness/models/limiter.py)
FEEDBACK_LINE_CHARS = 100  # a failed test's line in feedback, for the size of a retry prompt


@dataclass(frozen=True)
class CallCount:
    """Calls of one role per attempt: at the fewest (its first trial stops it) and at
    the most (it spends the whole trial budget); a strategy may declare fractions (a
    search that expands some nodes twice)."""

    role: str  # test_writer | actor | reflection | any role a strategy names
    fewest: float
    most: float
    # The prompt of its calls after the first: "retry" (the previous answer, its feedback
    # and the lessons, as reflexion's Actor sees them) or "first" (a fresh sample, as at
    # trial 1).
    later: str = "retry"


class NoEstimate(ValueError):
    """A strategy whose calls cannot be told before it runs."""


def calls_from_traits(traits: Any, trials: int) -> tuple[CallCount, ...]:
    """The call structure a strategy's traits declare (see the module's docstring)."""
    if getattr(traits, "uses_tools", False):
        raise NoEstimate(f"strategy {traits.name!r} calls the model once per tool turn; it offers no "
                         "estimate_calls(trials), so its calls cannot be estimated before it runs")
    first, later = (float(x) for x in getattr(traits, "calls_per_trial", (1.0, 1.0)))
    more = (trials - 1) if traits.iterates else 0
    writer = min(1.0, first) if traits.writes_tests else 0.0
    lesson = min(1.0, later) if traits.writes_lessons and traits.iterates else 0.0
    again = "retry" if getattr(traits, "sees_previous", True) else "first"
    out = [CallCount("actor", first - writer, first - writer + more * (later - lesson), again)]
    if writer:
        out.insert(0, CallCount("test_writer", writer, writer))
    if lesson:
        out.append(CallCount("reflection", 0.0, more * lesson))
    return tuple(out)


def call_structure(strategy: str, trials: int) -> tuple[CallCount, ...]:
    """The strategy's own `estimate_calls(trials)` when its class has one, else what its
    traits declare."""
    from harness.strategies import StrategyError, get_strategy, traits_of

    try:
        instance = get_strategy(strategy)
    except StrategyError as exc:
        raise NoEstimate(str(exc)) from None
    hook = getattr(instance, "estimate_calls", None)
    if callable(hook):
        return tuple(CallCount(str(c.role), float(c.fewest), float(c.most), str(getattr(c, "later", "retry")))
                     for c in hook(trials))
    return calls_from_traits(traits_of(strategy), trials)


def tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


@dataclass(frozen=True)
class PromptSizes:
    """Input tokens of one task's calls, by role and trial: first (trial 1) and later."""

    test_writer: int
    actor_first: int
    actor_later: int
    reflection: int

    def of(self, role: str, later: bool) -> int:
        if role == "test_writer":
            return self.test_writer
        if role == "reflection":
            return self.reflection
        return self.actor_later if later else self.actor_first


def prompt_sizes(task: Task, prompts: Prompts, settings: Mapping[str, Any]) -> PromptSizes:
    """Each call's prompt for `task`, rendered with the run's templates, in tokens."""
    kind = kind_for(task)
    extra = template_values(task)
    answer = "x" * (int(settings["max_tokens"]) * CHARS_PER_TOKEN)  # the previous answer, at its longest
    lesson = "x" * (int(settings["max_tokens_lesson"]) * CHARS_PER_TOKEN)
    lessons = [lesson] * int(settings["memory_window"])
    n = int(settings["max_internal_tests"])
    line = "x" * FEEDBACK_LINE_CHARS
    failed = Evaluation([TestRecord(line, "failed", line)] * n, False, 0.0,
                        (IoFailure(line, line, line, "failed", line),) * n)
    feedback = kind.feedback(prompts, failed, None)  # every internal test failed, as the kind words it
    actor_system = tokens(prompts.render(kind.template("actor_system"), **extra))
    first = actor_system + sum(tokens(m.content) for m in messages_for(prompts, task, None, []))
    later = actor_system + sum(tokens(m.content) for m in messages_for(
        prompts, task, Previous(answer, feedback), lessons))
    testgen = tokens(prompts.render(kind.template("testgen_system"), **extra)) + tokens(prompts.render(
        kind.template("testgen"), prompt=task.prompt, entry_point=task.entry_point,
        max_tests=int(settings["max_internal_tests"]), **extra))
    reflection = tokens(prompts.render(kind.template("reflection_system"), **extra)) + tokens(prompts.render(
        kind.template("reflection"), prompt=task.prompt, code=answer, feedback=feedback, **extra))
    return PromptSizes(testgen, first, later, reflection)


_OUT_SETTING = {"test_writer": "max_tokens_tests", "reflection": "max_tokens_lesson"}


@dataclass
class Bound:
    calls: float = 0.0
    input_tokens: float = 0.0
    output_tokens: float = 0.0

    def add(self, calls: float, input_tokens: float, output_tokens: float) -> None:
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def dollars(self, price: Price | None) -> float | None:
        if price is None:
            return None
        return (self.input_tokens * price.input + self.output_tokens * price.output) / 1_000_000

    def as_dict(self, price: Price | None) -> dict[str, Any]:
        usd = self.dollars(price)
        calls, inp, out = (math.ceil(x - 1e-9) for x in (self.calls, self.input_tokens, self.output_tokens))
        return {"calls": calls, "input_tokens": inp, "output_tokens": out, "tokens": inp + out,
                "usd": None if usd is None else round(usd, 6)}


@dataclass
class StrategyEstimate:
    strategy: str
    attempts: int
    structure: tuple[CallCount, ...]
    fewest: Bound = field(default_factory=Bound)
    most: Bound = field(default_factory=Bound)


def estimate(tasks: Sequence[Task], strategies: Sequence[str], settings: Mapping[str, Any], prompts: Prompts,
             price: Price | None, *, price_source: str = "") -> dict[str, Any]:
    """The run's expected model calls, tokens and dollars, at the fewest and at the most,
    per strategy and in total (JSON-ready: run.json keeps it as "estimate")."""
    trials, samples = int(settings["trials"]), int(settings["samples"])
    sizes = [prompt_sizes(t, prompts, settings) for t in tasks]
    out_tokens = {role: int(settings[key]) for role, key in _OUT_SETTING.items()}
    per: list[StrategyEstimate] = []
    for strategy in strategies:
        structure = call_structure(strategy, trials)
        est = StrategyEstimate(strategy, len(tasks) * samples, structure)
        for task, size in zip(tasks, sizes):
            # a task set's `:with-example` form (or the oracle ablation) writes no tests
            skip_writer = task.examples_as_internal or bool(settings.get("oracle_feedback"))
            for c in structure:
                if c.role == "test_writer" and skip_writer:
                    continue
                out = out_tokens.get(c.role, int(settings["max_tokens"]))
                for bound, n in ((est.fewest, c.fewest), (est.most, c.most)):
                    first = min(1.0, n) if c.role != "reflection" else 0.0  # the first call of a role sees no trial before
                    later = n - first
                    again = size.of(c.role, c.later != "first")
                    bound.add(n * samples, samples * (first * size.of(c.role, False) + later * again),
                              n * samples * out)
        per.append(est)
    total_fewest, total_most = Bound(), Bound()
    for e in per:
        for total, b in ((total_fewest, e.fewest), (total_most, e.most)):
            total.add(b.calls, b.input_tokens, b.output_tokens)
    return {
        "tasks": len(tasks), "samples": samples, "trials": trials,
        "price": None if price is None else {"input": price.input, "output": price.output},
        "price_source": price_source if price is not None else "",
        "strategies": {e.strategy: {"attempts": e.attempts,
                                    "calls_per_attempt": [{"role": c.role, "fewest": c.fewest, "most": c.most, "later": c.later}
                                                          for c in e.structure],
                                    "fewest": e.fewest.as_dict(price), "most": e.most.as_dict(price)} for e in per},
        "total": {"fewest": total_fewest.as_dict(price), "most": total_most.as_dict(price)},
        "basis": f"prompts rendered with the run's templates at ~{CHARS_PER_TOKEN} characters a token; every "
                 "answer at its whole max_tokens; fewest: every attempt stops after its first trial; most: every "
                 "attempt spends its whole trial budget",
    }


def format_estimate(doc: Mapping[str, Any], title: str) -> str:
    """The estimate as the terminal prints it."""
    from harness.rundata import wording

    def usd(x: Any) -> str:
        return wording.money(x) if x is not None else wording.UNKNOWN

    rows = [["strategy", "attempts", "calls", "input tokens", "output tokens (at most)", "dollars"]]
    for name, s in doc["strategies"].items():
        f, m = s["fewest"], s["most"]
        rows.append([name, str(s["attempts"]), f"{f['calls']:,} .. {m['calls']:,}",
                     f"{f['input_tokens']:,} .. {m['input_tokens']:,}", f"{f['output_tokens']:,} .. {m['output_tokens']:,}",
                     f"{usd(f['usd'])} .. {usd(m['usd'])}"])
    f, m = doc["total"]["fewest"], doc["total"]["most"]
    rows.append(["total", str(sum(s["attempts"] for s in doc["strategies"].values())), f"{f['calls']:,} .. {m['calls']:,}",
                 f"{f['input_tokens']:,} .. {m['input_tokens']:,}", f"{f['output_tokens']:,} .. {m['output_tokens']:,}",
                 f"{usd(f['usd'])} .. {usd(m['usd'])}"])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [title]
    for i, r in enumerate(rows):
        lines.append("  ".join(c.ljust(w) if j == 0 else c.rjust(w) for j, (c, w) in enumerate(zip(r, widths))))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    price = doc.get("price")
    lines.append(f"price: ${price['input']:g} in / ${price['output']:g} out per million tokens ({doc['price_source']})"
                 if price else "price: unknown for this model (give --price IN/OUT for dollars); no dollars estimated")
    time = doc.get("time")
    lines.append(f"time: {wording.duration(time['fewest_s'])} .. {wording.duration(time['most_s'])} of model time "
                 f"({time['basis']})" if time else
                 "time: not estimated (no measured speed for this model; a run reports its own: model time, tokens/s)")
    lines.append(f"fewest .. most: {doc['basis']}. No model was called.")
    return "\n".join(lines)


# ------------------------------------------------------------------ spend and budgets

@dataclass
class Spend:
    """What a run has spent: calls made to the model, answered or failed (response-cache
    hits cost nothing and do not count), and dollars (calls without a price add none)."""

    calls: int = 0
    usd: float = 0.0

    def add(self, model_calls: int, cached_calls: int, cost_usd: float | None) -> None:
        self.calls += max(0, int(model_calls) - int(cached_calls))
        self.usd += float(cost_usd or 0.0)

    @classmethod
    def of(cls, records: Iterable[Any], errors: Iterable[Mapping[str, Any]] = ()) -> "Spend":
        spend = cls()
        for r in records:
            spend.add(r.model_calls, r.cached_calls, r.cost_usd)
        for e in errors:
            spent = e.get("spent") if isinstance(e, Mapping) else None
            if isinstance(spent, Mapping):
                spend.add(int(spent.get("model_calls") or 0), int(spent.get("cached_calls") or 0), spent.get("cost_usd"))
        return spend


@dataclass(frozen=True)
class Budget:
    """--max-calls and --max-cost: caps (the gate enforces them call by call; this
    checks a session's start against what the run's records say was spent)."""

    max_calls: int | None = None
    max_cost: float | None = None

    @property
    def active(self) -> bool:
        return self.max_calls is not None or self.max_cost is not None

    def reached(self, spend: Spend) -> dict[str, Any] | None:
        """{kind, limit, spent, flag} of the first limit reached, or None."""
        if self.max_calls is not None and spend.calls >= self.max_calls:
            return {"kind": "max_calls", "flag": "--max-calls", "limit": self.max_calls, "spent": spend.calls}
        if self.max_cost is not None and spend.usd >= self.max_cost:
            return {"kind": "max_cost", "flag": "--max-cost", "limit": self.max_cost, "spent": round(spend.usd, 6)}
        return None
