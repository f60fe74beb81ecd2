"""Languages as data: test lines of each language read into calls and expected values,
the worker's value comparison, code out of answers, task files with a language field,
MultiPL-E rows. No sandbox needed (the docker tests are tests/sandbox/test_sandbox_languages.py
and test_task_builtin_languages.py)."""
from __future__ import annotations

import json
import math

import pytest

from harness.kinds.languages import canonical, get_language
from harness.kinds.languages.literals import LiteralError, parse_assert, parse_value
from harness.tasks.base import TaskError
from harness.tasks.registry import load_tasks
from sandbox.worker.values import equal, parse


@pytest.mark.parametrize("line, args, expected", [
    ("assert_eq!(candidate(vec![1.0, 2.0, 3.9], 0.3), true);", [[1.0, 2.0, 3.9], 0.3], True),
    ('assert_eq!(f(String::from("ab"), vec![1, -2]), vec![(1, String::from("x"))]);', ["ab", [1, -2]], [[1, "x"]]),
    ("assert_eq!(f(Vec::<String>::new()), None);", [[]], None),
    ('assert_eq!(f(1), Some(String::from("a\\nb")));', [1], "a\nb"),
    ("assert!(!f(4));", [4], False),
    ("assert(candidate((std::vector<long>({(long)1, (long)2}))) == (std::vector<long>({(long)2})));", [[1, 2]], [2]),
    ('assert(candidate(std::map<std::string,long>({{"a", 1}})) == std::make_tuple(3.5f, true));', [{"a": 1}], [3.5, True]),
    ('{ actual: candidate([]int{1, 2}, "a"), expected: map[string]int{"a": 1} },', [[1, 2], "a"], {"a": 1}),
    ("assert.deepStrictEqual(candidate([1, 2], {a: 1}), ['x', null]);", [[1, 2], {"a": 1}], ["x", None]),
    ("assert_eq!(f(-3i64, 2.5f64, 'c'), 1_000);", [-3, 2.5, "c"], 1000),
])
def test_a_test_line_is_read_as_a_call_and_an_expected_value(line, args, expected):
    parsed = parse_assert(line, "f")
    assert parsed.args == args and parsed.expected == expected


@pytest.mark.parametrize("line", ["assert_eq!(f(x), 3);", "assert(f(1) != 2);", "assert_eq!(g(1), 2);",
                                  "assert_eq!(f(1 + 2), 3);"])
def test_what_is_not_a_literal_call_is_not_a_test(line):
    with pytest.raises(LiteralError):
        parse_assert(line, "f")


def test_values_compare_by_shape_and_exactly():
    assert equal(parse("[1, 2.5, \"a\", null, true]"), parse("[1, 2.5, \"a\", null, true]"))
    assert equal(parse("3"), parse("3.0"))  # a float result of an integral value
    assert not equal(parse("true"), parse("1")) and not equal(parse('"3"'), parse("3"))
    assert not equal(parse("0.30000000000000004"), parse("0.3"))
    assert equal(parse("0.30000000000000004"), parse("0.3"), tolerance=1e-9)
    assert equal(parse("NaN"), parse("NaN")) and not equal(parse("NaN"), parse("1.0"))
    assert not equal(parse("[1, 2]"), parse("[1, 2, 3]")) and not equal(parse('{"a": 1}'), parse('{"a": 1, "b": 2}'))
    assert math.isinf(parse("-Infinity"))


@pytest.mark.parametrize("name, answer, code", [
    ("rust", "Here:\n```rust\nfn add(a: i64, b: i64) -> i64 { a + b }\n\nfn main() {\n    println!(\"{}\", add(1, 2));\n}\n```\n",
     "fn add(a: i64, b: i64) -> i64 { a + b }\n"),
    ("go", "```go\npackage main\n\nfunc add(a, b int) int { return a + b }\n\nfunc main() { add(1, 2) }\n```", "package main\n\nfunc add(a, b int) int { return a + b }\n"),
    ("cpp", "```cpp\nint add(int a, int b) { return a + b; }\nint main() { return add(1, 2); }\n```", "int add(int a, int b) { return a + b; }\n"),
    ("javascript", "```js\nfunction add(a, b) { return a + b; }\n```", "function add(a, b) { return a + b; }\n"),
])
def test_a_function_task_s_code_is_taken_from_its_language_s_fence_without_a_main(name, answer, code):
    assert get_language(name).extract_code(answer, "add") == code


