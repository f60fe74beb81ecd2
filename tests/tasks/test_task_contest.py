"""Loaders of LiveCodeBench, CodeContests and APPS, on small files in each source's format."""
from __future__ import annotations

import base64
import json
import os
import pickle
import zlib
from pathlib import Path

import pytest

from harness.tasks import IoTest, TaskError, load_tasks
from harness.tasks.safe_pickle import UnsafePickle, decode_compressed


def compressed(cases: list[dict]) -> str:
    """LiveCodeBench lite's private_test_cases: base64(zlib(pickle(json string)))."""
    return base64.b64encode(zlib.compress(pickle.dumps(json.dumps(cases)))).decode()


def lcb_row(qid: str, date: str, *, platform="atcoder", difficulty="easy", functional=False, private=None, **extra):
    if functional:
        public = [{"input": "[1, 2, 3]\n2", "output": "5", "testtype": "functional"}]
        hidden = [{"input": "[4]\n0", "output": "4", "testtype": "functional"}]
        meta = json.dumps({"func_name": "addUp"})
        starter = "class Solution:\n    def addUp(self, nums: List[int], k: int) -> int:\n        "
    else:
        public = [{"input": "3\n1 2 3\n", "output": "6\n", "testtype": "stdin"}]
        hidden = [{"input": "1\n5\n", "output": "5\n", "testtype": "stdin"}]
        meta, starter = "{}", ""
    row = {
        "question_title": f"Problem {qid}", "question_content": "Read n numbers, print their sum.",
        "platform": platform, "question_id": qid, "contest_id": "abc300", "contest_date": f"{date}T00:00:00",
        "starter_code": starter, "difficulty": difficulty, "public_test_cases": json.dumps(public),
        "private_test_cases": compressed(hidden) if private is None else private, "metadata": meta,
    }
    row.update(extra)
    return row


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def lcb(tmp_path: Path) -> Path:
    folder = tmp_path / "code_generation_lite"
    folder.mkdir()
    write_jsonl(folder / "test.jsonl", [lcb_row("abc300_a", "2023-05-01"), lcb_row("2831", "2023-06-10", platform="leetcode", functional=True)])
    write_jsonl(folder / "test2.jsonl", [lcb_row("abc310_b", "2023-07-20", difficulty="hard",
                                                 private=json.dumps([{"input": "2\n1 1\n", "output": "2\n", "testtype": "stdin"}]))])
    write_jsonl(folder / "test5.jsonl", [lcb_row("1899_c", "2024-09-02", platform="codeforces", difficulty="medium")])
    for n in (3, 4):
        write_jsonl(folder / f"test{n}.jsonl", [])
    return folder


def ids(spec: str) -> list[str]:
    return [t.task_id for t in load_tasks(spec).tasks]


def test_lcb_stdin_row_is_an_io_task_with_public_and_private_tests(lcb):
    task = load_tasks(f"livecodebench:{lcb}:v1").tasks[0]
    assert task.kind == "io" and task.compare == "lcb" and task.entry_point == ""
    assert task.hidden_tests == (IoTest("3\n1 2 3\n", "6\n"), IoTest("1\n5\n", "5\n"))
    assert task.public_tests == (IoTest("3\n1 2 3\n", "6\n"),)
    assert task.meta["contest_date"] == "2023-05-01" and task.meta["platform"] == "atcoder"
    assert "Read n numbers" in task.prompt and "5\n" not in task.prompt.split("sum.")[1]  # private test not shown
    assert "from typing import *" in task.preamble


def test_lcb_functional_row_asserts_on_the_solution_method(lcb):
    task = next(t for t in load_tasks(f"livecodebench:{lcb}:v1").tasks if t.task_id == "lcb/2831")
    assert task.kind == "function" and task.entry_point == "Solution"
    assert task.hidden_tests[0] == (
        "result = Solution().addUp([1, 2, 3], 2)\nresult = list(result) if type(result) is tuple else result\nassert result == 5"
    )
    assert "class Solution" in task.prompt and len(task.hidden_tests) == 2


