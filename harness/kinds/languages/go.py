"""Go (1.23 in the sandbox's Go image). A program is in package main (the toolchain
puts it there); tests are written as the driver reads them, one line each."""
from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import GO_EXERCISE

GO = Language(name="go", display="Go", fences=("go", "golang"), assert_form="assert(f(...) == ...)",
              main_function=r"^\s*func\s+main\s*\(\s*\)", extension="go", exercise=GO_EXERCISE)
