"""JavaScript: Debian's node 18, run from its source (nothing to compile: a syntax error
is the program's error, with node's line numbers, which are the program's: the driver is
appended after it). node makes a pipe for each of its event loops, which no job may make
(worker/confine.py): its workers keep spare pipes for it (`--spare-pipes`), handed out
by a preloaded library the image builds (image/setup/harness_pipes.c)."""
from __future__ import annotations

import json
import re

from sandbox.toolchains._drivers import driver
from sandbox.toolchains.base import Build, Toolchain

SOURCE = "main.js"
# node's modules the runner does not let an exercise's code load (they reach into the
# process, its files or other processes): drivers/js_runner.js refuses them at require.
REFUSED_MODULES = ("fs", "fs/promises", "inspector", "vm", "v8", "worker_threads", "child_process", "cluster", "module")
_REQUIRED = re.compile(r"""\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)|^\s*import\b[^'"\n]*['"]([^'"]+)['"]""", re.MULTILINE)
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
    """A relative import's file, as node's require finds it (a package's name as given)."""
    if not path.startswith(("./", "../")) or path.endswith((".js", ".json")):
        return path
    return path + ".js"


# ES modules are strict (babel says so for jest); a converted file says it on its first line.
STRICT = '"use strict"; '
# A default import takes the module's default export, or (babel's interop) a CommonJS
# module's whole exports (Exercism's proof.ci.js files assign `module.exports = X`).
_DEFAULT_OF = "((m) => (m && m.__esModule ? m.default : m))"
# What a converted ES module sets, so a default import of it takes its default export.
_ES_MARK = 'Object.defineProperty(module.exports, "__esModule", { value: true });'


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
            parts.append(f"const {default} = {_DEFAULT_OF}({module});")
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

    module = bool(_IMPORT.search(text) or _EXPORT_DECLARATION.search(text) or _EXPORT_LIST.search(text)
                  or _EXPORT_DEFAULT.search(text))
    text = _EXPORT_DECLARATION.sub(declaration, text)
    text = _EXPORT_LIST.sub(listed, text)
    defaults = [False]

    def default(m: re.Match) -> str:
        defaults[0] = True
        return m.group(1) + "module.exports.default = "
    text = _EXPORT_DEFAULT.sub(default, text)
    text = imports_to_require(text)
    if not text.endswith("\n"):
        text += "\n"
    exports = "".join(f"module.exports[{exported!r}] = {local};" for exported, local in names)
    if not module:  # a CommonJS file (`module.exports = X`): left as it is
        return text + exports + "\n"
    mark = _ES_MARK if names or defaults[0] else ""
    return STRICT + text + exports + mark + "\n"

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
        for path, body in suite.files:  # the test's own code may not need what the runner refuses
            for found in _REQUIRED.finditer(body):
                name = (found.group(1) or found.group(2)).removeprefix("node:")
                if name in REFUSED_MODULES:
                    raise ValueError(f"its {path} requires '{name}', which the test runner refuses (it reaches "
                                     "into the process, its files or other processes)")
        files = {path: exports_to_commonjs(body) for path, body in suite.files
                 if path.endswith(".js") and "/" not in path and path not in specs}
        files[suite.program_path] = exports_to_commonjs(program)
        binding = f"const {{ {', '.join(JEST_NAMES)} }} = globalThis.__harnessJest; "
        files[specs[0]] = STRICT + binding + imports_to_require(suite.file(specs[0]) or "")
        files[RUNNER] = driver("js_runner.js").replace("__SPEC__", specs[0]).replace(
            "__REFUSED__", json.dumps(list(REFUSED_MODULES)))
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
