"""JavaScript: Debian's node 18, run from its source (nothing to compile: a syntax error
is the program's error, with node's line numbers, which are the program's: the driver is
appended after it). node makes a pipe for each of its event loops, which no job may make
(worker/confine.py): its workers keep spare pipes for it (`--spare-pipes`), handed out
by a preloaded library the image builds (image/setup/harness_pipes.c)."""
from __future__ import annotations

import re

from sandbox.toolchains._drivers import driver
from sandbox.toolchains.base import Build, Toolchain

SOURCE = "main.js"
RUNNER = "harness_runner.js"  # the harness's jest shim (drivers/js_runner.js)
# What the test file's first line binds before its imports run: the shim's functions, so
# a solution that replaces the globals (`expect`, `test`) changes nothing the test uses.
JEST_NAMES = ("describe", "xdescribe", "fdescribe", "test", "it", "xtest", "xit", "fit", "expect",
              "beforeEach", "afterEach", "beforeAll", "afterAll", "jest")
_IMPORT = re.compile(r"""^([ \t]*)import\s+(?:(\w+)\s*,?\s*)?(?:\{([^}]*)\}|\*\s+as\s+(\w+))?\s*from\s*['"]([^'"]+)['"]\s*;?""",
                     re.MULTILINE)
_EXPORT_DECLARATION = re.compile(r"^([ \t]*)export\s+(default\s+)?((?:async\s+)?function\*?|class|const|let|var)\s+([A-Za-z_$][\w$]*)",
                                 re.MULTILINE)
_EXPORT_LIST = re.compile(r"^([ \t]*)export\s*\{([^}]*)\}\s*;?", re.MULTILINE)
_EXPORT_DEFAULT = re.compile(r"^([ \t]*)export\s+default\s+", re.MULTILINE)


def _module(path: str) -> str:
    return path if path.endswith((".js", ".json")) else path + ".js"


def imports_to_require(text: str) -> str:
    """ES `import ... from '...'` lines as CommonJS requires, each in its own line (node
    runs the files as CommonJS; Exercism's are ES modules that babel turns so for jest)."""
    def one(m: re.Match) -> str:
        indent, default, names, star, source = m.groups()
        module = f"require({_module(source)!r})"
        parts = []
        if star:
            parts.append(f"const {star} = {module};")
        if default:
            parts.append(f"const {default} = {module}.default;")
        if names is not None:
            pairs = [n.strip() for n in names.split(",") if n.strip()]
            bound = ", ".join(p.replace(" as ", ": ") for p in pairs)
            parts.append(f"const {{ {bound} }} = {module};")
        return indent + " ".join(parts)
    return _IMPORT.sub(one, text)


def exports_to_commonjs(text: str) -> str:
    """An ES module's exports as CommonJS ones, its lines kept: `export` dropped where it
    stands, the names assigned to module.exports after the last line."""
    names: list[tuple[str, str]] = []  # (exported as, local name)

    def declaration(m: re.Match) -> str:
        indent, default, keyword, name = m.groups()
        names.append(("default" if default else name, name))
        return f"{indent}{keyword} {name}"

    def listed(m: re.Match) -> str:
        for part in m.group(2).split(","):
            local, _, exported = part.strip().partition(" as ")
            if local:
                names.append((exported.strip() or local, local))
        return m.group(1)

    text = _EXPORT_DECLARATION.sub(declaration, text)
    text = _EXPORT_LIST.sub(listed, text)
    text = _EXPORT_DEFAULT.sub(lambda m: m.group(1) + "module.exports.default = ", text)
    text = imports_to_require(text)
    if not text.endswith("\n"):
        text += "\n"
    return text + "".join(f"module.exports[{exported!r}] = {local};" for exported, local in names) + "\n"

PIPES_LIBRARY = "/opt/sandbox/lib/libharness_pipes.so"
SPARE_PIPES = 6  # node 18 makes 4 at start (measured); more for worker threads
SETUP = f"""set -e
mkdir -p /opt/sandbox/lib
gcc -shared -fPIC -O2 -Wall -o {PIPES_LIBRARY} /opt/sandbox/setup/harness_pipes.c
chmod 0755 /opt/sandbox/lib && chmod 0644 {PIPES_LIBRARY}
"""


class JavaScriptToolchain(Toolchain):
    def build(self, program: str, entry_point: str | None) -> Build:
        text = program if program.endswith("\n") else program + "\n"
        lines = text.count("\n")
        if entry_point:
            text += driver("js_driver.js").replace("__ENTRY__", entry_point)
        return Build({}, (), ("node", SOURCE), {SOURCE: text}, SOURCE, "",
                     lines if entry_point else 0)


    def build_runner(self, program: str, suite) -> Build:
        """An Exercism exercise: the solution and the `*.spec.js` test file as CommonJS
        (their ES imports and exports turned, each line where it was), run by the
        harness's jest shim (drivers/js_runner.js) from their source."""
        specs = sorted(path for path, _ in suite.files if path.endswith(".spec.js") and "/" not in path)
        if len(specs) != 1:
            raise ValueError("a JavaScript exercise has one *.spec.js test file")
        files = {path: exports_to_commonjs(body) for path, body in suite.files
                 if path.endswith(".js") and "/" not in path and path not in specs}
        files[suite.program_path] = exports_to_commonjs(program)
        binding = f"const {{ {', '.join(JEST_NAMES)} }} = globalThis.__harnessJest; "
        files[specs[0]] = binding + imports_to_require(suite.file(specs[0]) or "")
        files[RUNNER] = driver("js_runner.js").replace("__SPEC__", specs[0])
        return Build({}, (), ("node", RUNNER), files, suite.program_path)


JAVASCRIPT = JavaScriptToolchain(
    language="javascript",
    compiles=False,
    packages=("nodejs", "gcc", "libc6-dev"),
    setup=SETUP,
    env={"LD_PRELOAD": PIPES_LIBRARY, "NODE_DISABLE_COLORS": "1"},
    run_memory_mb=4096,
    threads=16,
    spare_pipes=SPARE_PIPES,
    fences=("javascript", "js", "node"),
)
