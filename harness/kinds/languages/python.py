"""Python: the harness's own language (extract.py, the worker's two-process verdict)."""
from harness.kinds.languages.base import Language

PYTHON = Language(name="python", display="Python", fences=("python", "py", "python3", "py3", ""),
                  assert_form="assert f(...) == ...", comment="#", extension="py", aliases=("py",))
