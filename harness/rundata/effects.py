"""Which comparisons answer a run's question, from the strategies' traits alone.

A strategy's traits (harness.strategies) name its `isolates` ablation (the strategy
that differs from it only by its own idea: reflexion's is feedback, the same loop
without the lesson), its compute-matched `rival` (reflexion's: resample) and whether it
is the `reference` (plain sampling, the baseline). From them:

* `default_pairs`: the paired comparisons a run reports (harness.rundata.roles);
* `effects`: those pairs named by what they measure: "isolates" (the idea's own effect),
  "rival" (compute-matched), "total" (against the reference);
* `headline`: the strategy whose effects lead the answer, and the answer's lines: the
  effect that isolates its idea first, saying which it is; a total effect alone says
  what else it includes;
* `categories`: the per-task filters, each labelled with exactly what it counts.

No strategy is named here: a new strategy with traits gets the same treatment.
"""
from __future__ import annotations

from typing import Any, Sequence

from harness.rundata import roles, wording
from harness.strategies import traits_of as known_traits

EFFECT_ORDER = ("isolates", "rival", "total")


def reference_of(strategies: Sequence[str]) -> str | None:
    """The run's reference strategy (plain sampling), if it holds one."""
    return roles.reference(strategies)


def default_pairs(strategies: Sequence[str]) -> list[tuple[str, str]]:
    """The paired comparisons a run reports (harness.rundata.roles)."""
    return roles.default_pairs(strategies)


_IDEAS = (("recalls", "recall"), ("writes_lessons", "the lesson"), ("uses_tools", "tools"),
          ("writes_tests", "self-written tests"), ("iterates", "retrying"))


def idea_of(a: str, b: str | None) -> str:
    """What a has that b lacks, in words, from their traits: "the lesson" (reflexion
    against feedback), "recall"; else "<a>'s own idea"."""
    ta, tb = known_traits(a), known_traits(b) if b else None
    if ta is not None and tb is not None:
        for field, words in _IDEAS:
            if getattr(ta, field) and not getattr(tb, field):
                return words
    return f"{a}'s own idea"


def _own(idea: str) -> str:
    """ "the lesson" -> "the lesson's"; "x's own idea" stays."""
    return idea if idea.endswith("own idea") else f"{idea}'s"


def _own_effect(idea: str) -> str:
    return idea if idea.endswith("own idea") else f"{idea}'s own effect"


def effect_label(kind: str, a: str, b: str) -> str:
    if kind == "isolates":
        idea = idea_of(a, b)
        head = idea[0].upper() + idea[1:]
        return (f"{head}'s own effect ({b} is {a} without it)" if not idea.endswith("own idea") else
                f"{a}'s own idea, isolated ({b} is {a} without it)")
    if kind == "rival":
        return f"Compute-matched ({b}: {a}'s rival at a similar budget of calls)"
    return f"Total, against {b} (plain sampling)"


def effects(strategies: Sequence[str], pairs: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The pairs that measure a strategy's effects, each with `effect` (isolates | rival |
    total) and `label`, per strategy in the run's order, effects in EFFECT_ORDER."""
    by = {(p["a"], p["b"]): p for p in pairs}
    ref = reference_of(strategies)
    out = []
    for s in strategies:
        t = known_traits(s)
        if t is None:
            continue
        partners = {"isolates": t.isolates, "rival": t.rival, "total": ref if s != ref else None}
        for kind in EFFECT_ORDER:
            p = by.get((s, partners[kind])) if partners[kind] else None
            if p is not None:
                out.append({**p, "effect": kind, "label": effect_label(kind, s, p["b"])})
    return out


def headline(strategies: Sequence[str], effect_rows: Sequence[dict[str, Any]]) -> str | None:
    """The strategy whose effects lead: the first (in the run's order) with its isolating
    ablation in the run, else with its rival, else with the reference."""
    for kind in EFFECT_ORDER:
        for s in strategies:
            if any(e["a"] == s and e["effect"] == kind for e in effect_rows):
                return s
    return None


