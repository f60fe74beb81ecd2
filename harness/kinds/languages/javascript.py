"""JavaScript (node 18 in the sandbox's JavaScript image), a CommonJS script."""
from harness.kinds.languages.base import Language
from harness.kinds.languages.runner import JAVASCRIPT_EXERCISE

JAVASCRIPT = Language(name="javascript", display="JavaScript", fences=("javascript", "js", "node", "jsx"),
                      assert_form="assert.deepStrictEqual(f(...), ...);", extension="js", exercise=JAVASCRIPT_EXERCISE)
