"""Task files written by an adversary: every bad row is one TaskError naming the file,
the row and the reason (never a traceback, never a silent skip), and no text the
harness could not store, print or link gets into a task set."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.tasks import TaskError, load_tasks
from tests.tasks.test_task_contest import compressed, lcb_row, write_jsonl
from tests.tasks.test_task_files import task, write

GOOD = json.dumps(task("ok/1"))


def _line(record: dict) -> str:
    return json.dumps(record)


# (name, line of the file as written, field named or None, reason)
HOSTILE_LINES = [
    ("deep-json", '{"task_id": "t", "meta": ' + "[" * 100_000 + "]" * 100_000 + "}", None, "nested too deeply"),
    ("huge-int", _line(task())[:-1] + ', "timeout_s": 1' + "0" * 5000 + "}", None, "integer string conversion"),
    ("duplicate-key", _line(task())[:-1] + ', "task_id": "t/other"}', None, "'task_id' appears twice"),
    ("test-parse-bomb", _line(task(tests=["assert " + "-" * 5000 + "1"])), "tests[0]", "nested too deeply"),
    ("solution-parse-bomb", _line(task(canonical_solution="def inc(x):\n    return " + "-" * 5000 + "x\n")),
     "canonical_solution", "nested too deeply"),
    ("test-lone-surrogate", _line(task(tests=["assert inc(1) == 2  # \udc80"])), "tests[0]", "lone surrogate"),
    ("prompt-lone-surrogate", _line(task(prompt="def inc(x):\n    '\ud800'\n")), "prompt", "lone surrogate"),
    ("meta-lone-surrogate", _line(task(meta={"note": ["\ud800"]})), "meta", "lone surrogate"),
    ("prompt-nul", _line(task(prompt="def inc(x):\x00\n")), "prompt", "NUL"),
    ("id-ansi", _line(task("t/\x1b]0;owned\x07\x1b[2J")), "task_id", "unprintable character '\\x1b'"),
    ("id-newline", _line(task("t/1\nt/2")), "task_id", "unprintable character '\\n'"),
    ("id-bidi", _line(task("t/\u202eevil")), "task_id", "unprintable character '\\u202e'"),
    ("id-surrogate", _line(task("t/\ud800")), "task_id", "unprintable character '\\ud800'"),
    ("id-dotdot", _line(task("../../etc/passwd")), "task_id", "'..' path part"),
    ("id-dot", _line(task("a/./b")), "task_id", "'..' path part"),
    ("id-trailing-slash", _line(task("codecontests/")), "task_id", "empty path part"),
    ("id-double-slash", _line(task("a//b")), "task_id", "empty path part"),
    ("id-too-long", _line(task("t/" + "a" * 300)), "task_id", "at most 200"),
    ("id-spaces", _line(task(" t/1")), "task_id", "white space"),
    ("tag-ansi", _line(task(tags=["\x1b[31mred"])), "tags[0]", "unprintable character '\\x1b'"),
]


@pytest.mark.parametrize("line, field, why", [c[1:] for c in HOSTILE_LINES], ids=[c[0] for c in HOSTILE_LINES])
def test_a_hostile_line_is_one_error_naming_file_line_and_reason(tmp_path, line, field, why):
    path = tmp_path / "bad.jsonl"
    path.write_text(GOOD + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(TaskError) as info:
        load_tasks(str(path))
    message = str(info.value)
    where = f"{path}:2: field {field!r}: " if field else f"{path}:2: "
    assert message.startswith(where), message
    assert why in message, message
    assert "\x1b" not in message and "\n" not in message  # the error itself prints safely
    message.encode("utf-8")  # and holds no lone surrogate


def test_bytes_that_are_not_utf8_name_their_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(GOOD.encode() + b"\n" + GOOD.encode() + b"\n" + b'{"task_id": "\xff\xfe"}\n')
    with pytest.raises(TaskError, match=r"bad.jsonl:3: not UTF-8 text \(byte 0xff"):
        load_tasks(str(path))


def test_a_byte_order_mark_and_crlf_endings_are_read(tmp_path):
    path = tmp_path / "windows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD.encode() + b"\r\n" + json.dumps(task("ok/2")).encode() + b"\r\n")
    assert [t.task_id for t in load_tasks(str(path)).tasks] == ["ok/1", "ok/2"]


def test_a_line_separator_inside_a_string_does_not_split_the_line(tmp_path):
    # U+2028 may stand raw inside a JSON string; it is no line break of the file.
    path = write(tmp_path / "u2028.jsonl", json.dumps(task(prompt="def inc(x):\n    '''one\u2028two'''\n"), ensure_ascii=False))
    assert "\u2028" in load_tasks(str(path)).tasks[0].prompt


def test_ordinary_ids_still_load(tmp_path):
    ids = ["HumanEval/0", "Mbpp/11", "lcb/abc300_a", "codecontests/1548_E. Gregor", "mine/clamp v2", "日本/1", "a" * 200]
    path = write(tmp_path / "ok.jsonl", *(task(i) for i in ids))
    assert [t.task_id for t in load_tasks(str(path)).tasks] == ids


# ------------------------------------------------------------------ contest sources


@pytest.fixture
def lcb_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "code_generation_lite"
    folder.mkdir()
    return folder


def _lcb_error(folder: Path, rows: list[dict] | None = None, raw: bytes | None = None) -> str:
    if raw is not None:
        (folder / "test.jsonl").write_bytes(raw)
    else:
        write_jsonl(folder / "test.jsonl", rows or [])
    with pytest.raises(TaskError) as info:
        load_tasks(f"livecodebench:{folder}")
    return str(info.value)


def test_lcb_private_tests_nested_too_deeply_are_a_bad_row(lcb_folder):
    import base64
    import pickle
    import zlib

    deep = base64.b64encode(zlib.compress(pickle.dumps("[" * 200_000 + "]" * 200_000))).decode()
    message = _lcb_error(lcb_folder, [lcb_row("a", "2024-01-01"), lcb_row("b", "2024-01-02", private=deep)])
    assert message.startswith(f"{lcb_folder / 'test.jsonl'}: row 2: field 'private_test_cases': ") and "nested too deeply" in message


def test_lcb_row_nested_too_deeply_or_not_utf8_is_a_bad_row(lcb_folder):
    good = json.dumps(lcb_row("a", "2024-01-01")).encode() + b"\n"
    message = _lcb_error(lcb_folder, raw=good + b'{"question_id": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    assert message.startswith(f"{lcb_folder / 'test.jsonl'}: row 2: ") and "nested too deeply" in message
    message = _lcb_error(lcb_folder, raw=good + good.replace(b'"a"', b'"\xc3("'))
    assert message.startswith(f"{lcb_folder / 'test.jsonl'}: row 2: not UTF-8 text"), message


def test_lcb_metadata_that_is_not_an_object_is_a_bad_row(lcb_folder):
    row = lcb_row("f", "2024-01-01", functional=True, metadata="[1, 2]")
    message = _lcb_error(lcb_folder, [row])
    assert message.startswith(f"{lcb_folder / 'test.jsonl'}: row 1: field 'metadata': expected a JSON object"), message


def test_lcb_hostile_question_id_is_a_bad_row(lcb_folder):
    message = _lcb_error(lcb_folder, [lcb_row("x\x1b[2Jy", "2024-01-01")])
    assert message.startswith(f"{lcb_folder / 'test.jsonl'}: row 1: field 'task_id': holds the unprintable"), message
    message = _lcb_error(lcb_folder, [lcb_row("../../x", "2024-01-01")])
    assert "row 1: field 'task_id': has a '.' or '..' path part" in message


def test_lcb_functional_strings_that_spell_nan_or_inf_are_kept(lcb_folder):
    # "banana" and "info" hold "nan" and "inf": plain strings, not the float values.
    row = lcb_row("s", "2024-01-01", functional=True,
                  public_test_cases=json.dumps([{"input": '"banana"\n"info"', "output": '"nan"', "testtype": "functional"}]),
                  private_test_cases=compressed([{"input": '"x"\n"y"', "output": '"inf"', "testtype": "functional"}]))
    write_jsonl(lcb_folder / "test.jsonl", [row])
    [loaded] = load_tasks(f"livecodebench:{lcb_folder}").tasks
    assert "Solution().addUp('banana', 'info')" in loaded.hidden_tests[0]
    # A real NaN still cannot be written as a Python literal: a bad row.
    row["public_test_cases"] = json.dumps([{"input": "NaN", "output": "1", "testtype": "functional"}])
    message = _lcb_error(lcb_folder, [row])
    assert "row 1: field 'public_test_cases[0]': a value Python cannot write as a literal" in message, message


# ------------------------------------------------------------------ hf: rows


def test_hf_rows_with_unprintable_ids_or_unparseable_tests_name_their_row(tmp_path):
    from tests.tasks.test_task_hf import HUMANEVAL_ROW

    rows = [HUMANEVAL_ROW, {**HUMANEVAL_ROW, "task_id": "HumanEval/1", "test": "def check(candidate):\x00\n"},
            {**HUMANEVAL_ROW, "task_id": "HumanEval/\x1b[2J"}]
    path = tmp_path / "he.jsonl"
    write_jsonl(path, rows)
    with pytest.raises(TaskError) as info:
        load_tasks(f"hf:{path}")
    message = str(info.value)
    # Row 1's NUL would fail every answer: its test does not compile, so the row is refused.
    assert message.startswith(f"{path} row 1: field 'test': the hidden test made from it does not compile: "
                              "source code string cannot contain null bytes"), message
    write_jsonl(path, [rows[0], rows[2]])
    with pytest.raises(TaskError) as info:
        load_tasks(f"hf:{path}")
    message = str(info.value)
    assert message.startswith(f"{path} row 1: field 'task_id': holds the unprintable character '\\x1b'"), message


class _FakeDatasets:
    """Stands in for the `datasets` package: records every load_dataset call."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def load_dataset(self, path, **kwargs):
        self.calls.append((path, kwargs))
        raise ValueError("the fake has no data")