def _group_with(a: str, b: str) -> str | None:
    ta, tb = known_traits(a), known_traits(b)
    if ta is None or tb is None:
        return None
    common = [g for g in ta.groups if g in tb.groups]
    return common[0] if common else None


def missing_isolation(a: str, strategies: Sequence[str]) -> str:
    """What a total effect of `a` includes besides a's own idea, when the ablation that
    isolates it is not in the run ("" when it is, or a has none)."""
    t = known_traits(a)
    iso = t.isolates if t is not None else None
    if not iso or iso in strategies:
        return ""
    ti = known_traits(iso)
    what = f" ({ti.description})" if ti is not None and ti.description else ""
    group = _group_with(a, iso)
    how = f"--strategy {group}" if group else f"a run with {iso}"
    idea = idea_of(a, iso)
    return (f"; this difference includes the effect of everything {iso} does too{what}, not only {_own(idea)}: "
            f"run {iso} beside them ({how}) to isolate {_own_effect(idea)}")


def answer(strategies: Sequence[str], strategy_numbers: dict[str, dict[str, Any]],
           pairs: Sequence[dict[str, Any]], effect_rows: Sequence[dict[str, Any]]) -> list[str]:
    """The answer's lines: the headline strategy's effects, each led by what it measures
    (the isolating one first), then every other pair."""
    lead = headline(strategies, effect_rows)
    lines, said = [], set()
    if lead is not None:
        mine = [e for e in effect_rows if e["a"] == lead]
        isolated = any(e["effect"] == "isolates" for e in mine)
        for e in mine:
            text = f"{e['label']}: {wording.answer_line(e)}"
            if e["effect"] == "total" and not isolated and e.get("tasks"):
                text += missing_isolation(lead, strategies)
            lines.append(text)
            said.add((e["a"], e["b"]))
    lines += [wording.answer_line(p) for p in pairs if (p["a"], p["b"]) not in said]
    return lines or [wording.alone_line(n, s) for n, s in strategy_numbers.items()]


# ------------------------------------------------------------------ per-task categories

def categories(pairs: Sequence[dict[str, Any]], effect_rows: Sequence[dict[str, Any]],
               strategies: Sequence[str]) -> list[dict[str, str]]:
    """The per-task filters, in the order the view lists them, each with a label that
    says exactly what it counts. fixed / broken / both_pass / both_fail go by the first
    pair (as per_task's `categories`); fixed_<effect> / broken_<effect> by the headline
    strategy's isolating and compute-matched effects (per_task's `effect_categories`).
    A task counts for a pair by the majority of its attempts."""
    out = [{"key": "", "label": "all tasks"}]
    if pairs:
        a, b = pairs[0]["a"], pairs[0]["b"]
        out += [{"key": "fixed", "label": f"{a} passes, {b} fails"},
                {"key": "broken", "label": f"{b} passes, {a} fails"},
                {"key": "both_pass", "label": f"both pass ({a} and {b})"},
                {"key": "both_fail", "label": f"both fail ({a} and {b})"}]
    for e in effect_pairs(pairs, effect_rows, strategies):
        out += [{"key": f"fixed_{e['effect']}", "label": f"fixed by {e['a']}, not by {e['b']}"},
                {"key": f"broken_{e['effect']}", "label": f"broken by {e['a']}: {e['b']} passes, {e['a']} fails"}]
    out += [{"key": "false_positive", "label": "stopped on a false-positive self-test"},
            {"key": "wrong_tests", "label": "wrong self-tests"},
            {"key": "error", "label": "error or incomplete"}]
    return out


def effect_pairs(pairs: Sequence[dict[str, Any]], effect_rows: Sequence[dict[str, Any]],
                 strategies: Sequence[str]) -> list[dict[str, Any]]:
    """The headline strategy's isolating and compute-matched effects (not the first pair,
    which fixed / broken already count)."""
    lead = headline(strategies, effect_rows)
    first = (pairs[0]["a"], pairs[0]["b"]) if pairs else None
    return [e for e in effect_rows if e["a"] == lead and e["effect"] in ("isolates", "rival")
            and (e["a"], e["b"]) != first]
