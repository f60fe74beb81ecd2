"""JavaScript: Debian's node 18, run from its source (nothing to compile: a syntax error
is the program's error, with node's line numbers, which are the program's: the driver is
appended after it). node makes a pipe for each of its event loops, which no job may make
(worker/confine.py): its workers keep spare pipes for it (`--spare-pipes`), handed out
by a preloaded library the image builds (image/setup/harness_pipes.c)."""
from __future__ import annotations

from sandbox.toolchains._drivers import driver
from sandbox.toolchains.base import Build, Toolchain

SOURCE = "main.js"
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
