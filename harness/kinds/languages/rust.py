"""Rust (rustc 1.85 in the sandbox's Rust image)."""
from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import RUST_EXERCISE

RUST = Language(name="rust", display="Rust", fences=("rust", "rs"), assert_form="assert_eq!(f(...), ...);",
                main_function=r"^\s*(pub\s+)?fn\s+main\s*\(\s*\)", extension="rs", exercise=RUST_EXERCISE)