def test_lcb_releases_select_files(lcb):
    assert ids(f"livecodebench:{lcb}:release_v2") == ["lcb/abc300_a", "lcb/2831", "lcb/abc310_b"]
    assert ids(f"livecodebench:{lcb}:v5") == ["lcb/1899_c"]
    assert ids(f"livecodebench:{lcb}:v2_v5") == ["lcb/abc310_b", "lcb/1899_c"]
    assert len(ids(f"livecodebench:{lcb}")) == 4  # release_latest: every file
    (lcb / "test3.jsonl").unlink()
    with pytest.raises(TaskError, match="release_v5 needs test3.jsonl"):
        load_tasks(f"livecodebench:{lcb}:release_v5")


def test_lcb_filters_on_date_difficulty_and_platform(lcb):
    assert ids(f"livecodebench:{lcb}:after=2023-06-10") == ["lcb/abc310_b", "lcb/1899_c"]  # strictly after
    assert ids(f"livecodebench:{lcb}:before=2023-06-10") == ["lcb/abc300_a"]
    assert ids(f"livecodebench:{lcb}:after=2023-01-01:before=2024-01-01:difficulty=hard") == ["lcb/abc310_b"]
    assert ids(f"livecodebench:{lcb}:platform=codeforces,leetcode") == ["lcb/2831", "lcb/1899_c"]
    name = load_tasks(f"livecodebench:{lcb}:after=2023-06-10").prompt_form
    assert "dated after 2023-06-10" in name
    with pytest.raises(TaskError, match="expected a date"):
        load_tasks(f"livecodebench:{lcb}:after=june")
    with pytest.raises(TaskError, match="unknown; livecodebench takes"):
        load_tasks(f"livecodebench:{lcb}:colour=red")


def test_lcb_with_example_uses_the_public_tests_as_internal(lcb):
    task_set = load_tasks(f"livecodebench:{lcb}:v1:with-example")
    assert all(t.examples_as_internal for t in task_set.tasks)
    assert task_set.name.endswith(":with-example") and "public examples are the internal tests" in task_set.prompt_form
    assert task_set.digest != load_tasks(f"livecodebench:{lcb}:v1").digest


def test_lcb_reads_a_hugging_face_cache(tmp_path, lcb, monkeypatch):
    snapshot = tmp_path / "hub" / "datasets--livecodebench--code_generation_lite" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    for f in lcb.iterdir():
        (snapshot / f.name).write_text(f.read_text())
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert ids("livecodebench:v5") == ["lcb/1899_c"]  # no folder: the default cache
    assert ids(f"livecodebench:{tmp_path / 'hub'}:v5") == ["lcb/1899_c"]  # the hub folder itself
    assert ids(f"livecodebench:{snapshot.parents[1]}:v5") == ["lcb/1899_c"]  # the cache entry


def test_lcb_task_set_digest_covers_io_tests(lcb):
    before = load_tasks(f"livecodebench:{lcb}:v1").digest
    rows = [json.loads(line) for line in (lcb / "test.jsonl").read_text().splitlines()]
    rows[0]["private_test_cases"] = compressed([{"input": "1\n5\n", "output": "6\n", "testtype": "stdin"}])
    write_jsonl(lcb / "test.jsonl", rows)
    assert load_tasks(f"livecodebench:{lcb}:v1").digest != before


def test_a_row_without_hidden_tests_is_refused_with_file_row_and_reason(lcb):
    write_jsonl(lcb / "test5.jsonl", [lcb_row("x", "2024-01-01"), lcb_row("y", "2024-01-02", public_test_cases="[]", private_test_cases="[]")])
    with pytest.raises(TaskError) as info:
        load_tasks(f"livecodebench:{lcb}:v5")
    assert str(info.value).startswith(f"{lcb / 'test5.jsonl'}: row 2: field 'private_test_cases': no test cases")


def test_a_row_the_harness_cannot_grade_is_refused(lcb):
    mixed = json.dumps([{"input": "1", "output": "1", "testtype": "stdin"}, {"input": "1", "output": "1", "testtype": "functional"}])
    write_jsonl(lcb / "test5.jsonl", [lcb_row("z", "2024-01-01", public_test_cases=mixed)])
    with pytest.raises(TaskError, match=r"test5.jsonl: row 1: field 'testtype': .*expected all stdin or all functional"):
        load_tasks(f"livecodebench:{lcb}:v5")
    write_jsonl(lcb / "test5.jsonl", [lcb_row("f", "2024-01-01", functional=True, metadata="{}")])
    with pytest.raises(TaskError, match="row 1: field 'metadata.func_name': functional tests but metadata has no func_name"):
        load_tasks(f"livecodebench:{lcb}:v5")


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch /tmp/pwned-by-a-dataset",))


