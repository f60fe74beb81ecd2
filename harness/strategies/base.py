"""The strategy contract: declared traits, and one method that runs an attempt.

A strategy is one module in harness/strategies/ (or in another package, through the
entry point group `reflexion_harness.strategies`) defining a `Strategy` subclass with
its `Traits`. It runs an attempt by composing the core's public steps
(harness/core/) and yields each finished trial's record; the records carry the
events its steps appended. Everything the CLI, the metrics, the report and the view
need to know about a strategy they read from its traits.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Mapping, Sequence

if TYPE_CHECKING:
    from harness.core import AttemptContext
    from harness.rundata import TrialRecord
    from harness.tasks.base import Task


@dataclass(frozen=True)
class Traits:
    """What a strategy is, declared once.

    rival: its compute-matched rival (e.g. repair against resampling at similar cost);
    isolates: the strategy that differs from it only by its own idea (reflexion against
    feedback: the lesson's own value); reference: plain sampling, the baseline every
    other strategy is compared with; groups: the `--strategy` groups it belongs to.
    """

    name: str
    description: str
    writes_tests: bool
    iterates: bool
    writes_lessons: bool
    recalls: bool = False  # needs the run's frozen recall pool (--recall-from)
    uses_tools: bool = False  # a tool-calling agent loop
    sees_previous: bool = False  # a trial's prompt shows the previous trial's code and feedback
    rival: str | None = None
    isolates: str | None = None
    reference: bool = False
    groups: tuple[str, ...] = ()
    order: int = 100  # position in groups, tables and plots
    plot_style: tuple[Any, str] | None = None  # (matplotlib linestyle, marker)
    # Calls per trial, for estimates before a run: (first trial, each later trial)
    calls_per_trial: tuple[float, float] = (1.0, 1.0)

    def __post_init__(self) -> None:
        """Each trait checked against its type: a wrong one is one line naming the
        strategy and the trait (TraitError), not a traceback later in a run."""
        for field, check, want in _TRAIT_TYPES:
            value = getattr(self, field)
            if not check(value):
                raise TraitError(f"strategy {self.name!r}: trait {field} must be {want}, got {value!r}")

    def describe(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items()}


class TraitError(TypeError):
    """A trait of the wrong type; the message names the strategy and the trait."""


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0


def _opt_str(x: Any) -> bool:
    return x is None or (isinstance(x, str) and bool(x))


_FLAG = (lambda x: isinstance(x, bool), "True or False")
_TRAIT_TYPES: tuple[tuple[str, Any, str], ...] = (
    ("name", lambda x: isinstance(x, str) and bool(x), "a non-empty str"),
    ("description", lambda x: isinstance(x, str), "a str"),
    *((f, *_FLAG) for f in ("writes_tests", "iterates", "writes_lessons", "recalls", "uses_tools", "sees_previous",
                            "reference")),
    ("rival", _opt_str, "a strategy name (str) or None"),
    ("isolates", _opt_str, "a strategy name (str) or None"),
    ("groups", lambda x: isinstance(x, tuple) and all(isinstance(g, str) for g in x), "a tuple of group names (str)"),
    ("order", lambda x: isinstance(x, int) and not isinstance(x, bool), "an int"),
    ("plot_style", lambda x: x is None or (isinstance(x, tuple) and len(x) == 2 and isinstance(x[1], str)),
     "None or a (matplotlib linestyle, marker) tuple, e.g. (\"-\", \"o\")"),
    ("calls_per_trial", lambda x: isinstance(x, tuple) and len(x) == 2 and all(_number(v) for v in x),
     "a tuple of two numbers, (calls in the first trial, calls in each later trial), e.g. (2.0, 3.0)"),
)


class Strategy(ABC):
    """One way of making an attempt at a task."""

    traits: ClassVar[Traits]
    # The strategy's own settings and their defaults (`--strategy-option NAME.KEY=VALUE`).
    options: ClassVar[Mapping[str, Any]] = {}
    # The strategy's own prompt templates (name -> sample values `harness run` renders
    # them with before a run starts), kept as <name>.j2 in harness/prompts/ or, for a
    # strategy of another package, in its `template_folder`.
    templates: ClassVar[Mapping[str, Mapping[str, Any]]] = {}
    template_folder: ClassVar[Path | None] = None

    @abstractmethod
    def run_attempt(self, ctx: "AttemptContext", task: "Task", attempt: int,
                    done: Sequence["TrialRecord"]) -> Iterator["TrialRecord"]:
        """Yields each finished trial's record; the caller stores it before asking for
        the next. `done` holds this attempt's records from an interrupted run (sorted by
        trial, never with a final one): continue after the last of them."""

    @classmethod
    def check_options(cls, given: Mapping[str, Any]) -> None:
        """Raises ValueError for settings it cannot run with (checked before a run starts;
        each value already converts to its default's type)."""

    def option(self, ctx: "AttemptContext", key: str) -> Any:
        given = ctx.settings.options(self.traits.name)
        return self.convert_option(key, given[key]) if key in given else self.options[key]

    @classmethod
    def convert_option(cls, key: str, value: Any) -> Any:
        """A given option's value as its default's type; ValueError when it is not one.
        A strategy with bounds on its options overrides this (and calls it)."""
        default = cls.options[key]
        if isinstance(default, bool):
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in ("1", "true", "yes", "on"):
                return True
            if text in ("0", "false", "no", "off"):
                return False
            raise ValueError(f"{cls.traits.name}.{key} must be true or false, got {value!r}")
        if isinstance(default, int) and isinstance(value, float) and not value.is_integer():
            raise ValueError(f"{cls.traits.name}.{key} must be an integer, got {value!r}")
        try:
            return type(default)(value)
        except (TypeError, ValueError):
            raise ValueError(f"{cls.traits.name}.{key} must be {type(default).__name__}, got {value!r}") from None
