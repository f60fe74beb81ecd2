"""MultiPL-E rows from a stranger (harness/tasks/multiple.py): linear parsing, the limits
every loader keeps, every field type-checked, one error naming the file, the row and why."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from harness.tasks import multiple, rows
from harness.tasks.base import TaskError
from harness.tasks.registry import load_tasks

ROW = {"name": "HumanEval_0_add", "language": "rs", "prompt": "fn add(a: i64, b: i64) -> i64 {\n",
       "tests": "fn main() {\n    let candidate = add;\n    assert_eq!(candidate(1, 2), 3);\n}\n",
       "stop_tokens": ["\nfn"]}


def _write(folder: Path, *rows_: object, name: str = "humaneval-rs") -> str:
    (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows_))
    return f"multipl-e:{folder}:{name}"


def _error(spec: str) -> str:
    with pytest.raises(TaskError) as caught:
        load_tasks(spec)
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_good_row_loads(tmp_path):
    [task] = load_tasks(_write(tmp_path, ROW)).tasks
    assert task.entry_point == "add" and task.meta["stop_tokens"] == ["\nfn"]


class _CountingQuote:
    """multiple._QUOTE, counting the characters it scans."""

    def __init__(self) -> None:
        self.scanned = 0
        self.pattern = re.compile(r'(?<!\\)"')

    def findall(self, text: str) -> list[str]:
        self.scanned += len(text)
        return self.pattern.findall(text)


def _unclosed(lines: int) -> str:
    return 'fn main() {\n    let candidate = add;\n    assert_eq!(candidate("x), 1);\n' + "    a();\n" * lines + "}\n"


def test_an_unclosed_quote_keeps_splitting_linear(monkeypatch):
    """Characters scanned grow with the input, not its square: 8x the lines, < 20x the work
    (the quadratic split rescanned every pending line at each new one: ~64x)."""
    scanned = []
    for lines in (2_000, 16_000):
        counter = _CountingQuote()
        monkeypatch.setattr(multiple, "_QUOTE", counter)
        statements = multiple._statements(_unclosed(lines))
        assert len(statements) == 3  # the unclosed quote holds the rest in one statement
        scanned.append(counter.scanned)
    assert scanned[1] < 20 * scanned[0], scanned


def test_a_row_with_an_unclosed_quote_is_left_out_and_named(tmp_path):
    good = dict(ROW, name="HumanEval_1_add")
    task_set = load_tasks(_write(tmp_path, dict(ROW, tests=_unclosed(20_000)), good))
    assert [t.task_id for t in task_set.tasks] == ["multipl-e/humaneval-rs/HumanEval_1_add"]
    assert "1 row(s) left out" in task_set.prompt_form and "HumanEval_0_add" in task_set.prompt_form


@pytest.mark.parametrize("change, words", [
    ({"stop_tokens": 5}, "field 'stop_tokens': expected a list of strings, got an integer"),
    ({"stop_tokens": ["\nfn", 5]}, "field 'stop_tokens': expected a list of strings"),
    ({"entry_point": "add(1); evil(", "tests": "assert_eq!(candidate(1, 2), 3);"}, "field 'entry_point'"),
    ({"entry_point": 5, "tests": "assert_eq!(candidate(1, 2), 3);"}, "field 'entry_point'"),
    ({"name": "HumanEval_0_add(); evil", "tests": "assert_eq!(candidate(1, 2), 3);"}, "field 'name'"),
    ({"name": "HumanEval_0_добавить", "tests": "assert_eq!(candidate(1, 2), 3);"}, "not an identifier"),
    ({"name": 7}, "field 'name': expected a non-empty string, got an integer"),
    ({"prompt": ["fn"]}, "field 'prompt': expected a non-empty string, got a list"),
    ({"tests": {"a": 1}}, "field 'tests': expected the test code as a string, got an object"),
    ({"language": ["rs"]}, "field 'language': expected a string, got a list"),
    ({"language": "cobol"}, "field 'language'"),
])
def test_each_field_is_checked_before_use(tmp_path, change, words):
    message = _error(_write(tmp_path, ROW, dict(ROW, **change)))
    assert words in message and "humaneval-rs.jsonl: row 2" in message, message


def test_a_row_that_is_no_object_or_no_json_is_named(tmp_path):
    assert "row 2: expected an object" in _error(_write(tmp_path, ROW, [1, 2]))
    (tmp_path / "humaneval-rs.jsonl").write_text(json.dumps(ROW) + "\n{not json\n")
    assert "row 2: not valid JSON" in _error(f"multipl-e:{tmp_path}:humaneval-rs")
    (tmp_path / "humaneval-rs.jsonl").write_bytes(json.dumps(ROW).encode() + b"\n\xff\n")
    assert "row 2: not UTF-8 text (byte 0xff" in _error(f"multipl-e:{tmp_path}:humaneval-rs")


def test_the_loader_uses_the_limits_every_loader_keeps(tmp_path, monkeypatch):
    """A row past the limit per row (192 MiB by default; 64 KiB here, so that the test
    writes little) is refused before it is parsed, as a line or in a JSON list, and a file
    past the limit per task set is refused too."""
    assert rows.default_limits().per_row == 192 * rows.MIB
    monkeypatch.setattr(rows, "DEFAULT_LIMITS", rows.Limits(per_field=64 * 1024, per_row=64 * 1024, per_set=256 * 1024))
    big = dict(ROW, name="HumanEval_1_add", prompt="fn add() {\n" + "x" * 70_000)
    message = _error(_write(tmp_path, ROW, big))
    assert "row 2: the line is longer than 65,536 bytes, the limit per row" in message
    (tmp_path / "listed.json").write_text(json.dumps([ROW, big]))
    assert "row 2: larger than 65,536 bytes, the limit per row" in _error(f"multipl-e:{tmp_path}:listed")
    many = [dict(ROW, name=f"HumanEval_{i}_add", prompt="fn add() {\n" + "x" * 30_000) for i in range(10)]
    assert "the limit per task set" in _error(_write(tmp_path, *many))


def test_a_fifo_is_refused_at_once(tmp_path):
    os.mkfifo(tmp_path / "humaneval-rs.jsonl")
    assert "not a regular file" in _error(f"multipl-e:{tmp_path}:humaneval-rs")
