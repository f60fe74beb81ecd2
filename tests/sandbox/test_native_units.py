"""Units of the sandbox's other languages that need no engine: the driver's result lines,
the artifact a worker already holds, the toolchains' files and messages."""
from __future__ import annotations

from sandbox._pool import _artifacts_known, _Channel
from sandbox.toolchains import cut_message, toolchain
from sandbox.toolchains.go import as_main
from sandbox.worker.native import _results


def test_only_lines_framed_by_the_job_s_token_count_and_nothing_after_end():
    data = b"forged 0 3\ntok 0 4\ntok 0 5\ntok 1 [1]\ntok end\ntok 2 9\n"
    assert _results(data, "tok", 2) == {0: "4", 1: "[1]", "end": True}
    # An `end` before every result is there ends nothing: the missing result decides.
    assert _results(b"tok end\ntok 0 1\n", "tok", 2) == {0: "1"}


def test_a_worker_is_sent_an_artifact_whole_once_then_its_digest():
    channel = _Channel()
    native = {"files": {"program": {"b64": "AAAA", "sha": "d1", "executable": True}}, "argv": ["./program"]}
    first = _artifacts_known(channel, native)
    second = _artifacts_known(channel, native)
    assert first["files"]["program"]["b64"] == "AAAA"
    assert "b64" not in second["files"]["program"] and second["files"]["program"]["sha"] == "d1"
    assert "b64" in _artifacts_known(_Channel(), native)["files"]["program"]  # a fresh worker: whole again


def test_go_programs_are_package_main_on_the_same_lines():
    program = "package thing_test\n\nimport (\n    \"fmt\"\n)\n\nfunc f() int { return 1 }\n"
    main = as_main(program)
    assert main.splitlines()[0] == "package main" and main.splitlines()[6] == "func f() int { return 1 }"
    assert main.rstrip().endswith("var _ = fmt.Sprint")


def test_a_compiler_message_is_cut_to_its_first_errors_without_the_scratch_path():
    build = toolchain("rust").build("fn f() {}\n", "f")
    text = "\n".join(f"/tmp/test/main.rs:{n}: error" for n in range(1, 100))
    cut = cut_message(text, build)
    assert cut.startswith("main.rs:1: error") and "/tmp/test" not in cut and "(59 more lines)" in cut


def test_the_cpp_driver_comes_first_and_the_program_keeps_its_line_numbers():
    build = toolchain("cpp").build("#define int long long\nint f(int x) { return x; }\n", "f")
    combined = build.sources["harness_main.cpp"]
    assert combined.index("namespace __harness") < combined.index('\n#line 1 "main.cpp"\n') < combined.index("#define int")
    assert build.sources["main.cpp"].startswith("#define int long long")
    assert "signed main()" in combined


def test_a_language_s_image_is_named_once_whatever_resolves_it():
    from sandbox._engine import image_name, resolve_image

    assert image_name("reflexion-harness-sandbox", "rust") == "reflexion-harness-sandbox-rust"
    assert image_name("reg.example/sb:7", "go") == "reg.example/sb-go:7"
    resolved = resolve_image("reflexion-harness-sandbox", "rust")
    assert resolve_image(resolved, "rust") == resolved and resolved.count("-rust") == 1
    assert resolve_image("reflexion-harness-sandbox") != resolve_image("reflexion-harness-sandbox", "cpp")
