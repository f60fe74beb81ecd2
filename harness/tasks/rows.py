"""Reading one dataset row into a task, with its types checked and its size bounded.

What the contest sources (LiveCodeBench, CodeContests, APPS) and the Hugging Face
adapters share:

- `Limits` and `Budget`: how many bytes a row's test data may take once decoded
  (decompressed, unpickled, read from Parquet): per field, per row, and over the whole
  task set, so that no dataset makes the harness hold more than it says.
- `RowReader`: typed access to a row's fields. Every problem it finds is a `FieldError`
  naming the field (`private_test_cases[3].input`); `build_row` turns it, and any
  other exception raised while the row is built, into the one BadRow naming the file,
  the row and the field.
- `method_name` and `compiled`: a name the hidden tests call must be an identifier
  that is no keyword, and every hidden test the harness writes is compiled (compile()
  of its text only, never run) before the task is accepted.
"""
from __future__ import annotations

import keyword
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence, TypeVar


T = TypeVar("T")
MIB = 1 << 20


def size_text(n: int) -> str:
    return f"{n / MIB:g} MiB" if n >= MIB and n % (MIB // 4) == 0 else f"{n:,} bytes"


@dataclass(frozen=True)
class Limits:
    """Bytes of decoded data a loader accepts: per field (one decompressed column),
    per row (one problem) and per task set. A problem of LiveCodeBench's lite release
    holds a few MiB of tests once decompressed, and whole releases some GiB: the limits
    leave room for those and stop a file made to fill the machine's memory (every
    hidden test is held in memory for the run). `DEFAULT_LIMITS` is what every loader
    uses, read when a load starts."""

    per_field: int = 128 * MIB
    per_row: int = 192 * MIB
    per_set: int = 8192 * MIB

    def describe(self) -> str:
        return (f"{size_text(self.per_field)} per field, {size_text(self.per_row)} per row, "
                f"{size_text(self.per_set)} per task set")


DEFAULT_LIMITS = Limits()


def default_limits() -> Limits:
    return DEFAULT_LIMITS


class FieldError(ValueError):
    """One field of a row is wrong: `field` names it (a path like `inputs[2]`)."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"field {field!r}: {reason}")
        self.field, self.reason = field, reason


class Budget:
    """Counts the decoded bytes of a task set's rows against `limits`.

    `room(field)` is how much the next field may decode to (the least of what its field,
    its row and the set have left); `spend(field, n)` records it, raising FieldError
    when a limit is passed, with the limit named."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or default_limits()
        self.set_used = 0
        self.row_used = 0

    def start_row(self) -> None:
        self.row_used = 0

    def room(self) -> int:
        return max(0, min(self.limits.per_field, self.limits.per_row - self.row_used,
                          self.limits.per_set - self.set_used))

    def over(self, field: str, n: int | None = None) -> FieldError:
        """The error for `field` decoding past what `room()` allowed (n: its size, if known),
        naming the limit it passed."""
        lim = self.limits
        row_left, set_left = lim.per_row - self.row_used, lim.per_set - self.set_used
        size = size_text(n) if n is not None else f"more than {size_text(self.room())}"
        if lim.per_field <= min(row_left, set_left):
            why = f"decodes to {size}, over the limit of {size_text(lim.per_field)} per field"
        elif row_left <= set_left:
            why = (f"decodes to {size}, which takes its row past the limit of {size_text(lim.per_row)} "
                   f"per row ({size_text(self.row_used)} in the row's earlier fields)")
        else:
            why = (f"decodes to {size}, which takes the task set past the limit of {size_text(lim.per_set)} "
                   f"of test data ({size_text(self.set_used)} in earlier rows)")
        return FieldError(field, why + "; the harness holds every hidden test in memory")

    def spend(self, field: str, n: int) -> None:
        if n > self.room():
            raise self.over(field, n)
        self.row_used += n
        self.set_used += n


class RowReader:
    """Typed access to one row (a dict); each getter raises FieldError naming the field.
    `current` names the field being read, for an exception no getter anticipated."""

    def __init__(self, row: Any, budget: Budget | None = None) -> None:
        if not isinstance(row, dict):
            raise FieldError("(row)", f"expected an object, got {kind(row)}")
        self.row = row
        self.budget = budget or Budget()
        self.current: str = "(row)"

    def at(self, field: str) -> "RowReader":
        self.current = field
        return self

    def get(self, name: str, default: Any = None) -> Any:
        self.current = name
        return self.row.get(name, default)

    def require(self, name: str) -> Any:
        self.current = name
        if name not in self.row or self.row[name] is None:
            raise FieldError(name, "missing")
        return self.row[name]

    def text(self, name: str, *, required: bool = False, nonempty: bool = False) -> str | None:
        """A string field; None (or "" unless required) when absent."""
        value = self.require(name) if required else self.get(name)
        if value is None:
            return None
        if not isinstance(value, str):
            raise FieldError(name, f"expected a string, got {kind(value)}")
        if nonempty and not value.strip():
            raise FieldError(name, "empty")
        return value

    def scalar(self, name: str) -> str | int | float | bool | None:
        """A plain value for meta (an id, a rating): a string, a number or null."""
        value = self.get(name)
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise FieldError(name, f"expected a string, a number or null, got {kind(value)}")
        return value


def kind(value: Any) -> str:
    """A JSON value's type as a reader would name it."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean", int: "an integer",
             float: "a number", type(None): "null", tuple: "a list", bytes: "bytes"}
    return names.get(type(value), f"a {type(value).__name__}")


def as_list(value: Any, field: str, *, of: tuple[type, ...] = (), what: str = "") -> list[Any]:
    """`value` if it is a list (each item one of the types `of`, when given; a boolean
    is no integer here), else FieldError."""
    if not isinstance(value, (list, tuple)):
        raise FieldError(field, f"expected a list{' of ' + what if what else ''}, got {kind(value)}")
    if of:
        for i, item in enumerate(value):
            if not isinstance(item, of) or (isinstance(item, bool) and bool not in of):
                raise FieldError(f"{field}[{i}]", f"expected {what or 'another type'}, got {kind(item)}")
    return list(value)


def strings_size(value: Any) -> int:
    """Characters of the strings in a value (lists, tuples and dicts of them, keys too),
    counted without recursion (data may nest deeply)."""
    stack, total = [value], 0
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return total


def method_name(value: Any, field: str) -> str:
    """A name the hidden tests call (`Solution().<name>` or `<name>`): an identifier that
    is no keyword (`class` would make every test a syntax error) and no special method
    (`__init__` names Python's machinery, not the problem's function)."""
    if not isinstance(value, str):
        raise FieldError(field, f"expected the function's name as a string, got {kind(value)}")
    if not value.isidentifier():
        raise FieldError(field, f"{value[:60]!r} is not a Python name")
    if keyword.iskeyword(value):
        raise FieldError(field, f"{value!r} is a Python keyword, not a name a test can call")
    if value.startswith("__") and value.endswith("__"):
        raise FieldError(field, f"{value!r} is a special method's name, not the problem's function")
    return value


def compile_problem(test: str) -> str | None:
    """None when `test` compiles (compile() of the text only; nothing runs), else why not."""
    try:
        compile(test, "<hidden test>", "exec", dont_inherit=True)
    except SyntaxError as exc:
        return exc.msg + (f" (line {exc.lineno})" if exc.lineno else "")
    except (RecursionError, MemoryError):
        return "nested too deeply to compile"
    except ValueError as exc:  # a NUL byte, a lone surrogate
        return str(exc).split(":")[0]
    return None


def compiled(tests: Sequence[str], field: str) -> tuple[str, ...]:
    """`tests` if each compiles, else FieldError naming the field the test was made from
    (`field`, or `field[i]` when there are several)."""
    for i, test in enumerate(tests):
        if (why := compile_problem(test)) is not None:
            name = field if len(tests) == 1 else f"{field}[{i}]"
            raise FieldError(name, f"the hidden test made from it does not compile: {why}")
    return tuple(tests)


def build_row(build: Callable[[RowReader], T], row: Any, budget: Budget, where: Callable[[str], Exception]) -> T:
    """`build(reader)`, with every problem turned into `where(reason)` (a BadRow naming the
    file and the row): a FieldError with its field, any other exception with the field the
    reader was at. Nothing a row holds ends in a traceback."""
    budget.start_row()
    reader: RowReader | None = None
    try:
        reader = RowReader(row, budget)
        return build(reader)
    except FieldError as exc:
        raise where(str(exc)) from None
    except RecursionError:
        field = reader.current if reader is not None else "(row)"
        raise where(f"field {field!r}: nested too deeply to read") from None
    except MemoryError:
        field = reader.current if reader is not None else "(row)"
        raise where(f"field {field!r}: too large to hold in memory") from None
    except Exception as exc:  # noqa: BLE001 - a row's data, whatever it holds, is one clear error
        field = reader.current if reader is not None else "(row)"
        detail = " ".join(str(exc).split())[:200]
        reason = detail if type(exc) is ValueError else f"unreadable ({type(exc).__name__}: {detail})"
        raise where(f"field {field!r}: {reason}") from None


def each(values: Iterable[T], field: str, reader: RowReader) -> Iterable[tuple[str, T]]:
    """(`field[i]`, item) for each item, with the reader's current field kept up to date."""
    for i, value in enumerate(values):
        name = f"{field}[{i}]"
        reader.current = name
        yield name, value
