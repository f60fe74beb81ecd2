"""C++ (g++ 12, C++17, in the sandbox's C++ image)."""
import re

from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import ExerciseLayout, no_comments


# Exercism's layout (harness/kinds/languages/runner.py): how its test files name their tests.
def _cpp(text: str) -> list[str]:
    found = re.findall(r'\bTEST_CASE\s*\(\s*"((?:[^"\\\n]|\\.)*)"', _without_benchmarks(no_comments(text)))
    return [bytes(name, "utf-8").decode("unicode_escape") if "\\" in name else name for name in found]


_CPP_IF = re.compile(r"^\s*#\s*if(n?def)?\b")
_CPP_ENDIF = re.compile(r"^\s*#\s*endif\b")


def _without_benchmarks(text: str) -> str:
    """A C++ test file without its `#if defined(EXERCISM_INCLUDE_BENCHMARK)` blocks: a
    benchmark is not a test, and Exercism's runner does not build it."""
    kept: list[str] = []
    skipping, depth = False, 0
    for line in text.splitlines():
        if skipping:
            depth += 1 if _CPP_IF.match(line) else -1 if _CPP_ENDIF.match(line) else 0
            skipping = depth > 0
            continue
        if _CPP_IF.match(line) and "EXERCISM_INCLUDE_BENCHMARK" in line:
            skipping, depth = True, 1
            continue
        kept.append(line)
    return "\n".join(kept)


def _cpp_libraries(files: dict[str, str]) -> str | None:
    """Why a C++ exercise cannot be built here: it includes Boost (Exercism's gigasecond
    and meetup), which the C++ image does not hold."""
    for name, text in files.items():
        if re.search(r"^\s*#\s*include\s*[<\"]boost/", text, re.MULTILINE):
            return f"{name} includes Boost, which the sandbox's C++ image does not hold"
    return None


CPP_EXERCISE = ExerciseLayout(_cpp, (".h", ".hpp"), merged=(".cpp", ".cc"), problem=_cpp_libraries,
                              test_data=("*_test.cpp", "test/*"))


CPP = Language(name="cpp", display="C++", fences=("cpp", "c++", "cc", "cxx"), assert_form="assert(f(...) == ...);",
               main_function=r"^\s*(int|signed|auto)\s+main\s*\([^)]*\)", extension="cpp", exercise=CPP_EXERCISE, aliases=("cxx", "c++", "cc"))
