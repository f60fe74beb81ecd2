"""Rust: Debian's rustc-web (1.85), one rustc call per program; the driver is appended
after the program in the same file, so the compiler's line numbers are the program's.

A test runner's program (an Exercism exercise: `src/lib.rs`, `tests/<slug>.rs`,
`Cargo.toml`) is built as cargo would build its test, without cargo (it makes pipes, and
would look for crates): the solution as an rlib named as the package, then the test file
with `--test`, included in a crate root whose custom test framework is the harness's
runner (drivers/rust_runner.rs), which needs RUSTC_BOOTSTRAP for rustc 1.85's unstable
`custom_test_frameworks` and `test` features (the compile steps only; no crate but the
standard library is reachable)."""
from __future__ import annotations

import re

from sandbox.toolchains._drivers import driver
from sandbox.toolchains.base import PROGRAM_ARTIFACT, Build, Toolchain

SOURCE = "main.rs"
LIBRARY, TESTS_ROOT = "lib.rs", "harness_tests.rs"
_FLAGS = ("-C", "opt-level=1", "-C", "debuginfo=0", "-A", "warnings")
_NAME = re.compile(r'^\s*name\s*=\s*"([A-Za-z0-9_-]+)"', re.MULTILINE)
_EDITION = re.compile(r'^\s*edition\s*=\s*"(20\d\d)"', re.MULTILINE)


def crate_name(manifest: str) -> str:
    """The package's name in Cargo.toml, as a crate name (`-` -> `_`); ValueError if none."""
    package = manifest.split("[package]", 1)[1] if "[package]" in manifest else ""
    found = _NAME.search(package.split("\n[", 1)[0])
    if found is None:
        raise ValueError("Cargo.toml names no package (`name = \"...\"` under [package])")
    return found.group(1).replace("-", "_")


_INNER = re.compile(r"^([ \t]*)(//!|#!\[)", re.MULTILINE)


def _included(test_file: str) -> str:
    """A test crate's file as the harness's crate root includes it: its inner doc comments
    and inner attributes (`//!`, `#![allow(...)]`), which may only open a file, become
    comments where they stand (every line keeps its number)."""
    return _INNER.sub(lambda m: m.group(1) + "// " + m.group(2), test_file)


class RustToolchain(Toolchain):
    def build(self, program: str, entry_point: str | None) -> Build:
        text = program if program.endswith("\n") else program + "\n"
        lines = text.count("\n")
        if entry_point:
            text += "\n" + driver("rust_driver.rs").replace("__ENTRY__", entry_point)
        steps = (("rustc", "--edition", "2021", "--crate-name", "main", "-C", "opt-level=1", "-C", "debuginfo=0",
                  "-C", "strip=symbols", "-A", "warnings",
                  "-o", PROGRAM_ARTIFACT, SOURCE),)
        return Build({SOURCE: text}, steps, ("./" + PROGRAM_ARTIFACT,), {}, SOURCE, "", lines if entry_point else 0)


    def build_runner(self, program: str, suite) -> Build:
        manifest = suite.file("Cargo.toml")
        tests = sorted(path for path, _ in suite.files if path.startswith("tests/") and path.endswith(".rs"))
        if not manifest:
            raise ValueError("a Rust exercise has a Cargo.toml")
        if len(tests) != 1:
            raise ValueError(f"a Rust exercise has one test file under tests/ (a test crate); this one has "
                             f"{len(tests)}{': ' + ', '.join(tests) if tests else ''}")
        crate = crate_name(manifest)
        found = _EDITION.search(manifest)
        edition = found.group(1) if found else "2021"
        test_file = tests[0].replace("/", "_")  # the scratch folder is flat: tests/bob.rs -> tests_bob.rs
        root = ("#![feature(custom_test_frameworks, test)]\n#![test_runner(crate::__harness_runner::run)]\n"
                f'include!("{test_file}");\n' + driver("rust_runner.rs"))
        text = program if program.endswith("\n") else program + "\n"
        sources = {LIBRARY: text, test_file: _included(suite.file(tests[0]) or ""), TESTS_ROOT: root}
        for path, body in suite.files:  # the crate's other modules (src/pre_implemented.rs), beside lib.rs
            if path.startswith("src/") and path.endswith(".rs") and path.count("/") == 1 and path != suite.program_path:
                sources[path[len("src/"):]] = body
        steps = (("rustc", "--edition", edition, "--crate-type", "lib", "--crate-name", crate, *_FLAGS,
                  "-o", f"lib{crate}.rlib", LIBRARY),
                 ("rustc", "--edition", edition, "--test", "--crate-name", "harness_tests", "--extern",
                  f"{crate}=lib{crate}.rlib", *_FLAGS, "-C", "strip=symbols", "-o", PROGRAM_ARTIFACT, TESTS_ROOT))
        return Build(sources, steps, ("./" + PROGRAM_ARTIFACT,), {}, LIBRARY, env={"RUSTC_BOOTSTRAP": "1"})


RUST = RustToolchain(
    language="rust",
    packages=("rustc-web", "cargo-web"),
    compile_timeout_s=60.0,
    compile_memory_mb=2048,
    fences=("rust", "rs"),
)
