"""How a test's asserts are rewritten, shared by both sides: the host prepares each test
once (`prepare`, text that T compiles as it is), T rewrites a test the host could not
prepare (the syntax tree transforms below, the same ones).

Not blind (the agent's own gradings): `assert L op R` becomes
`assert __sandbox_observed__((line, col), L) op R`, so that a failed assert shows the
value the test observed and nothing is evaluated twice. Blind (hidden grading): every
assert statement becomes a call that records its outcome and lets the test go on,
`__sandbox_compare__((line, col), op, L, R)` for a single comparison and
`__sandbox_check__((line, col), X)` for any other (its message is never evaluated),
inside `with __sandbox_soft__[(line, col)]:`, which records an exception its operands
raise (`abs(answer - 0.5)` of an answer of the wrong type) as the assert's outcome and
lets the test go on too. (line, col) is the assert's position in the test as written.

Why the host prepares the text: rewriting a syntax tree in T, a process forked for the
job, cost ~0.5 ms of CPU and ~110 page faults a job more than compiling text (Python's
syntax-tree objects and the conversion back); on the host, where a test graded again
(every trial grades the hidden tests) is prepared once, it costs T nothing. The text is
made by splicing the test at the positions the parser gives, and is used only if its
syntax tree is the tree transform's, node for node: otherwise T rewrites the tree
itself, as before. Standard library only; it imports nothing of the worker's but
`protocol`'s constants.
"""
from __future__ import annotations

import ast

from .protocol import TEST_FILE

OBSERVER = "__sandbox_observed__"  # a dunder name: never asked of the program
COMPARE = "__sandbox_compare__"  # blind: `assert L op R`, recorded
CHECK = "__sandbox_check__"  # blind: any other assert, evaluated when met and recorded
SOFT = "__sandbox_soft__"  # blind: `with SOFT[key]:` around each: an exception is recorded

# The operators of `assert L op R`, by the index the rewritten call passes.
OPERATOR_NODES = (ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot)

# An assert's place in the test as written, for its failure detail, keyed by where it
# starts, (line, col): (end_line, end_col, constant message or None).
AssertTable = dict[tuple[int, int], tuple[int, int, "str | None"]]


class BlindTable(dict):
    """A blind test's AssertTable, and `guarded`: the lines (first, last) of each `try` and
    `with` statement of the test. An exception an assert's operands raise is recorded
    (and the test goes on) only where nothing of the test could catch it: not while any
    frame of the test stands on a guarded line, whose `except` (or context manager, such
    as `pytest.raises`) expects it as before."""

    guarded: tuple[tuple[int, int], ...] = ()


def bodies(tree: ast.Module):
    """Every list of statements (a module's, a function's, a loop's, a handler's...)."""
    stack = [tree.body]
    while stack:
        body = stack.pop()
        yield body
        for node in body:
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if type(inner) is list:
                    stack.append(inner)
            for field in ("handlers", "cases"):  # except clauses, match cases: their bodies
                for part in getattr(node, field, None) or ():
                    stack.append(part.body)


def statements(body: list):
    """Every statement, nested ones included (an assert is a statement: no need to walk
    the expressions, which is most of a test's tree)."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, field, None)
            if type(inner) is list:
                stack.extend(inner)


def single_comparison(node: ast.stmt) -> bool:
    """Whether `node` is `assert L op R`: the asserts whose left side is observed."""
    return type(node) is ast.Assert and type(node.test) is ast.Compare and len(node.test.ops) == 1


def _key(node: ast.stmt) -> ast.Tuple:
    return ast.Tuple([ast.Constant(node.lineno), ast.Constant(node.col_offset)], ast.Load())


def observe_asserts(tree: ast.Module) -> bool:
    """In place: each single comparison's left side observed; whether any was."""
    rewritten = False
    for node in statements(tree.body):
        if single_comparison(node):
            left = node.test.left
            key = _key(node)
            call = ast.Call(ast.Name(OBSERVER, ast.Load()), [key, left], [])
            for made in (call, call.func, key, *key.elts):
                ast.copy_location(made, left)
                made.end_lineno, made.end_col_offset = left.end_lineno, left.end_col_offset
            node.test.left = call
            rewritten = True
    return rewritten


_GUARDS = tuple(getattr(ast, name) for name in ("Try", "TryStar", "With", "AsyncWith") if hasattr(ast, name))


def soften_asserts(tree: ast.Module) -> BlindTable:
    """In place: every assert statement made a recording call; the asserts' table, with
    the guarded lines (of the test's own statements: the `with` blocks made here stand
    where asserts were, whose list has been read by then)."""
    table = BlindTable()
    guarded: set[tuple[int, int]] = set()
    for body in bodies(tree):
        for index, node in enumerate(body):
            if type(node) is ast.Assert:
                table[(node.lineno, node.col_offset)] = _place(node)
                body[index] = _soft(node)
            elif isinstance(node, _GUARDS):
                guarded.add((node.lineno, node.end_lineno or node.lineno))
    table.guarded = tuple(sorted(guarded))
    return table


def _place(node: ast.Assert) -> tuple[int, int, str | None]:
    """A constant message shows in the detail (it could not ask the program anything)."""
    message = str(node.msg.value) if type(node.msg) is ast.Constant else None
    return (node.end_lineno or node.lineno, node.end_col_offset or 0, message)


