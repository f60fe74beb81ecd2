"""Go: Debian's golang-1.23 from bookworm-backports. The go command makes pipes for its
helpers; the compiler and linker are called directly instead (`go tool compile` and
`link`), against the standard library compiled when the image was built (/opt/go-std:
its export data and an import map). The driver is a file of its own in package main."""
from __future__ import annotations

import re

from sandbox.toolchains._drivers import driver
from sandbox.toolchains.base import PROGRAM_ARTIFACT, Build, Toolchain

GOROOT = "/usr/lib/go-1.23"
TOOLS = f"{GOROOT}/pkg/tool/linux_amd64"
IMPORTS = "/opt/go-std/importcfg"
SOURCE, DRIVER = "main.go", "harness_driver.go"
RUNNER = "harness_testmain.go"
_PACKAGE = re.compile(r"^(\s*(?://[^\n]*\n\s*|/\*.*?\*/\s*)*)package\s+\w+", re.DOTALL)
SETUP = f"""set -e
export GOROOT={GOROOT} GOTELEMETRY=off GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-trimpath
mkdir -p /opt/go-std
GOCACHE=/opt/go-std/cache {GOROOT}/bin/go build std
GOCACHE=/opt/go-std/cache {GOROOT}/bin/go list -export -f '{{{{if .Export}}}}packagefile {{{{.ImportPath}}}}={{{{.Export}}}}{{{{end}}}}' std > {IMPORTS}
chmod -R a+rX /opt/go-std
"""


# A use of each of these packages, appended after the program when it imports one, so that
# an import the program does not use (MultiPL-E's prompts import fmt for their tests) is not
# a compile error; it changes no line of the program.
_USES = {"fmt": "fmt.Sprint", "strings": "strings.Contains", "math": "math.Abs", "sort": "sort.Ints",
         "strconv": "strconv.Itoa", "unicode": "unicode.IsLetter", "reflect": "reflect.TypeOf", "bytes": "bytes.Equal"}


def as_main(program: str) -> str:
    """The program in package main (its own package clause replaced where it stands,
    so every line keeps its number)."""
    if _PACKAGE.match(program):
        program = _PACKAGE.sub(lambda m: m.group(1) + "package main", program, count=1)
    else:
        program = "package main\n" + program  # one line more: the compiler's numbers are off by one
    used = [use for name, use in _USES.items() if re.search(r'^\s*(import\s+)?"' + name + r'"', program, re.MULTILINE)]
    if used:
        program = program.rstrip("\n") + "\n" + "".join(f"var _ = {use}\n" for use in used)
    return program


class GoToolchain(Toolchain):
    def build(self, program: str, entry_point: str | None) -> Build:
        sources = {SOURCE: as_main(program)}
        names = [SOURCE]
        if entry_point:
            sources[DRIVER] = driver("go_driver.go").replace("__ENTRY__", entry_point)
            names.append(DRIVER)
        steps = ((f"{TOOLS}/compile", "-p", "main", "-complete", "-importcfg", IMPORTS, "-trimpath", "/tmp/test",
                  "-o", "main.a", *names),
                 (f"{TOOLS}/link", "-importcfg", IMPORTS, "-s", "-w", "-o", PROGRAM_ARTIFACT, "main.a"))
        return Build(sources, steps, ("./" + PROGRAM_ARTIFACT,), {}, SOURCE, DRIVER if entry_point else "")


    def build_runner(self, program: str, suite) -> Build:
        """An Exercism exercise: the solution, the exercise's other Go files and its
        `*_test.go` files compiled as one package main (each package clause rewritten in
        its line) with the harness's test main (drivers/go_runner.go), which lists the
        test functions and runs the one a job names with the testing package's own main."""
        files = {path: body for path, body in suite.files if path.endswith(".go") and "/" not in path}
        files[suite.program_path] = program
        names = [name for path, body in sorted(files.items()) if path.endswith("_test.go")
                 for name in test_functions(body)]
        if not names:
            raise ValueError("a Go exercise has a *_test.go file with at least one func TestX(t *testing.T)")
        sources = {path: _PACKAGE.sub(lambda m: m.group(1) + "package main", body, count=1)
                   for path, body in files.items()}
        listed = "".join(f"\t{{Name: {name!r}, F: {name}}},\n".replace("'", '"') for name in names)
        sources[RUNNER] = driver("go_runner.go").replace("__TESTS__", listed)
        steps = ((f"{TOOLS}/compile", "-p", "main", "-complete", "-importcfg", IMPORTS, "-trimpath", "/tmp/test",
                  "-o", "main.a", *sorted(sources)),
                 (f"{TOOLS}/link", "-importcfg", IMPORTS, "-s", "-w", "-o", PROGRAM_ARTIFACT, "main.a"))
        return Build(sources, steps, ("./" + PROGRAM_ARTIFACT,), {}, suite.program_path)


_TEST_FUNCTION = re.compile(r"^func\s+(Test[A-Za-z0-9_]*)\s*\(\s*\w+\s+\*testing\.T\s*\)", re.MULTILINE)


def test_functions(text: str) -> list[str]:
    """The test functions of a Go test file, as `go test` finds them (TestXxx(t *testing.T))."""
    return [name for name in _TEST_FUNCTION.findall(text) if name == "Test" or not name[4:5].islower()]


GO = GoToolchain(
    language="go",
    packages=("golang-1.23-go",),
    apt_suites=("bookworm-backports",),
    setup=SETUP,
    env={"GOROOT": GOROOT, "GOTELEMETRY": "off", "GOTOOLCHAIN": "local", "CGO_ENABLED": "0", "GOMAXPROCS": "2"},
    compile_timeout_s=60.0,
    compile_memory_mb=2048,
    run_memory_mb=4096,  # address space: the runtime reserves its heap's page summaries at start
    threads=16,
    fences=("go", "golang"),
)
