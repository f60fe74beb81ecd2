"""Dataset files written by a hostile dataset author, for every contest source and the
Hugging Face adapters: nothing a row holds ends in a traceback, allocates more than the
loaders' limits, or loads as a task whose hidden tests cannot run. Every bad row is one
TaskError naming the file, the row and the field."""
from __future__ import annotations

import base64
import json
import math
import os
import pickle
import random
import subprocess
import sys
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest

from harness.tasks import TaskError, load_tasks
from harness.tasks import rows as rows_module
from harness.tasks.rows import MIB, Limits
from harness.tasks.safe_pickle import TooLarge, UnsafePickle, decode_compressed, decompress, unpickle_string
from tests.helpers import harness_env
from tests.tasks.test_task_contest import apps_row, cc_row, compressed, lcb_row, write_jsonl, write_parquet


def _b64z(data: bytes) -> str:
    return base64.b64encode(zlib.compress(data)).decode()


def _lcb_folder(tmp_path: Path, rows: list[dict]) -> Path:
    folder = tmp_path / "lcb"
    folder.mkdir(exist_ok=True)
    write_jsonl(folder / "test.jsonl", rows)
    return folder


def _error(spec: str) -> str:
    with pytest.raises(TaskError) as info:
        load_tasks(spec)
    message = str(info.value)
    assert "\n" not in message and "Traceback" not in message
    return message


def _row_error(spec: str, file: Path, row: int, field: str) -> str:
    message = _error(spec)
    assert message.startswith(f"{file}: row {row}: field {field!r}: "), message
    return message


@pytest.fixture
def small_limits(monkeypatch) -> Limits:
    limits = Limits(per_field=1 * MIB, per_row=int(1.5 * MIB), per_set=3 * MIB)
    monkeypatch.setattr(rows_module, "DEFAULT_LIMITS", limits)
    return limits


# ------------------------------------------------------------------ the pickle parser


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_the_parser_reads_a_pickled_string_of_every_protocol(protocol):
    for value in ["", "[]", 'h\u00e9llo\n\\ "q" \u2028 \U0001f600', "x" * 200_000, json.dumps([{"input": "1\n"}])]:
        assert unpickle_string(pickle.dumps(value, protocol=protocol)) == value