def _soft(node: ast.Assert) -> ast.stmt:
    """`assert L op R` -> `with SOFT[key]: COMPARE(key, op, L, R)`; `assert X` ->
    `with SOFT[key]: CHECK(key, X)`: the operands evaluated as written, in the same
    order; an exception they raise is the assert's outcome, and the test goes on."""
    test = node.test
    key = _key(node)
    head: list[ast.expr] = [key]
    if single_comparison(node):
        head.append(ast.Constant(OPERATOR_NODES.index(type(test.ops[0]))))
        name, operands = COMPARE, [test.left, test.comparators[0]]
    else:
        name, operands = CHECK, [test]
    call = ast.Call(ast.Name(name, ast.Load()), [*head, *operands], [])
    statement = ast.Expr(call)
    soft_key = _key(node)
    soft = ast.Subscript(ast.Name(SOFT, ast.Load()), soft_key, ast.Load())
    item = ast.withitem(soft)
    block = ast.With([item], [statement])
    for new in (statement, call, call.func, *head, *key.elts, block, soft, soft.value, soft_key, *soft_key.elts):
        ast.copy_location(new, node)
    return block


# --- the host's text ------------------------------------------------------------------


def prepare(source: str, blind: bool) -> dict | None:
    """The test as text T compiles as it is: {"source": text, "asserts": table as lists
    (blind only)}; None when the splice cannot be shown to be the tree transform (the
    test does not parse, say, or, blind, an assert follows another statement on its line,
    where no `with` can stand): T then rewrites the tree itself."""
    text = source.replace("\r\n", "\n").replace("\r", "\n")  # the lines the parser counts
    try:
        tree = ast.parse(text, TEST_FILE)
        edits = _soft_edits(tree) if blind else _observe_edits(tree)  # read before the transform
        table = soften_asserts(tree) if blind else observe_asserts(tree)
        spliced = _splice(text, edits)
        if ast.dump(ast.parse(spliced, TEST_FILE)) != ast.dump(tree):
            return None
    except (SyntaxError, ValueError, RecursionError, MemoryError, UnicodeError, IndexError):
        return None
    prepared: dict = {"source": spliced}
    if blind:
        prepared["asserts"] = [[*key, *place] for key, place in table.items()]
        prepared["guarded"] = [list(lines) for lines in table.guarded]
    return prepared


Edit = tuple[int, int, int, int, str]  # from (line, col) to (line, col), by this text


def _observe_edits(tree: ast.Module) -> list[Edit]:
    edits: list[Edit] = []
    for node in statements(tree.body):
        if single_comparison(node):
            left = node.test.left
            edits.append((left.lineno, left.col_offset, left.lineno, left.col_offset,
                          f"{OBSERVER}(({node.lineno}, {node.col_offset}), "))
            edits.append((left.end_lineno, left.end_col_offset, left.end_lineno, left.end_col_offset, ")"))
    return edits


def _soft_edits(tree: ast.Module) -> list[Edit]:
    """Everything of the statement but its operands is replaced: `assert ` (and what opens
    before the first operand) by the call's head, what stands between the operands (the
    operator, parentheses, comments) by a comma, the rest (closing parentheses, the
    message) by the closing one. Line breaks are kept: every line stays where it was."""
    edits: list[Edit] = []
    for body in bodies(tree):
        for node in body:
            if type(node) is not ast.Assert:
                continue
            key = f"({node.lineno}, {node.col_offset})"
            if single_comparison(node):
                op = OPERATOR_NODES.index(type(node.test.ops[0]))
                operands = [node.test.left, node.test.comparators[0]]
                head = f"with {SOFT}[{key}]: {COMPARE}({key}, {op}, "
            else:
                operands = [node.test]
                head = f"with {SOFT}[{key}]: {CHECK}({key}, "
            edits.append((node.lineno, node.col_offset, operands[0].lineno, operands[0].col_offset, head))
            for before, after in zip(operands, operands[1:]):
                edits.append((before.end_lineno, before.end_col_offset, after.lineno, after.col_offset, ", "))
            last = operands[-1]
            edits.append((last.end_lineno, last.end_col_offset, node.end_lineno, node.end_col_offset, ")"))
    return edits


def _splice(text: str, edits: list[Edit]) -> str:
    """`text` with each edit's span replaced by its text and the span's line breaks.
    Positions are the parser's: lines from 1, columns in UTF-8 bytes."""
    data = text.encode()
    starts = [0]
    for line in data.split(b"\n"):
        starts.append(starts[-1] + len(line) + 1)

    def offset(line: int, col: int) -> int:
        return starts[line - 1] + col

    pieces: list[bytes] = []
    done = 0
    for first_line, first_col, last_line, last_col, new in sorted(edits):
        start, end = offset(first_line, first_col), offset(last_line, last_col)
        if start < done or end < start:
            raise ValueError("overlapping edits")
        pieces.append(data[done:start])
        pieces.append(new.encode() + b"\n" * data.count(b"\n", start, end))
        done = end
    pieces.append(data[done:])
    return b"".join(pieces).decode()
