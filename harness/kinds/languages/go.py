"""Go (1.23 in the sandbox's Go image). A program is in package main (the toolchain
puts it there); tests are written as the driver reads them, one line each."""
import re

from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import ExerciseLayout


# Exercism's layout (harness/kinds/languages/runner.py): how its test files name their tests.
def _go(text: str) -> list[str]:
    found = re.findall(r"^func\s+(Test[A-Za-z0-9_]*)\s*\(\s*\w+\s+\*testing\.T\s*\)", text, re.MULTILINE)
    return [name for name in found if name == "Test" or not name[4:5].islower()]


def _package(files: dict[str, str], program_path: str) -> dict[str, str]:
    found = re.search(r"^package\s+(\w+)", files.get(program_path, ""), re.MULTILINE)
    return {"package": found.group(1) if found else ""}


GO_EXERCISE = ExerciseLayout(_go, (".go",), naming=_package, companions=("*_test.go",), test_data=("*_test.go",))


GO = Language(name="go", display="Go", fences=("go", "golang"), assert_form="assert(f(...) == ...)",
              main_function=r"^\s*func\s+main\s*\(\s*\)", extension="go", exercise=GO_EXERCISE, aliases=("go_test.go", "golang"))
