"""The Exercism loader (harness/tasks/exercism.py) on the fixture tree in the real layout
(tests/data/exercism) and on broken copies of it: one error line naming the file."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from harness.kinds.languages.kind import kind_for
from harness.kinds.languages.runner import RunnerTest, runner_test_names
from harness.tasks.base import TaskError
from harness.tasks.registry import load_tasks

DATA = Path(__file__).resolve().parents[1] / "data" / "exercism"


def test_each_language_s_exercises_load_as_runner_tasks():
    tasks = {t.task_id: t for t in load_tasks(f"exercism:{DATA}").tasks}
    assert set(tasks) >= {"exercism/cpp/leap", "exercism/cpp/raindrops",
                          "exercism/rust/safe-divide", "exercism/rust/word-count-lite", "exercism/go/clamp",
                          "exercism/go/run-length", "exercism/javascript/stack", "exercism/javascript/vowel-count"}
    divide = tasks["exercism/rust/safe-divide"]
    assert divide.kind == "runner" and divide.language == "rust" and kind_for(divide).name == "runner"
    # Every test of the file, the #[ignore]d ones too, by the name libtest gives it.
    assert [t.test for t in divide.hidden_tests] == ["exact_division", "rounds_toward_zero", "by_zero_is_none",
                                                     "a_panicking_test_that_expects_it"]
    assert all(isinstance(t, RunnerTest) and t.suite.program_path == "src/lib.rs" for t in divide.hidden_tests)
    # The prompt is the docs, in Aider's order; the reference is the example; the stub the solution file.
    assert divide.prompt.index("Divide two integers") < divide.prompt.index("i64::MIN")
    assert "checked_div" in divide.canonical_solution and "todo!" in divide.meta["stub"]
    assert divide.meta["verdict"] == "in-process runner verdict" and divide.meta["exercise"]["crate"] == "safe_divide"
    # The hidden tests never reach the prompt, nor the stub.
    assert "assert_eq" not in divide.prompt and "exact_division" not in divide.prompt
    # Rust, as libtest names them: a module's tests by their path; a test behind a cargo
    # feature is none (cargo test leaves it out); the crate's other modules come along.
    words = tasks["exercism/rust/word-count-lite"]
    assert [t.test for t in words.hidden_tests] == ["empty_sentence", "repeated_word_counts_once",
                                                    "punctuation_separates_words", "edge::only_separators"]
    assert "src/words.rs" in dict(words.hidden_tests[0].suite.files)
    # Go: the tests of every test file (cases_test.go is data), each name once.
    assert [t.test for t in tasks["exercism/go/clamp"].hidden_tests] == ["TestClamp", "TestClampEdges"]
    assert tasks["exercism/go/clamp"].meta["exercise"]["package"] == "clamp"
    # jest: describe names joined to the test's, as jest names them.
    assert [t.test for t in tasks["exercism/javascript/vowel-count"].hidden_tests] == [
        "Vowel count empty string", "Vowel count mixed case", "Vowel count longer text a sentence"]


def test_one_language_of_a_checkout_and_an_exercises_practice_folder_load_alike():
    by_spec = load_tasks(f"exercism:{DATA}:go")
    by_folder = load_tasks(f"exercism:{DATA / 'go' / 'exercises' / 'practice'}")
    assert [t.task_id for t in by_spec.tasks] == [t.task_id for t in by_folder.tasks] == [
        "exercism/go/clamp", "exercism/go/run-length"]
    assert by_spec.digest == by_folder.digest
    assert "in-process runner verdict" in by_spec.prompt_form


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "polyglot"
    shutil.copytree(DATA / "rust", root / "rust")
    return root / "rust" / "exercises" / "practice" / "safe-divide"


@pytest.mark.parametrize("damage, words", [
    (lambda ex: (ex / ".meta" / "config.json").unlink(), ".meta/config.json: missing"),
    (lambda ex: (ex / ".meta" / "config.json").write_text("{not json"), ".meta/config.json: not valid JSON"),
    (lambda ex: (ex / ".meta" / "config.json").write_text(json.dumps({"files": {"solution": ["src/lib.rs"], "test": [],
                                                                             "example": [".meta/example.rs"]}})),
     "field 'files.test'"),
    (lambda ex: (ex / "tests" / "safe-divide.rs").unlink(), "tests/safe-divide.rs: missing (named by .meta/config.json)"),
    (lambda ex: (ex / ".meta" / "config.json").write_text(json.dumps({"files": {
        "solution": ["../../../etc/passwd"], "test": ["tests/safe-divide.rs"], "example": [".meta/example.rs"]}})),
     "is not a path inside the exercise"),
    (lambda ex: (ex / "src" / "lib.rs").write_bytes(b"pub fn divide() {}\n\xff\n"), "src/lib.rs: not UTF-8 text"),
    (lambda ex: (ex / "tests" / "safe-divide.rs").write_text("x" * (2 * 1024 * 1024 + 1)), "larger than 2,097,152 bytes"),
    (lambda ex: (ex / "Cargo.toml").unlink(), "Cargo.toml: missing (a Rust exercise's build needs it)"),
])
def test_a_broken_exercise_is_one_error_naming_its_file(tmp_path, damage, words):
    exercise = _copy(tmp_path)
    damage(exercise)
    with pytest.raises(TaskError) as caught:
        load_tasks(f"exercism:{tmp_path / 'polyglot'}:rust")
    message = str(caught.value)
    assert "\n" not in message and words in message and str(exercise) in message


def test_an_exercise_that_needs_crates_is_left_out_and_counted(tmp_path):
    exercise = _copy(tmp_path)
    with (exercise / "Cargo.toml").open("a") as manifest:
        manifest.write("\n[dependencies]\nrand = \"0.8\"\n")
    task_set = load_tasks(f"exercism:{tmp_path / 'polyglot'}:rust")
    assert [t.task_id for t in task_set.tasks] == ["exercism/rust/word-count-lite"]
    assert "1 exercise(s) left out" in task_set.prompt_form and "rand" in task_set.prompt_form


def test_an_exercise_the_toolchain_cannot_build_is_left_out_and_named(tmp_path):
    """Exercism's forth has two test crates (tests/forth.rs, tests/alloc-attack.rs): the
    loader asks the sandbox's toolchain to make the build, so nothing it accepts fails later."""
    exercise = _copy(tmp_path)
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    (exercise / "tests" / "alloc-attack.rs").write_text("#[test]\nfn small() {}\n")
    config["files"]["test"].append("tests/alloc-attack.rs")
    (exercise / ".meta" / "config.json").write_text(json.dumps(config))
    task_set = load_tasks(f"exercism:{tmp_path / 'polyglot'}:rust")
    assert [t.task_id for t in task_set.tasks] == ["exercism/rust/word-count-lite"]
    assert "rust/safe-divide (a Rust exercise has one test file under tests/" in task_set.prompt_form
    assert "this one has 2: tests/alloc-attack.rs, tests/safe-divide.rs" in task_set.prompt_form


