"""Rust: Debian's rustc-web (1.85), one rustc call per program; the driver is appended
after the program in the same file, so the compiler's line numbers are the program's."""
from __future__ import annotations

from sandbox.toolchains._drivers import driver
from sandbox.toolchains.base import PROGRAM_ARTIFACT, Build, Toolchain

SOURCE = "main.rs"


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


RUST = RustToolchain(
    language="rust",
    packages=("rustc-web", "cargo-web"),
    compile_timeout_s=60.0,
    compile_memory_mb=2048,
    fences=("rust", "rs"),
)
