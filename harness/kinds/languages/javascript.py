"""JavaScript (node 18 in the sandbox's JavaScript image), a CommonJS script."""
import json
import re

from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import ExerciseLayout


# Exercism's layout (harness/kinds/languages/runner.py): how its test files name their tests.
_JS_TOKEN = re.compile(r"""//[^\n]*|/\*.*?\*/|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`|[{}()]|"""
                       r"""\b(describe|xdescribe|fdescribe|test|it|xtest|xit|fit)(?:\.(?:skip|only))?\s*\(\s*""",
                       re.DOTALL)


def _javascript(text: str) -> list[str]:
    """jest's full test names: the enclosing describes' names and the test's, joined by a
    space; the names must be plain string literals."""
    names: list[str] = []
    stack: list[tuple[str, int]] = []  # (describe name, depth its body opened at)
    depth = 0
    pending: str | None = None  # the call just seen, waiting for its name
    for m in _JS_TOKEN.finditer(text):
        token = m.group(0)
        if m.group(1):
            pending = m.group(1)
            literal = re.match(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`[^`$\\]*`""", text[m.end():])
            if literal is None:
                pending = None
                depth += 1
                continue
            name = _js_string(literal.group(0))
            depth += 1  # the call's own parenthesis, which the token took
            if pending.endswith("describe"):
                stack.append((name, depth))
            else:
                names.append(" ".join([*(n for n, _ in stack), name]))
            pending = None
            continue
        if token in "({":
            depth += 1
        elif token in ")}":
            depth -= 1
            while stack and depth < stack[-1][1]:
                stack.pop()
    return names


def _js_string(literal: str) -> str:
    body = literal[1:-1]
    if literal[0] == "'":
        body = body.replace('\\"', '"').replace('"', '\\"').replace("\\'", "'")
    if literal[0] == "`":
        body = body.replace('"', '\\"')
    try:
        return json.loads('"' + body + '"', strict=False)
    except ValueError:
        return body


def _js_module(files: dict[str, str], program_path: str) -> dict[str, str]:
    return {"module": program_path[:-3] if program_path.endswith(".js") else program_path}


JAVASCRIPT_EXERCISE = ExerciseLayout(_javascript, (".js",), naming=_js_module, test_data=("*.spec.js", "*.test.js"))


JAVASCRIPT = Language(name="javascript", display="JavaScript", fences=("javascript", "js", "node", "jsx"),
                      assert_form="assert.deepStrictEqual(f(...), ...);", extension="js", exercise=JAVASCRIPT_EXERCISE, aliases=("js", "node"))