def test_a_spec_that_names_nothing_runnable_says_so(tmp_path):
    with pytest.raises(TaskError, match="holds no exercises"):
        load_tasks(f"exercism:{tmp_path}")
    with pytest.raises(TaskError, match="unknown language 'cobol'"):
        load_tasks(f"exercism:{DATA}:cobol")
    with pytest.raises(TaskError, match="runs no python exercises"):
        load_tasks(f"exercism:{DATA}:python")


def test_the_test_writer_s_file_is_read_into_tests_of_the_same_suite():
    task = next(t for t in load_tasks(f"exercism:{DATA}:rust").tasks if t.task_id.endswith("safe-divide"))
    answer = ("```rust\nuse safe_divide::*;\n\n#[test]\nfn one() { assert_eq!(divide(4, 2), Some(2)); }\n\n"
              "#[test]\nfn two() { assert_eq!(divide(1, 0), None); }\n\n#[test]\nfn three() {}\n```")
    written = kind_for(task).parse_tests(answer, task, max_tests=2)
    assert [t.test for t in written.tests] == ["one", "two"] and written.dropped["over_limit"] == 1
    suite = written.tests[0].suite
    assert suite.file("tests/safe-divide.rs").startswith("use safe_divide") and suite.file("Cargo.toml")
    assert "exact_division" not in suite.file("tests/safe-divide.rs")  # the hidden file is replaced, not joined


