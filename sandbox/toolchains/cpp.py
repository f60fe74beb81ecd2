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
SETUP = """set -e
cd /usr/include/x86_64-linux-gnu/c++/12/bits
g++-12 -std=c++17 -O2 -x c++-header stdc++.h -o stdc++.h.gch
chmod 0644 stdc++.h.gch
"""
SOURCE = "main.cpp"  # the program alone: what the compiler's messages name and quote
COMBINED = "harness_main.cpp"  # the driver's prelude, the program under `#line 1 "main.cpp"`, main()
DRIVER_NAME = "harness_driver.cpp"
RUNNER = "harness_runner.cpp"  # the harness's Catch2 main (drivers/cpp_runner.cpp), in place of tests-main.cpp
CATCH = "catch.hpp"
# Exercism's C++ tests are guarded so that only the first runs until this is defined.
RUNNER_FLAGS = ("-std=c++17", "-O0", "-w", "-fmax-errors=5")


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
        the exercise's .cpp is not compiled), each `*_test.cpp` compiled with it and with
        the exercise's own `test/catch.hpp`, linked with the harness's Catch2 main."""
        catch = suite.file("test/catch.hpp")
        tests = sorted(path for path, _ in suite.files if path.endswith("_test.cpp") and "/" not in path)
        if catch is None or not tests:
            raise ValueError("a C++ exercise has test/catch.hpp and a *_test.cpp file")
        text = program if program.endswith("\n") else program + "\n"
        sources = {CATCH: catch, RUNNER: driver("cpp_runner.cpp"), suite.program_path: text}
        for path, body in suite.files:  # other headers of the exercise, beside the solution's
            if path.endswith((".h", ".hpp")) and "/" not in path and path != suite.program_path:
                sources[path] = body
        steps = []  # the tests first: an error in the program shows before Catch's main is compiled (~9 s)
        for number, path in enumerate(tests):
            # The scratch folder is flat: the test's `#include "test/catch.hpp"` finds it there.
            sources[path] = (suite.file(path) or "").replace('"test/catch.hpp"', f'"{CATCH}"')
            steps.append(("g++-12", *RUNNER_FLAGS, "-DEXERCISM_RUN_ALL_TESTS", "-c", path, "-o", f"test{number}.o"))
        steps.append(("g++-12", *RUNNER_FLAGS, "-c", RUNNER, "-o", "runner.o"))
        steps.append(("g++-12", "-o", PROGRAM_ARTIFACT, "runner.o", *(f"test{n}.o" for n in range(len(tests)))))
        return Build(sources, tuple(steps), ("./" + PROGRAM_ARTIFACT,), {}, suite.program_path)


CPP = CppToolchain(
    language="cpp",
    packages=("g++-12",),
    setup=SETUP,
    compile_timeout_s=60.0,
    compile_memory_mb=2048,
    fences=("cpp", "c++", "cc", "cxx"),
)