@pytest.fixture
def fake_datasets(monkeypatch) -> _FakeDatasets:
    import sys

    fake = _FakeDatasets()
    monkeypatch.setitem(sys.modules, "datasets", fake)
    return fake


@pytest.mark.parametrize("name", ["pandas", "webdataset", "json", "arrow"])
def test_hf_refuses_datasets_own_file_readers_as_a_dataset_id(tmp_path, monkeypatch, fake_datasets, name):
    monkeypatch.chdir(tmp_path)  # `hf:pandas` would read the working folder's files
    with pytest.raises(TaskError, match=f"hf:{name}: '{name}' is one of datasets' file readers, not a dataset"):
        load_tasks(f"hf:{name}")
    assert fake_datasets.calls == []


def test_hf_never_lets_a_dataset_run_its_loading_script(tmp_path, fake_datasets):
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "evil.py").write_text("import os; os.system('touch /tmp/pwned-by-a-loading-script')\n")
    (folder / "data.jsonl").write_text("{}\n")
    with pytest.raises(TaskError, match=r"the folder holds a Python file \(evil.py\); a dataset loading script is code"):
        load_tasks(f"hf:{folder}")
    assert fake_datasets.calls == []
    with pytest.raises(TaskError):
        load_tasks("hf:someone/some-dataset:test")
    assert [kwargs.get("trust_remote_code") for _, kwargs in fake_datasets.calls] == [False]