def test_a_16_byte_pickle_asking_for_a_huge_memo_slot_allocates_nothing(tmp_path):
    # LONG_BINPUT 0x0fffffff: the C unpickler sizes its memo to the slot before any check
    # (2**28 pointers: 2 GiB allocated and zeroed). The parser keeps no memo at all.
    bomb = b"\x80\x04\x8c\x06abcdefr\xff\xff\xff\x0f."
    assert len(bomb) == 16
    tracemalloc.start()
    try:
        with pytest.raises(UnsafePickle, match="memo slot other than 0"):
            unpickle_string(bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 * MIB, peak
    folder = _lcb_folder(tmp_path, [lcb_row("a", "2024-01-01", private=_b64z(bomb))])
    message = _row_error(f"livecodebench:{folder}", folder / "test.jsonl", 1, "private_test_cases")
    assert "memo slot other than 0" in message


class _Reduce:
    def __reduce__(self):
        return (os.system, ("touch /tmp/pwned-by-a-dataset-pickle",))


_STR = "[]".encode()
HOSTILE_PICKLES = [
    ("global-protocol-0", b"cos\nsystem\n(S'true'\ntR.", "names os.system"),
    ("reduce-protocol-4", pickle.dumps(_Reduce(), protocol=4), "names posix.system"),
    ("reduce-protocol-0", pickle.dumps(_Reduce(), protocol=0), "names posix.system"),
    ("persistent-id", b"\x80\x04P0\n.", "starts with PERSID"),
    ("string-then-reduce", b"\x80\x04\x8c\x02[]\x94\x85R.", "goes on with TUPLE1"),
    ("memo-slot-5", b"\x80\x04\x8c\x02[]q\x05.", "memo slot other than 0"),
    ("put-huge-slot", b"V[]\np99999999999\n.", "memo slot other than 0"),
    ("trailing-bytes", pickle.dumps("[]") + b"junk", "bytes follow the pickle's STOP"),
    ("no-stop", pickle.dumps("[]", protocol=2)[:-1], "truncated pickle"),
    ("no-stop-in-a-frame", pickle.dumps("[]", protocol=4)[:-1], "FRAME of 6 bytes, but 5 are left"),
    ("length-past-the-end", b"\x80\x04\x8d" + (2**60).to_bytes(8, "little") + b"[]\x94.", "truncated pickle"),
    ("frame-past-the-end", b"\x80\x04\x95" + (2**40).to_bytes(8, "little") + b"\x8c\x02[]\x94.", "FRAME of"),
    ("protocol-9", b"\x80\x09\x8c\x02[]\x94.", "protocol 9"),
    ("not-utf8", b"\x80\x04\x8c\x02\xff\xfe\x94.", "not valid text"),
    ("a-tuple-of-strings", pickle.dumps(("[]", "[]")), "goes on with"),
    ("bytes", pickle.dumps(b"[]"), "starts with SHORT_BINBYTES"),
    ("empty", b"", "truncated pickle"),
    ("a-list", pickle.dumps(["[]"]), "starts with EMPTY_LIST"),
]


@pytest.mark.parametrize("data, why", [c[1:] for c in HOSTILE_PICKLES], ids=[c[0] for c in HOSTILE_PICKLES])
def test_a_hostile_pickle_is_refused_by_the_parser(data, why):
    with pytest.raises(UnsafePickle, match=why):
        unpickle_string(data)
    assert not Path("/tmp/pwned-by-a-dataset-pickle").exists()


def test_compressed_data_that_is_not_base64_or_zlib_or_is_cut_short_is_refused():
    with pytest.raises(UnsafePickle, match="not base64"):
        decode_compressed("eJ\u00e9!!", MIB)
    with pytest.raises(UnsafePickle, match="not zlib data"):
        decode_compressed(base64.b64encode(b"plain bytes").decode(), MIB)
    whole = zlib.compress(pickle.dumps("[]"))
    with pytest.raises(UnsafePickle, match="truncated zlib data"):
        decode_compressed(base64.b64encode(whole[:-4]).decode(), MIB)
    with pytest.raises(TooLarge):
        decompress(base64.b64encode(zlib.compress(b"0" * (MIB + 1))).decode(), MIB)


# ------------------------------------------------------------------ decompression limits


def _pickled_cases_of_size(size: int) -> bytes:
    """zlib of a pickled JSON list of one stdin case whose input is about `size` bytes,
    compressed a MiB at a time (the data never sits whole in this process)."""
    head, tail = '[{"input": "', '", "output": "1\\n", "testtype": "stdin"}]'
    body = size - len(head) - len(tail)
    text_len = len(head) + body + len(tail)
    out = zlib.compressobj(1)
    parts = [out.compress(b"\x80\x04\x8d" + text_len.to_bytes(8, "little") + head.encode())]
    chunk = b"7" * MIB
    left = body
    while left > 0:
        parts.append(out.compress(chunk[:min(left, MIB)]))
        left -= MIB
    parts.append(out.compress(tail.encode() + b"\x94."))
    parts.append(out.flush())
    return b"".join(parts)


def test_three_rows_of_256_mib_each_once_decompressed_are_refused_in_bounded_memory(tmp_path):
    private = base64.b64encode(_pickled_cases_of_size(256 * MIB)).decode()
    folder = _lcb_folder(tmp_path, [lcb_row(q, "2024-01-01", private=private) for q in ("a", "b", "c")])
    # VmHWM: this process's own peak (ru_maxrss would also count the forked test runner's
    # memory, which exec carries over into it).
    code = ("import sys\nfrom harness.cli import main\nstatus = main(sys.argv[1:])\n"
            "hwm = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')][0]\n"
            "print(hwm, file=sys.stderr)\nsys.exit(status)\n")
    done = subprocess.run([sys.executable, "-c", code, "tasks", "list", f"livecodebench:{folder}"],
                          capture_output=True, text=True, env=harness_env(), timeout=300)
    *lines, maxrss_kib = done.stderr.strip().split("\n")
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith(f"error: {folder / 'test.jsonl'}: row 1: field 'private_test_cases': "), lines[0]
    assert "over the limit of 128 MiB per field" in lines[0], lines[0]
    assert int(maxrss_kib) < 400 * 1024, f"peak {int(maxrss_kib) // 1024} MiB"  # 768 MiB decompressed otherwise


def test_fields_under_their_limit_that_pass_the_row_limit_together_are_refused(tmp_path, small_limits):
    half = compressed([{"input": "1" * (800 * 1024), "output": "1\n", "testtype": "stdin"}])
    folder = _lcb_folder(tmp_path, [lcb_row("a", "2024-01-01", private=half,
                                            public_test_cases=json.dumps([{"input": "2" * (800 * 1024),
                                                                           "output": "2\n", "testtype": "stdin"}]))])
    message = _row_error(f"livecodebench:{folder}", folder / "test.jsonl", 1, "private_test_cases")
    assert "takes its row past the limit of 1.5 MiB per row" in message, message


def test_rows_under_their_limit_that_pass_the_task_set_limit_together_are_refused(tmp_path, small_limits):
    private = compressed([{"input": "3" * (1000 * 1024), "output": "3\n", "testtype": "stdin"}])
    rows = [lcb_row(f"p{i}", "2024-01-01", private=private) for i in range(6)]
    folder = _lcb_folder(tmp_path, rows)
    message = _row_error(f"livecodebench:{folder}", folder / "test.jsonl", 4, "private_test_cases")
    assert "takes the task set past the limit of 3 MiB of test data" in message, message
    # Filtered-out rows cost nothing: the first three load.
    write_jsonl(folder / "test.jsonl", rows[:3] + [lcb_row(f"q{i}", "2023-01-01", private=private) for i in range(3)])
    assert len(load_tasks(f"livecodebench:{folder}:after=2023-06-01").tasks) == 3


def test_a_jsonl_line_or_a_row_line_longer_than_a_row_may_be_is_refused_before_it_is_parsed(tmp_path, small_limits):
    from tests.tasks.test_task_files import task, write

    path = write(tmp_path / "big.jsonl", task("ok/1"), task("big/1", prompt="def inc(x):\n    '''" + "x" * (2 * MIB) + "'''\n"))
    assert _error(str(path)).startswith(f"{path}:2: the line is longer than 1.5 MiB, the limit per row")
    many = write(tmp_path / "many.jsonl", *(task(f"t/{i}", prompt="def inc(x):\n    '''" + "x" * MIB + "'''\n")
                                             for i in range(6)))
    assert "the limit per task set" in _error(str(many))
    folder = tmp_path / "apps"
    folder.mkdir()
    write_jsonl(folder / "test.jsonl", [apps_row(1, {"inputs": ["1" * (2 * MIB)], "outputs": ["1"]})])
    assert _error(f"apps:{folder}").startswith(f"{folder / 'test.jsonl'}: row 1: the line is longer than 1.5 MiB")


def test_a_codecontests_row_group_past_the_set_limit_is_refused_before_it_is_read(tmp_path, small_limits):
    rows = [cc_row(f"{i}_A. Big") for i in range(5)]
    for row in rows:
        row["generated_tests"] = {"input": [f"{row['name']} {i} " * 30_000 for i in range(3)], "output": ["1\n"] * 3}
    file = write_parquet(tmp_path / "test-00000-of-00001.parquet", rows)
    message = _error(f"codecontests:{tmp_path}")
    assert message.startswith(f"{file}: row group 0 holds ") and "the task set has left of its limit" in message


# ------------------------------------------------------------------ rows of the wrong shape

LCB_FUNCTIONAL = dict(functional=True)
_FN = "functional"


def _cases(*cases: dict) -> str:
    return json.dumps(list(cases))


HOSTILE_LCB = [
    ("functional-input-5", LCB_FUNCTIONAL, {"public_test_cases": _cases({"input": 5, "output": "1", "testtype": _FN})},
     "public_test_cases[0].input", "expected a string, got an integer"),
    ("functional-output-list", LCB_FUNCTIONAL, {"public_test_cases": _cases({"input": "1", "output": [1], "testtype": _FN})},
     "public_test_cases[0].output", "expected a string, got a list"),
    ("stdin-input-null", {}, {"public_test_cases": _cases({"input": None, "output": "1", "testtype": "stdin"})},
     "public_test_cases[0].input", "expected a string, got null"),
    ("no-testtype", {}, {"public_test_cases": _cases({"input": "1", "output": "1"})},
     "public_test_cases[0].testtype", "expected a string, got missing"),
    ("case-not-an-object", {}, {"public_test_cases": json.dumps(["1"])}, "public_test_cases[0]", "got a string"),
    ("cases-an-object", {}, {"public_test_cases": json.dumps({"input": "1", "output": "1"})},
     "public_test_cases", "expected a list of test cases, got an object"),
    ("cases-a-number", {}, {"public_test_cases": 7}, "public_test_cases", "got an integer"),
    ("private-pickles-an-object", {}, {"private_test_cases": _b64z(pickle.dumps(json.dumps({"a": 1})))},
     "private_test_cases", "got an object"),
    ("func-name-class", LCB_FUNCTIONAL, {"metadata": json.dumps({"func_name": "class"})},
     "metadata.func_name", "'class' is a Python keyword"),
    ("func-name-dunder", LCB_FUNCTIONAL, {"metadata": json.dumps({"func_name": "__init__"})},
     "metadata.func_name", "special method"),
    ("func-name-code", LCB_FUNCTIONAL, {"metadata": json.dumps({"func_name": "f(1) or True or g"})},
     "metadata.func_name", "is not a Python name"),
    ("func-name-number", LCB_FUNCTIONAL, {"metadata": json.dumps({"func_name": 5})},
     "metadata.func_name", "got an integer"),
    ("func-name-missing", LCB_FUNCTIONAL, {"metadata": json.dumps({"name": "addUp"})},
     "metadata.func_name", "no func_name"),
    ("metadata-a-list", LCB_FUNCTIONAL, {"metadata": "[1]"}, "metadata", "expected a JSON object, got a list"),
    ("argument-nested-300-deep", LCB_FUNCTIONAL,
     {"public_test_cases": _cases({"input": "[" * 300 + "]" * 300, "output": "1", "testtype": _FN})},
     "public_test_cases[0]", "does not compile: too many nested parentheses"),
    ("argument-not-json", LCB_FUNCTIONAL, {"public_test_cases": _cases({"input": "[1,", "output": "1", "testtype": _FN})},
     "public_test_cases[0].input", "not JSON lines"),
    ("expected-nan", LCB_FUNCTIONAL, {"public_test_cases": _cases({"input": "1", "output": "NaN", "testtype": _FN})},
     "public_test_cases[0]", "cannot write as a literal"),
    ("content-a-list", {}, {"question_content": ["Read n numbers."]}, "question_content", "expected a string, got a list"),
    ("content-missing", {}, {"question_content": None}, "question_content", "missing"),
    ("title-an-object", {}, {"question_title": {"en": "x"}}, "question_title", "expected a string, got an object"),
    ("starter-a-number", {}, {"starter_code": 5}, "starter_code", "expected a string, got an integer"),
    ("platform-a-list", {}, {"platform": ["atcoder"]}, "platform", "expected a string, a number or null, got a list"),
    ("contest-date-a-number", {}, {"contest_date": 20240101}, "contest_date", "expected a date as a string"),
    ("empty-expected-output", {}, {"public_test_cases": _cases({"input": "1", "output": " \n", "testtype": "stdin"})},
     "public_test_cases[0].output", "empty expected output"),
]


@pytest.mark.parametrize("kind, fields, field, why", [c[1:] for c in HOSTILE_LCB], ids=[c[0] for c in HOSTILE_LCB])
def test_a_hostile_livecodebench_row_is_one_error_naming_its_field(tmp_path, kind, fields, field, why):
    rows = [lcb_row("good", "2024-01-01"), lcb_row("bad", "2024-01-02", **kind, **fields)]
    folder = _lcb_folder(tmp_path, rows)
    message = _row_error(f"livecodebench:{folder}", folder / "test.jsonl", 2, field)
    assert why in message, message


HOSTILE_APPS = [
    ("inputs-an-object", {"inputs": {"1 2\n": 0, "3 4\n": 1}, "outputs": ["3\n", "7\n"]},
     "input_output.inputs", "expected a list of test inputs, got an object"),
    ("outputs-an-object", {"inputs": ["1 2\n"], "outputs": {"3\n": 0}}, "input_output.outputs", "got an object"),
    ("inputs-a-string", {"inputs": "1 2\n", "outputs": ["3\n"]}, "input_output.inputs", "got a string"),
    ("input-a-number", {"inputs": [12], "outputs": ["3\n"]}, "input_output.inputs[0]", "the input must be a string"),
    ("output-an-object", {"inputs": ["1 2\n"], "outputs": [{"a": 3}]}, "input_output.inputs[0]", "the output must be a string"),
    ("counts-differ", {"inputs": ["1 2\n", "3 4\n"], "outputs": ["3\n"]}, "input_output", "2 inputs but 1 outputs"),
    ("fn-name-class", {"fn_name": "class", "inputs": [[1]], "outputs": [1]}, "input_output.fn_name", "Python keyword"),
    ("fn-name-lambda", {"fn_name": "lambda", "inputs": [[1]], "outputs": [1]}, "input_output.fn_name", "Python keyword"),
    ("fn-name-a-list", {"fn_name": ["f"], "inputs": [[1]], "outputs": [1]}, "input_output.fn_name", "got a list"),
    ("call-input-not-a-list", {"fn_name": "f", "inputs": [{"a": 1}], "outputs": [1]},
     "input_output.inputs[0]", "a call-based input must be a list of arguments, got an object"),
    ("call-output-infinity", {"fn_name": "f", "inputs": [[1]], "outputs": [float("inf")]},
     "input_output.inputs[0]", "cannot write as a literal"),
    ("call-argument-nested-300-deep", {"fn_name": "f", "inputs": [[json.loads("[" * 300 + "]" * 300)]], "outputs": [1]},
     "input_output.inputs[0]", "does not compile"),
]


@pytest.mark.parametrize("io, field, why", [c[1:] for c in HOSTILE_APPS], ids=[c[0] for c in HOSTILE_APPS])
def test_a_hostile_apps_row_is_one_error_naming_its_field(tmp_path, io, field, why):
    rows = [apps_row(1, {"inputs": ["1 2\n"], "outputs": ["3\n"]}), apps_row(2, io)]
    write_jsonl(tmp_path / "test.jsonl", rows)
    message = _row_error(f"apps:{tmp_path}", tmp_path / "test.jsonl", 2, field)
    assert why in message, message


@pytest.mark.parametrize("field, value, why", [
    ("question", ["x"], "expected a string, got a list"),
    ("solutions", json.dumps([1, 2]), "expected programs as strings, got an integer"),
    ("solutions", json.dumps({"a": "print(1)"}), "expected a list of programs as strings, got an object"),
    ("input_output", json.dumps([["1"], ["1"]]), "expected an object with inputs and outputs, got a list"),
    ("difficulty", {"level": 3}, "expected a string, a number or null, got an object"),
])
def test_apps_fields_of_the_wrong_type_are_named(tmp_path, field, value, why):
    row = {**apps_row(2, {"inputs": ["1 2\n"], "outputs": ["3\n"]}), field: value}
    write_jsonl(tmp_path / "test.jsonl", [row])
    message = _error(f"apps:{tmp_path}")
    assert message.startswith(f"{tmp_path / 'test.jsonl'}: row 1: field {field!r}") or \
        message.startswith(f"{tmp_path / 'test.jsonl'}: row 1: field '{field}["), message
    assert why in message, message


@pytest.mark.parametrize("change, field, why", [
    ({"name": 5}, "name", "expected a string, got an integer"),
    ({"description": None}, "description", "missing"),
    ({"public_tests": {"input": [1], "output": ["3\n"]}}, "public_tests.input[0]", "expected strings, got an integer"),
    ({"public_tests": {"input": ["1 2\n", "3 4\n"], "output": ["3\n"]}}, "public_tests", "2 inputs but 1 outputs"),
    ({"public_tests": {"input": ["1 2\n"], "output": [""]}}, "public_tests[0]", "empty expected output"),
    ({"solutions": {"language": ["python"], "solution": ["print(1)"]}}, "solutions.language[0]", "got a string"),
    ({"time_limit": {"seconds": "2", "nanos": 0}}, "time_limit.seconds", "expected an integer, got a string"),
    ({"time_limit": {"seconds": -5, "nanos": 0}}, "time_limit", "a negative time limit"),
    ({"source": "codeforces"}, "source", "expected an integer, got a string"),
])
def test_a_hostile_codecontests_row_is_one_error_naming_its_field(tmp_path, change, field, why):
    file = write_parquet(tmp_path / "test-00000-of-00001.parquet", [{**cc_row("9_A. Bad"), **change}])
    message = _row_error(f"codecontests:{tmp_path}", file, 1, field)
    assert why in message, message


@pytest.mark.parametrize("entry_point, why", [("class", "Python keyword"), ("__init__", "special method"),
                                              ("check(x) or f", "not a Python name")])
def test_a_humaneval_row_whose_entry_point_no_test_can_call_is_refused(tmp_path, entry_point, why):
    from tests.tasks.test_task_hf import HUMANEVAL_ROW

    path = tmp_path / "he.jsonl"
    write_jsonl(path, [{**HUMANEVAL_ROW, "entry_point": entry_point}])
    message = _error(f"hf:{path}")
    assert message.startswith(f"{path} row 0: field 'entry_point': ") and why in message, message


def test_a_jsonl_test_that_parses_but_cannot_compile_is_refused(tmp_path):
    from tests.tasks.test_task_files import task, write

    path = write(tmp_path / "t.jsonl", task(tests=["return 5"]))
    assert "field 'tests[0]': not valid Python ('return' outside function" in _error(str(path))


# ------------------------------------------------------------------ a fuzz of every field

_VALUES: list[Any] = [None, True, 0, -1, 2**70, 1.5, math.inf, "", " ", "x", "\x00", "[]", "{}", "null", "\ud800",
                      [], [1], ["a"], [[1]], {}, {"input": 1}, {"a": []}, "[" * 50, "eJwLycgsVgCi4pzMvFQA",
                      [{"input": 5, "output": "1", "testtype": "functional"}],
                      json.dumps([{"input": "1", "output": ["1"], "testtype": "stdin"}]),
                      json.dumps([{"input": None, "output": "1", "testtype": "functional"}]),
                      json.dumps({"func_name": "class"}), json.dumps({"func_name": 3}),
                      json.dumps({"inputs": {"a": 1}, "outputs": ["1"]}), json.dumps({"fn_name": "if", "inputs": [[1]],
                                                                                       "outputs": [1]})]


def _mutations(row: dict, n: int, seed: int):
    rng = random.Random(seed)
    keys = list(row)
    for _ in range(n):
        bad = dict(row)
        for key in rng.sample(keys, rng.randint(1, min(3, len(keys)))):
            bad[key] = rng.choice(_VALUES)
        yield bad


def _loads_or_one_error(spec: str, file: Path) -> None:
    try:
        load_tasks(spec)
    except TaskError as exc:
        message = str(exc)
        assert message.startswith(f"{file}: row ") or message.startswith(f"{file}:"), message
        assert "\n" not in message


def test_random_fields_of_random_types_never_end_in_a_traceback(tmp_path):
    folder = tmp_path / "lcb"
    folder.mkdir()
    for template in (lcb_row("s", "2024-01-01"), lcb_row("f", "2024-01-01", functional=True)):
        for bad in _mutations(template, 150, seed=1):
            write_jsonl(folder / "test.jsonl", [bad])
            _loads_or_one_error(f"livecodebench:{folder}", folder / "test.jsonl")
    apps = tmp_path / "apps"
    apps.mkdir()
    for template in (apps_row(1, {"inputs": ["1 2\n"], "outputs": ["3\n"]}),
                     apps_row(2, {"fn_name": "add", "inputs": [[1, 2]], "outputs": [3]}, starter="def add(a, b):\n")):
        for bad in _mutations(template, 150, seed=2):
            write_jsonl(apps / "test.jsonl", [bad])
            _loads_or_one_error(f"apps:{apps}", apps / "test.jsonl")
        io = json.loads(template["input_output"])
        for bad in _mutations(io, 100, seed=3):
            write_jsonl(apps / "test.jsonl", [{**template, "input_output": json.dumps(bad)}])
            _loads_or_one_error(f"apps:{apps}", apps / "test.jsonl")


def test_random_codecontests_fields_of_random_types_never_end_in_a_traceback(tmp_path):
    rng = random.Random(4)
    template = cc_row("1_A. Fuzz")
    values = [None, 0, 3, "x", "", ["a"], [1], {"input": ["1"], "output": [2]}, {"seconds": "1"}, {"language": [3]}]
    for i in range(60):
        bad = dict(template)
        for key in rng.sample(sorted(template), rng.randint(1, 2)):
            bad[key] = rng.choice(values)
        folder = tmp_path / f"cc{i}"
        file = write_parquet(folder / "test-00000-of-00001.parquet", [bad])
        _loads_or_one_error(f"codecontests:{folder}", file)


def test_the_cli_prints_one_line_for_a_hostile_row(tmp_path):
    folder = _lcb_folder(tmp_path, [lcb_row("f", "2024-01-01", functional=True,
                                            public_test_cases=_cases({"input": 5, "output": "1", "testtype": _FN}))])
    done = subprocess.run([sys.executable, "-m", "harness", "tasks", "list", f"livecodebench:{folder}"],
                          capture_output=True, text=True, env=harness_env(), timeout=120)
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"error: {folder / 'test.jsonl'}: row 1: field 'public_test_cases[0].input': "
                                  "expected a string, got an integer")


def test_random_fields_of_hugging_face_rows_never_end_in_a_traceback(tmp_path):
    from tests.tasks.test_task_hf import HUMANEVAL_ROW, MBPP_FULL_ROW

    for n, template in enumerate((HUMANEVAL_ROW, MBPP_FULL_ROW)):
        for i, bad in enumerate(_mutations(template, 60, seed=5 + n)):
            path = tmp_path / f"rows{n}_{i}.jsonl"
            write_jsonl(path, [bad])
            try:
                load_tasks(f"hf:{path}")
            except TaskError as exc:
                assert str(exc).startswith((f"{path} row 0", "dataset ", "could not load")), str(exc)
                assert "\n" not in str(exc)