def test_a_body_completes_the_prompt_and_a_whole_function_stands_alone():
    rust = get_language("rust")
    prompt = "/// Add.\nfn add(a: i64, b: i64) -> i64 {\n"
    assert rust.graded_program(prompt, "    a + b\n}\n", "add") == prompt + "    a + b\n}\n"
    assert rust.graded_program(prompt, "fn add(a: i64, b: i64) -> i64 { a + b }\n", "add").startswith("fn add")


def test_the_test_writer_s_lines_become_one_call_test_each():
    text = "```rust\nassert_eq!(add(1, 2), 3);\nassert_eq!(add(1, 2), 3);\nassert_eq!(add(x, 2), 3);\nassert!(true);\n```"
    calls, unparseable, no_call, over = get_language("rust").parse_test_lines(text, "add", 5)
    assert [(c.args, c.expected) for c in calls] == [((1, 2), 3)]
    assert (unparseable, no_call, over) == (1, 1, 0)


def test_language_names_and_their_aliases():
    assert canonical("rs") == "rust" and canonical("go_test.go") == "go" and canonical("C++") == "cpp"
    with pytest.raises(ValueError, match="choose one of"):
        canonical("cobol")


def test_builtin_sets_of_each_language_load_with_calls_as_hidden_tests():
    polyglot = load_tasks("builtin:polyglot")
    assert {t.language for t in polyglot.tasks} == {"rust", "go", "cpp", "javascript"}
    for language in ("rust", "go", "cpp", "javascript"):
        tasks = [t for t in polyglot.tasks if t.language == language]
        assert len([t for t in tasks if t.kind == "function"]) >= 8
        assert all(t.canonical_solution and t.meta.get("stub") for t in tasks)
    # Python's builtin set and its digest are untouched by the other languages.
    assert all(t.language == "python" for t in load_tasks("builtin").tasks)


def test_a_task_file_with_a_language_reads_test_lines_and_calls(tmp_path):
    path = tmp_path / "mine.jsonl"
    rows = [
        {"task_id": "mine/add", "language": "rs", "prompt": "fn add(a: i64, b: i64) -> i64 {\n", "entry_point": "add",
         "tests": ["assert_eq!(add(1, 2), 3);", {"calls": [{"args": [2, 2], "expected": 4}], "tolerance": 0.5}]},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    task = load_tasks(str(path)).tasks[0]
    assert task.language == "rust" and [t.as_dict() for t in task.hidden_tests] == [
        {"calls": [{"args": [1, 2], "expected": 3, "label": "assert_eq!(add(1, 2), 3);"}]},
        {"calls": [{"args": [2, 2], "expected": 4}], "tolerance": 0.5}]
    rows[0]["tests"] = ["assert_eq!(add(y, 2), 3);"]
    path.write_text(json.dumps(rows[0]) + "\n")
    with pytest.raises(TaskError, match=r"tests\[0\].*not a test line"):
        load_tasks(str(path))


def test_multipl_e_rows_become_one_hidden_test_of_calls(tmp_path):
    row = {"name": "HumanEval_13_greatest_common_divisor", "language": "go_test.go",
           "prompt": 'package greatest_common_divisor_test\n\nimport (\n    "testing"\n    "fmt"\n)\n\nfunc greatest_common_divisor(a int, b int) int {\n',
           "tests": "func TestG(t *testing.T) {\n  candidate := greatest_common_divisor\n   tests := []test{\n"
                    "     { actual: candidate(3, 7), expected: 1 },\n     { actual: candidate(10, 15), expected: 5 },\n   }\n}\n",
           "stop_tokens": ["\nfunc"]}
    unreadable = dict(row, name="HumanEval_1_x", tests="candidate := x\nassert(candidate(y) == 1)\n")
    (tmp_path / "humaneval-go.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(unreadable) + "\n")
    task_set = load_tasks(f"multipl-e:{tmp_path}:humaneval-go")
    [task] = task_set.tasks
    assert task.language == "go" and task.entry_point == "greatest_common_divisor"
    assert [(c.args, c.expected) for c in task.hidden_tests[0].calls] == [((3, 7), 1), ((10, 15), 5)]
    assert '"testing"' not in task.prompt and "1 row(s) left out" in task_set.prompt_form
    with pytest.raises(TaskError, match="does not exist"):
        load_tasks(f"multipl-e:{tmp_path}:humaneval-rs")


def test_parse_value_reads_nested_literals():
    assert parse_value("vec![vec![1, 2], vec![]]") == [[1, 2], []]
    assert parse_value("HashMap::from([(1, String::from(\"a\"))])") == {"1": "a"}