def test_a_malicious_pickle_is_refused_and_never_run(lcb, tmp_path):
    evil = base64.b64encode(zlib.compress(pickle.dumps(_Evil()))).decode()
    with pytest.raises(UnsafePickle, match="names posix.system"):
        decode_compressed(evil, 1 << 20)
    write_jsonl(lcb / "test5.jsonl", [lcb_row("evil", "2024-01-01", private=evil)])
    with pytest.raises(TaskError, match="row 1: field 'private_test_cases': neither JSON nor .* names posix.system"):
        load_tasks(f"livecodebench:{lcb}:v5")
    assert not Path("/tmp/pwned-by-a-dataset").exists()


def test_a_pickle_of_anything_but_a_string_is_refused():
    for value in ([1, 2], {"a": 1}, b"bytes", 7):
        data = base64.b64encode(zlib.compress(pickle.dumps(value))).decode()
        with pytest.raises(UnsafePickle, match="only a pickled string is accepted"):
            decode_compressed(data, 1 << 20)
    assert decode_compressed(base64.b64encode(zlib.compress(pickle.dumps("[]"))).decode(), 1 << 20) == "[]"


# ---------------------------------------------------------------- CodeContests


def cc_row(name: str, *, private=True, source=2, difficulty=7):
    def tests(pairs):
        return {"input": [i for i, _ in pairs], "output": [o for _, o in pairs]}
    return {
        "name": name, "description": "Print the sum of two integers.",
        "public_tests": tests([("1 2\n", "3\n")]),
        "private_tests": tests([("5 5\n", "10\n")] if private else []),
        "generated_tests": tests([("0 0\n", "0\n")] if private else []),
        "source": source, "difficulty": difficulty,
        "solutions": {"language": [2, 3, 3], "solution": ["int main(){}", "a, b = map(int, input().split())\nprint(a + b)\n", "print(sum(map(int, input().split())))\n"]},
        "incorrect_solutions": {"language": [], "solution": []},
        "cf_contest_id": 1, "cf_index": "A", "cf_points": 0.0, "cf_rating": 800, "cf_tags": ["math"],
        "is_description_translated": False, "untranslated_description": "",
        "time_limit": {"seconds": 2, "nanos": 0}, "memory_limit_bytes": 256000000, "input_file": "", "output_file": "",
    }


