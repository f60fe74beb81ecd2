"""C++: Debian's g++ 12, C++17, -O2 (as contest judges compile). The driver's first part
goes before the program (so no macro of the program reaches it: `#define int long long`
is common), the program follows under `#line 1 "main.cpp"`, so the compiler's line
numbers are the program's, and `signed main()` calling the driver comes last."""
from __future__ import annotations

from sandbox.toolchains._drivers import driver
from sandbox.toolchains.base import PROGRAM_ARTIFACT, Build, Toolchain

FLAGS = ("-std=c++17", "-O2")
# <bits/stdc++.h> precompiled with FLAGS, where gcc looks for it (beside the header): the
# driver's prelude and most contest programs include it first; compiling it anew took
# most of a compile's time (measured: ~4 s of ~5 s a program).
RUNNER_FLAGS = ("-std=c++17", "-O0", "-w", "-fmax-errors=5")
# The harness's Catch2 main (drivers/cpp_runner.cpp, in place of an exercise's
# tests-main.cpp), compiled once when the image is built against Debian's Catch2 (v2.13,
# the version Exercism's C++ track ships): compiling it with each program took ~9 s.
RUNNER_OBJECT = "/opt/sandbox/lib/harness-catch-runner.o"
SETUP = f"""set -e
cd /usr/include/x86_64-linux-gnu/c++/12/bits
g++-12 -std=c++17 -O2 -x c++-header stdc++.h -o stdc++.h.gch
chmod 0644 stdc++.h.gch
mkdir -p /opt/sandbox/lib
cat > /tmp/harness-catch-runner.cpp <<'HARNESS_RUNNER_EOF'
{driver("cpp_runner.cpp")}
HARNESS_RUNNER_EOF
g++-12 {" ".join(RUNNER_FLAGS)} -c /tmp/harness-catch-runner.cpp -o {RUNNER_OBJECT}
rm /tmp/harness-catch-runner.cpp
chmod 0755 /opt/sandbox/lib && chmod 0644 {RUNNER_OBJECT}
"""
SOURCE = "main.cpp"  # the program alone: what the compiler's messages name and quote
COMBINED = "harness_main.cpp"  # the driver's prelude, the program under `#line 1 "main.cpp"`, main()
DRIVER_NAME = "harness_driver.cpp"
CATCH = "catch.hpp"  # what a test that includes "test/catch.hpp" finds: Debian's Catch2


class CppToolchain(Toolchain):
    def build(self, program: str, entry_point: str | None) -> Build:
        text = program if program.endswith("\n") else program + "\n"
        sources, compiled = {SOURCE: text}, SOURCE
        if entry_point:
            # gcc quotes a message's line from the file #line names: main.cpp, the program alone.
            sources[COMBINED] = (driver("cpp_prelude.hpp") + f'#line 1 "{SOURCE}"\n' + text
                                 + f'#line 1 "{DRIVER_NAME}"\nsigned main() {{ return __harness::run({entry_point}); }}\n')
            compiled = COMBINED
        steps = (("g++-12", *FLAGS, "-fmax-errors=5", "-w", "-o", PROGRAM_ARTIFACT, compiled),)
        return Build(sources, steps, ("./" + PROGRAM_ARTIFACT,), {}, SOURCE, DRIVER_NAME if entry_point else "")


    def build_runner(self, program: str, suite) -> Build:
        """An Exercism exercise: the program is the solution's header (the whole solution:
        the exercise's .cpp is not compiled), each `*_test.cpp` compiled with it against
        Debian's Catch2 (EXERCISM_TEST_SUITE, as Exercism's own test runner builds them; an
        exercise's bundled `test/catch.hpp` is not used) and linked with the harness's
        Catch2 main, compiled when the image was built."""
        tests = sorted(path for path, _ in suite.files if path.endswith("_test.cpp") and "/" not in path)
        if not tests:
            raise ValueError("a C++ exercise has a *_test.cpp file")
        text = program if program.endswith("\n") else program + "\n"
        sources = {CATCH: "#include <catch2/catch.hpp>\n", suite.program_path: text}
        for path, body in suite.files:  # other headers of the exercise, beside the solution's
            if path.endswith((".h", ".hpp")) and "/" not in path and path != suite.program_path:
                sources[path] = body
        steps = []
        for number, path in enumerate(tests):
            # The scratch folder is flat: a test's `#include "test/catch.hpp"` finds Debian's there.
            sources[path] = (suite.file(path) or "").replace('"test/catch.hpp"', f'"{CATCH}"')
            # Exercism's tests are guarded so that only the first runs until EXERCISM_RUN_ALL_TESTS.
            steps.append(("g++-12", *RUNNER_FLAGS, "-DEXERCISM_TEST_SUITE", "-DEXERCISM_RUN_ALL_TESTS", "-c", path,
                          "-o", f"test{number}.o"))
        steps.append(("g++-12", "-o", PROGRAM_ARTIFACT, RUNNER_OBJECT, *(f"test{n}.o" for n in range(len(tests)))))
        return Build(sources, tuple(steps), ("./" + PROGRAM_ARTIFACT,), {}, suite.program_path)


CPP = CppToolchain(
    language="cpp",
    packages=("g++-12", "catch2"),
    setup=SETUP,
    compile_timeout_s=60.0,
    compile_memory_mb=2048,
    fences=("cpp", "c++", "cc", "cxx"),
)
