"""C++ (g++ 12, C++17, in the sandbox's C++ image)."""
from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import CPP_EXERCISE

CPP = Language(name="cpp", display="C++", fences=("cpp", "c++", "cc", "cxx"), assert_form="assert(f(...) == ...);",
               main_function=r"^\s*(int|signed|auto)\s+main\s*\([^)]*\)", extension="cpp", exercise=CPP_EXERCISE)