def write_parquet(path: Path, rows: list[dict]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_codecontests_parquet_public_private_generated_and_python_references(tmp_path):
    write_parquet(tmp_path / "cc" / "data" / "test-00000-of-00001.parquet", [cc_row("1000_A. Sum"), cc_row("1001_B. Other", source=5, difficulty=2)])
    task_set = load_tasks(f"codecontests:{tmp_path / 'cc'}")
    task = task_set.tasks[0]
    assert task.task_id == "codecontests/1000_A" and task.kind == "io" and task.compare == "codecontests"
    assert task.hidden_tests == (IoTest("1 2\n", "3\n"), IoTest("5 5\n", "10\n"), IoTest("0 0\n", "0\n"))
    assert task.public_tests == (IoTest("1 2\n", "3\n"),)
    assert task.canonical_solution.startswith("a, b = map(int")  # Python 3 only: the C++ one is left
    assert task.timeout_s == 2.0 and task.meta["platform"] == "codeforces" and task.meta["difficulty"] == "a"
    assert [t.task_id for t in load_tasks(f"codecontests:{tmp_path / 'cc'}:platform=atcoder").tasks] == ["codecontests/1001_B"]


def test_codecontests_row_without_tests_is_refused(tmp_path):
    row = cc_row("7_A. Empty", private=False)
    row["public_tests"] = {"input": [], "output": []}
    file = write_parquet(tmp_path / "test-00000-of-00001.parquet", [cc_row("6_A. Fine"), row])
    with pytest.raises(TaskError, match=rf"{file}: row 2: field .private_tests.: no tests"):
        load_tasks(f"codecontests:{tmp_path}")


# ---------------------------------------------------------------- APPS


def apps_row(pid: int, io: dict | None, *, difficulty="interview", starter=""):
    return {"id": pid, "problem_id": pid, "question": "Read two numbers and print their sum.",
            "solutions": json.dumps(["a, b = map(int, input().split())\nprint(a + b)\n"]),
            "input_output": json.dumps(io) if io is not None else "", "difficulty": difficulty,
            "url": "https://codeforces.com/problemset/problem/1/A", "starter_code": starter}


def test_apps_jsonl_stdin_and_call_based(tmp_path):
    rows = [
        apps_row(1, {"inputs": ["1 2\n", ["3 4"]], "outputs": ["3\n", ["7"]]}),
        apps_row(2, {"fn_name": "add", "inputs": [[1, 2], [3, 4]], "outputs": [[3], 7]}, difficulty="introductory",
                 starter="def add(a, b):\n    "),
    ]
    write_jsonl(tmp_path / "test.jsonl", rows)
    stdin, call = load_tasks(f"apps:{tmp_path}").tasks
    assert stdin.kind == "io" and stdin.compare == "apps"
    assert stdin.hidden_tests == (IoTest("1 2\n", "3\n"), IoTest("3 4", "7"))  # lists of lines joined
    assert call.kind == "function" and call.entry_point == "add"
    # outputs not all wrapped in a list of one: each expected as stored, and APPS's own
    # check (also its first item) only as the task's source_tests
    assert call.hidden_tests[0].endswith("\nassert result == [3]") and call.hidden_tests[1].endswith("== 7")
    assert call.source_tests[0].endswith("assert result == [3] or result == 3")  # APPS's outputs[i][0]
    assert [t.task_id for t in load_tasks(f"apps:{tmp_path}:difficulty=introductory").tasks] == ["apps/2"]


def test_apps_call_based_outputs_wrapped_in_a_list_of_one_are_unwrapped(tmp_path):
    # APPS's usual form: each return value in a list of one ([6] for 6, [[1, 2]] for [1, 2])
    rows = [apps_row(3, {"fn_name": "sort_list", "inputs": [[[3, 1, 2]], [[5, 4]]], "outputs": [[[1, 2, 3]], [[4, 5]]]}),
            apps_row(4, {"fn_name": "total", "inputs": [[[1, 2]], [[]]], "outputs": [[3], [0]]})]
    write_jsonl(tmp_path / "test.jsonl", rows)
    sort, total = load_tasks(f"apps:{tmp_path}").tasks
    assert sort.hidden_tests[0].endswith("\nassert result == [1, 2, 3]")
    assert total.hidden_tests[1].endswith("\nassert result == 0")
    assert sort.source_tests[0].endswith("assert result == [[1, 2, 3]] or result == [1, 2, 3]")
    # no first item of an unwrapped list: min(xs) is no sort
    rows = [apps_row(5, {"fn_name": "sort_list", "inputs": [[[3, 1, 2]], [[5, 4]]], "outputs": [[1, 2, 3], [4, 5]]})]
    write_jsonl(tmp_path / "test.jsonl", rows)
    [bare] = load_tasks(f"apps:{tmp_path}").tasks
    assert bare.hidden_tests[0].endswith("\nassert result == [1, 2, 3]")
    assert bare.source_tests[0].endswith("assert result == [1, 2, 3] or result == 1")  # APPS's own: min(xs) passes


def test_apps_row_without_input_output_is_refused(tmp_path):
    write_jsonl(tmp_path / "test.jsonl", [apps_row(1, {"inputs": ["1 2"], "outputs": ["3"]}), apps_row(9, None)])
    with pytest.raises(TaskError, match=r"test.jsonl: row 2: field .input_output.: no hidden tests"):
        load_tasks(f"apps:{tmp_path / 'test.jsonl'}")


def test_run_flags_after_and_before_select_by_contest_date(lcb):
    task_set = load_tasks(f"livecodebench:{lcb}")
    assert [t.task_id for t in task_set.select(after="2023-06-10").tasks] == ["lcb/abc310_b", "lcb/1899_c"]
    assert [t.task_id for t in task_set.select(after="2023-01-01", before="2023-06-10", limit=5).tasks] == ["lcb/abc300_a"]
    with pytest.raises(TaskError, match="have no contest date"):
        load_tasks("builtin:quick").select(after="2024-01-01")


def test_run_config_checks_the_dates():
    from harness.config import ConfigError, RunConfig

    assert RunConfig(after="2024-08-01").validate().after == "2024-08-01"
    with pytest.raises(ConfigError, match="after must be a date as YYYY-MM-DD"):
        RunConfig(after="August").validate()