# ------------------------------------------------------------------ the terminal


def test_tasks_show_prints_a_dataset_s_escape_sequences_as_text(tmp_path, capsys):
    from harness.cli import main

    record = task("t/1", prompt="def inc(x):\n    \"\"\"\x1b]0;owned\x07\x1b[2JAdd one.\"\"\"\n",
                  tests=["assert inc(1) == 2, '\x1b[31mred'"], tags=["easy"],
                  canonical_solution="def inc(x):\n    return x + 1  # \x9b2J\n")
    path = write(tmp_path / "t.jsonl", record)
    assert main(["tasks", "show", str(path), "t/1"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\x9b" not in out
    assert "\\x1b]0;owned\\x07\\x1b[2JAdd one." in out and "\\x1b[31mred" in out and "\\x9b2J" in out
    assert main(["tasks", "list", str(path)]) == 0
    assert "\x1b" not in capsys.readouterr().out


def test_a_usage_error_quoting_data_prints_its_escapes_as_text(tmp_path):
    from tests.helpers import run_harness

    done = run_harness("tasks", "list", str(tmp_path / "a\x1b[2Jb.jsonl"))
    assert done.returncode == 2 and "\x1b" not in done.stderr and "a\\x1b[2Jb.jsonl" in done.stderr, done.stderr


# ------------------------------------------------------------------ ids of the wrong type


@pytest.mark.parametrize("value, shown", [(None, "missing"), (["x"], "a list"), (1.5, "a float"), (True, "a bool")])
def test_a_row_id_of_the_wrong_type_is_a_bad_row_not_a_task_named_none(tmp_path, value, shown):
    from tests.tasks.test_task_contest import apps_row
    from tests.tasks.test_task_hf import HUMANEVAL_ROW, MBPP_FULL_ROW

    he = tmp_path / "he.jsonl"
    write_jsonl(he, [{**HUMANEVAL_ROW, "task_id": value}])
    with pytest.raises(TaskError, match=rf"he.jsonl row 0: field 'task_id': expected a non-empty string or an integer, got {shown}"):
        load_tasks(f"hf:{he}")
    mbpp = tmp_path / "mbpp.jsonl"
    write_jsonl(mbpp, [{**MBPP_FULL_ROW, "task_id": value}])
    with pytest.raises(TaskError, match=rf"mbpp.jsonl row 0: field 'task_id': .* got {shown}"):
        load_tasks(f"hf:{mbpp}")
    lcb = tmp_path / "lcb"
    lcb.mkdir()
    write_jsonl(lcb / "test.jsonl", [lcb_row("a", "2024-01-01", question_id=value)])
    with pytest.raises(TaskError, match=rf"test.jsonl: row 1: field 'question_id': .* got {shown}"):
        load_tasks(f"livecodebench:{lcb}")
    apps = tmp_path / "apps"
    apps.mkdir()
    write_jsonl(apps / "test.jsonl", [{**apps_row(1, {"inputs": ["1 2\n"], "outputs": ["3\n"]}), "problem_id": value}])
    with pytest.raises(TaskError, match=rf"test.jsonl: row 1: field 'problem_id': .* got {shown}"):
        load_tasks(f"apps:{apps}")


def test_an_mbpp_test_list_that_is_no_list_is_a_bad_row(tmp_path):
    from tests.tasks.test_task_hf import MBPP_FULL_ROW

    path = tmp_path / "mbpp.jsonl"
    write_jsonl(path, [{**MBPP_FULL_ROW, "test_list": 5}])
    with pytest.raises(TaskError, match="mbpp.jsonl row 0: field 'test_list': expected a list of strings"):
        load_tasks(f"hf:{path}")
