"""Rust (rustc 1.85 in the sandbox's Rust image)."""
import re

from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import ExerciseLayout


# Exercism's layout (harness/kinds/languages/runner.py): how its test files name their tests.
# Comments, string and char literals (whose braces are not blocks), then what counts: a
# module's block, #[test], a cfg attribute, a function's name, braces.
_TOKEN = re.compile(r"""//[^\n]*|/\*.*?\*/|(?<!\w)b?r(#*)".*?"\1|(?<!\w)b?"(?:[^"\\]|\\.)*"|"""
                    r"""(?<!\w)b?'(?:[^'\\\n]|\\.)'|\bmod\s+([A-Za-z_]\w*)\s*\{|#\[test\]|#\[cfg\(([^\]]*)\)\]|"""
                    r"""\bfn\s+(\$?[A-Za-z_]\w*)|[{};]""", re.DOTALL)


def _rust(text: str) -> list[str]:
    """The `#[test]` functions of a test file, as libtest names them: with the path of the
    modules they sit in (`test::type_not_in_scope`); tests behind a cargo feature
    (`#[cfg(feature = ...)]`, which `cargo test` leaves out unless asked) are not tests here."""
    names: list[str] = []
    modules: list[tuple[str, int, bool]] = []  # (name, depth its block opened at, behind a feature)
    depth, is_test, gated = 0, False, False
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if m.group(2):  # mod name {: a cfg before it holds for everything in it
            depth += 1
            modules.append((m.group(2), depth, gated or any(g for _, _, g in modules)))
            is_test = gated = False
        elif token == "#[test]":
            is_test = True
        elif m.group(3) is not None:  # #[cfg(...)]
            gated = gated or "feature" in m.group(3)
        elif m.group(4):  # fn name
            hidden = gated or any(g for _, _, g in modules)
            if is_test and not hidden and not m.group(4).startswith("$"):
                names.append("::".join([*(name for name, _, _ in modules), m.group(4)]))
            is_test = gated = False
        elif token in ("{", ";"):  # an attribute's item ended or opened (a use, an impl): its cfg is spent
            depth += token == "{"
            gated = False
        elif token == "}":
            depth -= 1
            while modules and depth < modules[-1][1]:
                modules.pop()
    return names


def _cargo_dependencies(files: dict[str, str]) -> str | None:
    """Why a Rust exercise cannot be built offline: its Cargo.toml needs crates."""
    manifest = files.get("Cargo.toml", "")
    for section in re.findall(r"^\[((?:dev-|build-)?dependencies)\]\s*\n(.*?)(?=^\[|\Z)", manifest, re.MULTILINE | re.DOTALL):
        crates = [line.split("=", 1)[0].strip() for line in section[1].splitlines() if "=" in line and not line.strip().startswith("#")]
        if crates:
            return f"Cargo.toml needs crates ({', '.join(crates)}) that are not available offline"
    return None


def _crate(files: dict[str, str], program_path: str) -> dict[str, str]:
    found = re.search(r'^\s*name\s*=\s*"([A-Za-z0-9_-]+)"', files.get("Cargo.toml", ""), re.MULTILINE)
    return {"crate": found.group(1).replace("-", "_") if found else ""}


RUST_EXERCISE = ExerciseLayout(_rust, (".rs",), support=("Cargo.toml",), problem=_cargo_dependencies, naming=_crate,
                              companions=("src/*.rs",), test_data=("tests/*",))


RUST = Language(name="rust", display="Rust", fences=("rust", "rs"), assert_form="assert_eq!(f(...), ...);",
                main_function=r"^\s*(pub\s+)?fn\s+main\s*\(\s*\)", extension="rs", exercise=RUST_EXERCISE, aliases=("rs",))