@pytest.mark.parametrize("language, text, names", [
    ("rust", "#[test]\n#[ignore]\nfn a() {}\n// #[test] fn commented() {}\n#[test] fn b() {}", ["a", "b"]),
    ("rust", "#[test]\nfn a() { let s = \"}\"; let c = '{'; let r = r#\"}}\"#; }\nfn helper<'a>(x: &'a str) {}\n"
             "mod m {\n  use super::*;\n  /* fn fake() {} */\n  #[test]\n  #[should_panic]\n  fn b() {}\n"
             "  mod n { #[test] fn c() {} }\n  #[test] fn d() {}\n}\n#[test]\n#[cfg(feature = \"x\")]\nfn e() {}\n"
             "#[cfg(feature = \"io\")]\nuse std::io;\n#[test] fn g() {}\n#[cfg(feature = \"io\")]\nmod io { #[test] fn h() {} }\n"
             "#[test] fn i() {}", ["a", "m::b", "m::n::c", "m::d", "g", "i"]),
    ("go", "func TestA(t *testing.T) {}\nfunc Testlower(t *testing.T) {}\nfunc TestB(t *testing.T) {}\nfunc BenchmarkC(b *testing.B) {}",
     ["TestA", "TestB"]),
    ("cpp", 'TEST_CASE("one") {}\n#if defined(EXERCISM_RUN_ALL_TESTS)\nTEST_CASE("two \\"q\\"", "[tag]") {}\n#endif',
     ["one", 'two "q"']),
    ("cpp", 'TEST_CASE("one") {}\n#if defined(EXERCISM_INCLUDE_BENCHMARK)\n#ifdef X\n#endif\nTEST_CASE("benchmark") {}\n'
            '#endif\nTEST_CASE("two") {}', ["one", "two"]),
    ("javascript", "describe('A', () => {\n  test('x', () => {});\n  describe(\"B\", () => { xit(`y`, () => {}); });\n});\ntest('z', () => {});",
     ["A x", "A B y", "z"]),
])
def test_each_language_s_test_names_as_its_runner_knows_them(language, text, names):
    assert runner_test_names(language, text) == names


def test_javascript_modules_are_turned_as_babel_turns_them_for_jest():
    """ES modules are strict and mark themselves so; a default import takes a CommonJS
    module's whole exports (babel's interop: Exercism's proof.ci.js files assign
    module.exports); a plain CommonJS file is left as it is; every line keeps its number."""
    from sandbox.toolchains.javascript import exports_to_commonjs, imports_to_require

    es = exports_to_commonjs("import { a } from './b';\nexport default class X {}\nexport const y = 1;\n")
    lines = es.splitlines()
    assert lines[0].startswith('"use strict"; const { a } = require(\'./b.js\');')
    assert lines[1:3] == ["class X {}", "const y = 1;"]
    assert '"__esModule"' in lines[3] and "module.exports['default'] = X;" in lines[3]
    plain = "class W {}\nmodule.exports = W;\n"
    assert exports_to_commonjs(plain).rstrip("\n") == plain.rstrip("\n")
    default = imports_to_require("import W from './word-search';")
    assert default == "const W = ((m) => (m && m.__esModule ? m.default : m))(require('./word-search.js'));"
    assert "require('path')" in imports_to_require("import { resolve } from 'path';")  # a package's name as given


@pytest.mark.parametrize("language, test_file, first_line, kept, said", [
    ("cpp", "leap/leap_test.cpp", '#include "boost/date_time/posix_time/posix_time.hpp"', "exercism/cpp/raindrops",
     "cpp/leap (leap_test.cpp includes Boost, which the sandbox's C++ image does not hold)"),
    ("javascript", "vowel-count/vowel-count.spec.js", "const { spawnSync } = require('node:child_process');",
     "exercism/javascript/stack", "javascript/vowel-count (its vowel-count.spec.js requires 'child_process'"),
])
def test_an_exercise_whose_tests_need_what_is_not_here_is_left_out_and_named(tmp_path, language, test_file, first_line,
                                                                            kept, said):
    """C++ exercises that include Boost (Exercism's gigasecond, meetup); JavaScript tests
    that require what the runner refuses (grep spawns processes)."""
    root = tmp_path / "polyglot"
    shutil.copytree(DATA / language, root / language)
    path = root / language / "exercises" / "practice" / test_file
    path.write_text(first_line + "\n" + path.read_text())
    task_set = load_tasks(f"exercism:{root}:{language}")
    assert [t.task_id for t in task_set.tasks] == [kept]
    assert "1 exercise(s) left out" in task_set.prompt_form and said in task_set.prompt_form


def test_go_s_every_test_file_is_built_with_the_tests_named_or_not(tmp_path):
    """`go test` builds every *_test.go of the folder: so does the loader, whether or not
    config.json names it (Aider's bottle-song keeps its cases in an unnamed cases_test.go);
    a link among them is never followed."""
    root = tmp_path / "polyglot"
    shutil.copytree(DATA / "go", root / "go")
    exercise = root / "go" / "exercises" / "practice" / "clamp"
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    config["files"].pop("editor")
    (exercise / ".meta" / "config.json").write_text(json.dumps(config))
    (exercise / "more_test.go").write_text("package clamp\n\nimport \"testing\"\n\nfunc TestMore(t *testing.T) {}\n")
    (exercise / "secret_test.go").symlink_to("/etc/hostname")
    task = next(t for t in load_tasks(f"exercism:{root}:go").tasks if t.task_id == "exercism/go/clamp")
    files = dict(task.hidden_tests[0].suite.files)
    assert "cases_test.go" in files and "more_test.go" in files and "secret_test.go" not in files
    assert [t.test for t in task.hidden_tests] == ["TestClamp", "TestClampEdges", "TestMore"]


