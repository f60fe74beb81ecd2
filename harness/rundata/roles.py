"""What the numbers need to know of a strategy, read from its declared traits
(harness/strategies/): which one is the reference (plain sampling), which write tests
or iterate, which pairs answer a run's questions, how each is drawn. No strategy is
named here; a strategy of a run folder that no registered strategy has (a plug-in not
installed here) is treated as an iterating strategy that writes tests, compared with
the reference."""
from __future__ import annotations

from typing import Any, Sequence

from harness.strategies import traits_of


def is_reference(name: str) -> bool:
    traits = traits_of(name)
    return bool(traits and traits.reference)


def reference(strategies: Sequence[str]) -> str | None:
    """The run's reference strategy (plain sampling), if it has one."""
    return next((s for s in strategies if is_reference(s)), None)


def writes_tests(name: str) -> bool:
    traits = traits_of(name)
    return traits.writes_tests if traits else True


def iterates(name: str) -> bool:
    traits = traits_of(name)
    return traits.iterates if traits else True


def writes_lessons(name: str) -> bool:
    traits = traits_of(name)
    return traits.writes_lessons if traits else False


def sees_previous(name: str) -> bool:
    """A trial's prompt shows the previous trial's code and feedback."""
    traits = traits_of(name)
    return traits.sees_previous if traits else True


def order(strategies: Sequence[str]) -> list[str]:
    """The strategies in their declared order (unknown ones after, as given)."""
    def key(item: tuple[int, str]) -> tuple[int, int]:
        traits = traits_of(item[1])
        return (traits.order if traits else 1000, item[0])
    return [s for _, s in sorted(enumerate(strategies), key=key)]


def default_pairs(strategies: Sequence[str]) -> list[tuple[str, str]]:
    """The comparisons a run's strategies answer, as (a, b) for a - b, present only:
    what an add-on adds to the strategy it extends (its `isolates`, where that one
    isolates an idea of its own, e.g. recall on top of reflexion); each strategy
    against the reference; then each strategy's own idea against the ablation without
    it (`isolates`: reflexion against feedback, the lesson's own value) and against its
    compute-matched rival (`rival`: repair against resampling)."""
    have = list(strategies)
    ref = reference(have)
    pairs: list[tuple[str, str]] = []

    def add(a: str, b: str | None) -> None:
        if b is not None and b in have and a != b and (a, b) not in pairs:
            pairs.append((a, b))

    for s in order(have):
        t = traits_of(s)
        if t and t.isolates and (base := traits_of(t.isolates)) is not None and base.isolates:
            add(s, t.isolates)
    for s in order(have):
        if not is_reference(s):
            add(s, ref)
    for s in order(have):
        t = traits_of(s)
        if t and t.isolates and not ((base := traits_of(t.isolates)) is not None and base.isolates):
            add(s, t.isolates)
    for s in order(have):
        t = traits_of(s)
        if t and t.rival:
            add(s, t.rival)
    return pairs


def plot_style(name: str) -> tuple[Any, str]:
    """(matplotlib linestyle, marker) for a strategy's line."""
    traits = traits_of(name)
    return traits.plot_style if traits and traits.plot_style else (":", "d")
