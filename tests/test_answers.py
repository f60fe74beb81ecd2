"""Answer types (harness/kinds/answers.py): each reads back from its record exactly, and a
record that is not one is one clear error naming the field."""
from __future__ import annotations

import pytest

from harness.kinds.answers import AnswerError, Files, Patch, Program, answer_from_record, answer_types

DIFF = ("diff --git a/pkg/core.py b/pkg/core.py\n--- a/pkg/core.py\n+++ b/pkg/core.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
        "diff --git a/tests/test_mine.py b/tests/test_mine.py\nnew file mode 100644\n--- /dev/null\n"
        "+++ b/tests/test_mine.py\n@@ -0,0 +1 @@\n+assert True\n")


@pytest.mark.parametrize("answer", [
    Program("def f():\n    return 1\n"), Program("fn main() {}", language="rust"),
    Files((("src/lib.rs", "pub fn f() {}"), ("src/extra.rs", ""))),
    Patch(DIFF, excluded=("tests/test_mine.py",)),
])
def test_an_answer_reads_back_from_its_record(answer):
    assert answer_from_record(answer.as_record()) == answer
    assert answer.text() and not answer.empty()


def test_what_an_answer_touches():
    assert Patch(DIFF).paths() == ("pkg/core.py", "tests/test_mine.py")
    assert Files((("a.go", "x"),)).paths() == ("a.go",) and Program("x").paths() == ()
    assert set(answer_types()) >= {"program", "files", "patch"}


@pytest.mark.parametrize("data, field", [
    ("x", "answer"), ({"type": "tarball"}, "unknown answer type 'tarball'"), ({"type": "patch"}, "answer.diff"),
    ({"type": "patch", "diff": "", "excluded": [1]}, "answer.excluded"), ({"type": "files", "files": [["a"]]}, "answer.files"),
    ({"type": "program", "code": 5, "language": "python"}, "answer.code"),
])
def test_a_bad_record_is_one_error_naming_the_field(data, field):
    with pytest.raises(AnswerError, match=field.replace(".", r"\.")):
        answer_from_record(data)
