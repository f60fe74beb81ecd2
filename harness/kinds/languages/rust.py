"""Rust (rustc 1.85 in the sandbox's Rust image)."""
import re

from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import ExerciseLayout, no_comments


# Exercism's layout (harness/kinds/languages/runner.py): how its test files name their tests.
def _rust(text: str) -> list[str]:
    return re.findall(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*(?:pub\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)", no_comments(text))


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


RUST_EXERCISE = ExerciseLayout(_rust, (".rs",), support=("Cargo.toml",), problem=_cargo_dependencies, naming=_crate)


RUST = Language(name="rust", display="Rust", fences=("rust", "rs"), assert_form="assert_eq!(f(...), ...);",
                main_function=r"^\s*(pub\s+)?fn\s+main\s*\(\s*\)", extension="rs", exercise=RUST_EXERCISE)