def _config_of(exercise: Path) -> dict:
    return json.loads((exercise / ".meta" / "config.json").read_text())


def _write_config(exercise: Path, config: dict) -> None:
    (exercise / ".meta" / "config.json").write_text(json.dumps(config))


def _load_error(tmp_path: Path) -> str:
    with pytest.raises(TaskError) as caught:
        load_tasks(f"exercism:{tmp_path / 'polyglot'}:rust")
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_link_at_any_component_is_never_followed(tmp_path, monkeypatch):
    """config.json naming p/self/environ where p -> /proc would read the harness's
    environment into the task set; a linked folder in the middle of a name, a linked
    .docs folder and a linked file are refused the same way, each naming the file."""
    monkeypatch.setenv("EXERCISM_LOADER_SECRET", "s3cret-value")
    exercise = _copy(tmp_path)
    (exercise / "p").symlink_to("/proc")
    config = _config_of(exercise)
    config["files"]["editor"] = ["p/self/environ"]
    _write_config(exercise, config)
    message = _load_error(tmp_path)
    assert "p/self/environ" in message and "is a link" in message and "s3cret" not in message

    outside = tmp_path / "outside"
    shutil.copytree(exercise / "tests", outside / "tests")
    shutil.copytree(exercise / ".docs", outside / ".docs")
    config["files"].pop("editor")
    _write_config(exercise, config)
    shutil.rmtree(exercise / "tests")
    (exercise / "tests").symlink_to(outside / "tests")
    assert "is a link" in _load_error(tmp_path)

    (exercise / "tests").unlink()
    shutil.copytree(outside / "tests", exercise / "tests")
    shutil.rmtree(exercise / ".docs")
    (exercise / ".docs").symlink_to(outside / ".docs")
    message = _load_error(tmp_path)
    assert ".docs/" in message and "is a link" in message

    (exercise / ".docs").unlink()
    shutil.copytree(outside / ".docs", exercise / ".docs")
    (exercise / "src" / "lib.rs").unlink()
    (exercise / "src" / "lib.rs").symlink_to(outside / "tests" / "safe-divide.rs")
    message = _load_error(tmp_path)
    assert "src/lib.rs" in message and "is a link" in message


def test_a_linked_exercise_folder_is_left_out_and_named(tmp_path):
    exercise = _copy(tmp_path)
    outside = tmp_path / "elsewhere" / "other"
    shutil.copytree(exercise, outside)
    (exercise.parent / "linked").symlink_to(outside)
    task_set = load_tasks(f"exercism:{tmp_path / 'polyglot'}:rust")
    assert "exercism/rust/linked" not in {t.task_id for t in task_set.tasks}
    assert "rust/linked (a link; links in a task folder are never followed)" in task_set.prompt_form


def test_a_fifo_named_as_a_file_is_refused_at_once(tmp_path):
    exercise = _copy(tmp_path)
    os.mkfifo(exercise / "pipe.rs")
    config = _config_of(exercise)
    config["files"]["editor"] = ["pipe.rs"]
    _write_config(exercise, config)
    assert "pipe.rs: not a regular file" in _load_error(tmp_path)


def test_names_are_normalised_before_they_are_read_or_counted(tmp_path):
    """One 2 MB file listed 300 times as ./x, ././x, ... is one file, read once; five
    distinct ones pass the 8 MB an exercise may hold, and the error says so."""
    exercise = _copy(tmp_path)
    (exercise / "big.rs").write_text("// " + "x" * (2 * 1024 * 1024 - 10) + "\n")
    config = _config_of(exercise)
    config["files"]["editor"] = [("./" * i) + "big.rs" for i in range(300)] + [".//big.rs", "././/./big.rs"]
    _write_config(exercise, config)
    task = next(t for t in load_tasks(f"exercism:{tmp_path / 'polyglot'}:rust").tasks if t.task_id.endswith("safe-divide"))
    names = [name for name, _ in task.hidden_tests[0].suite.files]
    assert [n for n in names if n.endswith("big.rs")] == ["big.rs"]
    for i in range(5):
        (exercise / f"big{i}.rs").write_text("// " + "x" * (2 * 1024 * 1024 - 10) + "\n")
    config["files"]["editor"] = [f"big{i}.rs" for i in range(5)]
    _write_config(exercise, config)
    message = _load_error(tmp_path)
    assert "the exercise's files are larger than 8,388,608 bytes" in message and str(exercise) in message
