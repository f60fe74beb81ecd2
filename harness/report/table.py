"""The table a run prints at its end (and `harness report` beside its files): a run's
numbers (harness.rundata.numbers, summary.json's document) as plain text.

It computes nothing: every figure and sentence is the numbers' own, formatted by
harness.rundata.wording as the report and the view format them.
"""
from __future__ import annotations

from typing import Any

from harness.rundata import wording


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]
    line = lambda cells: "  ".join(  # noqa: E731
        str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return [line(header), "  ".join("-" * w for w in widths), *(line(r) for r in rows)]


def _cost(value: float | None, calls: int) -> str:
    """Dollars; "unknown" for calls without a price (never 0), a dash for no calls."""
    if value is not None:
        return f"{value:.4f}"
    return wording.UNKNOWN if calls > 0 else wording.DASH


def format_summary(numbers: dict[str, Any]) -> str:
    """A run's numbers as plain text: status, times, the answer, caveats, the tables."""
    strategies: dict[str, dict[str, Any]] = numbers.get("strategies", {})
    ks = numbers.get("k") or [1]
    lines = [f"run {numbers.get('run_id')}: {numbers.get('tasks')} tasks{_languages(numbers)}, "
             f"{numbers.get('samples')} sample(s), {wording.trials_phrase(numbers.get('trials'), list(strategies))}",
             f"status: {numbers['status']['text']}",
             f"time: {numbers['time']['text']}"]
    if numbers.get("compute"):
        lines.append(numbers["compute"]["text"])
    lines.append("")
    lines += numbers.get("answer") or []
    lines += [("WARNING: " if c["level"] == "red" else "note: ") + c["text"] for c in numbers.get("caveats") or []]
    hats = [k for k in ks if k > 1]  # pass^1 is pass@1
    head = ["strategy", *(f"pass@{k} [95% CI]" for k in ks), *(f"pass^{k} [95% CI]" for k in hats), "calls",
            "in tokens", "out tokens", "cost $", "cached $", "unusable answers", "model errors", "summed time",
            "incomplete"]
    rows = []
    for name, s in strategies.items():
        rows.append([name, *(wording.rate_with_ci(s.get(f"pass@{k}"), *(s.get(f"pass@{k}_ci95") or [None, None]))
                             for k in ks),
                     *(wording.rate_with_ci(s.get(f"pass^{k}"), *(s.get(f"pass^{k}_ci95") or [None, None]))
                       for k in hats),
                     str(s["model_calls"]), f"{s['input_tokens']:,}", f"{s['output_tokens']:,}",
                     _cost(s.get("cost_usd"), s["model_calls"] - s.get("cached_calls", 0)),
                     _cost(s.get("cached_cost_usd"), s.get("cached_calls", 0)),
                     str(s["errors"]), str(s.get("model_errors", 0)), wording.duration(s["summed_s"]),
                     str(s.get("incomplete_attempts", 0))])
    lines += ["", *_table(head, rows)]
    width = max((len(s["pass@1_by_trial"]) for s in strategies.values()), default=0)
    if width > 1:
        head = ["pass@1 by trial", *(f"t={t}" for t in range(1, width + 1))]
        rows = [[n, *(wording.pct(x) for x in s["pass@1_by_trial"]), *([""] * (width - len(s["pass@1_by_trial"])))]
                for n, s in strategies.items()]
        lines += ["", *_table(head, rows)]
    by_kind = numbers.get("by_kind") or {}
    if by_kind:
        names = list(strategies)
        head = ["pass@1 by task kind", "tasks", *names]
        rows = [[kind, str(entry.get("tasks", "")), *(wording.rate_with_ci(
            (entry.get(n) or {}).get("pass@1"), *((entry.get(n) or {}).get("pass@1_ci95") or [None, None]))
            for n in names)] for kind, entry in by_kind.items()]
        lines += ["", *_table(head, rows)]
    by_language = numbers.get("by_language") or []
    if by_language:
        names = list(strategies)
        cells = {(r["language"], r["strategy"]): r for r in by_language}
        languages = list(dict.fromkeys(r["language"] for r in by_language))
        head = ["pass@1 by language", "tasks", *names]
        rows = [[language, str(next((cells[(language, n)]["tasks"] for n in names if (language, n) in cells), 0)),
                 *(wording.rate_with_ci((cells.get((language, n)) or {}).get("pass@1"),
                                        *((cells.get((language, n)) or {}).get("pass@1_ci95") or [None, None]))
                   for n in names)] for language in languages]
        lines += ["", *_table(head, rows)]
    lines += _not_compiled(numbers)
    lines.append("unusable answers = trials whose answer held no usable code (scored as failures); model errors = "
                 "attempts a model error stopped after its retries (errors.jsonl; not scored, --resume redoes them)")
    lines.append("summed time = every trial's own time added up over the workers (strategies run interleaved); "
                 "the elapsed time is on the time line above")
    if numbers.get("model"):
        lines.append(wording.model_line(numbers["model"]))
    for line in (numbers.get("estimate_check") or {}).get("text") or []:
        lines.append(f"estimate: {line}")
    return "\n".join(lines)


def _languages(numbers: dict[str, Any]) -> str:
    """" in rust" for a run of one language other than Python, " (go 1, python 2)" for a
    run that mixes languages, "" for Python alone."""
    languages = numbers.get("languages") or {}
    if not languages or list(languages) == ["python"]:
        return ""
    if len(languages) == 1:
        return f" in {next(iter(languages))}"
    return " (" + ", ".join(f"{name} {n}" for name, n in languages.items()) + ")"


def _not_compiled(numbers: dict[str, Any]) -> list[str]:
    """One line when some attempt's final program did not compile (summary.json
    not_compiled): per strategy, how many and by which status."""
    shown = {name: e for name, e in (numbers.get("not_compiled") or {}).items() if e.get("total")}
    if not shown:
        return []
    parts = [f"{name} {e['total']} of {e['finals']} ("
             + ", ".join(f"{status} {n}" for status, n in e["by_status"].items()) + ")" for name, e in shown.items()]
    return ["", "final programs that did not compile: " + "; ".join(parts)]
