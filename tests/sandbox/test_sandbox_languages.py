"""Programs in Rust, Go, C++ and JavaScript on the docker sandbox: compiled once, graded
by the harness's driver with the comparison in the worker, and hostile programs of each
language that try to pass without the right answer, or to reach what jobs may not.

One pool for the module (each language's image, one worker per domain), and few compiles
per language: CI's time."""
from __future__ import annotations

import pytest

from sandbox.base import Call, CallCase, IoCase, RunRequest

pytestmark = pytest.mark.docker
LANGUAGES = ("rust", "go", "cpp", "javascript")

ADD = {
    "rust": "fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n",
    "go": "package main\n\nfunc add(a int64, b int64) int64 {\n\treturn a + b\n}\n",
    "cpp": "long long add(long long a, long long b) {\n    return a + b;\n}\n",
    "javascript": "function add(a, b) {\n  return a + b;\n}\n",
}
# A type error on the program's third line.
BROKEN = {
    "rust": "fn add(a: i64, b: i64) -> i64 {\n    let s: i64 = 0;\n    s + \"x\"\n}\n",
    "go": "package main\n\nfunc add(a int64, b int64) int64 { return \"x\" }\n",
    "cpp": "long long add(long long a, long long b) {\n    long long s = 0;\n    return s + nothing;\n}\n",
    "javascript": "function add(a, b) {\n  const s = 0;\n  return s +;\n}\n",
}
# Each tries to pass add(1, 2) == 3 without returning 3 from the call the driver makes.
HOSTILE = {
    "exits early with status 0": {
        "rust": "fn add(a: i64, b: i64) -> i64 { std::process::exit(0) }\n",
        "go": "package main\n\nimport \"os\"\n\nfunc add(a int64, b int64) int64 { os.Exit(0); return 0 }\n",
        "cpp": "#include <cstdlib>\nlong long add(long long a, long long b) { std::_Exit(0); }\n",
        "javascript": "function add(a, b) { process.exit(0); }\n",
    },
    "writes a result line of its own on the results descriptor, then exits": {
        "rust": "use std::io::Write;\nuse std::os::unix::io::FromRawFd;\nfn add(a: i64, b: i64) -> i64 {\n"
                "    let mut f = unsafe { std::fs::File::from_raw_fd(4) };\n"
                "    let _ = f.write_all(b\"0 0 3\\n0 end\\n3\\n\");\n    std::process::exit(0)\n}\n",
        "go": "package main\n\nimport \"os\"\n\nfunc add(a int64, b int64) int64 {\n\tos.NewFile(4, \"r\").Write([]byte(\"0 0 3\\n0 end\\n3\\n\"))\n\tos.Exit(0)\n\treturn 0\n}\n",
        "cpp": "#include <unistd.h>\n#include <cstdlib>\nlong long add(long long a, long long b) { write(4, \"0 0 3\\n0 end\\n3\\n\", 13); std::_Exit(0); }\n",
        "javascript": "function add(a, b) { require('fs').writeSync(4, '0 0 3\\n0 end\\n3\\n'); process.exit(0); }\n",
    },
    "kills its own process group": {
        "rust": "extern \"C\" { fn kill(pid: i32, sig: i32) -> i32; }\nfn add(a: i64, b: i64) -> i64 { unsafe { kill(0, 9); } 3 }\n",
        "go": "package main\n\nimport \"syscall\"\n\nfunc add(a int64, b int64) int64 { syscall.Kill(0, syscall.SIGKILL); return 3 }\n",
        "cpp": "#include <csignal>\nlong long add(long long a, long long b) { kill(0, SIGKILL); return 3; }\n",
        "javascript": "function add(a, b) { process.kill(0, 'SIGKILL'); return 3; }\n",
    },
    "prints the answer on stdout": {
        "rust": "fn add(a: i64, b: i64) -> i64 { println!(\"3\"); 0 }\n",
        "go": "package main\n\nimport \"fmt\"\n\nfunc add(a int64, b int64) int64 { fmt.Println(\"3\"); return 0 }\n",
        "cpp": "#include <cstdio>\nlong long add(long long a, long long b) { std::puts(\"3\"); return 0; }\n",
        "javascript": "function add(a, b) { console.log(3); return 0; }\n",
    },
}
# Raw system calls the job's filter refuses, and files Landlock keeps from it: each program
# prints one line per attempt, "ok" only where the call succeeded.
REACH = {
    "rust": """use std::arch::asm;
fn sys2(n: i64, a: i64, b: i64) -> i64 { let r: i64; unsafe { asm!("syscall", inlateout("rax") n => r, in("rdi") a, in("rsi") b,
    lateout("rcx") _, lateout("r11") _, options(nostack)); } r }
fn main() {
    let mut fds = [0i32; 2];
    println!("pipe2 {}", if sys2(293, fds.as_mut_ptr() as i64, 0) == 0 { "ok" } else { "refused" });
    println!("socket {}", if sys2(41, 1, 1) >= 0 { "ok" } else { "refused" });
    println!("proc {}", if std::fs::read_to_string("/proc/self/status").is_ok() { "ok" } else { "refused" });
    println!("worker {}", if std::fs::read_dir("/opt/sandbox/worker").is_ok() { "ok" } else { "refused" });
    println!("write {}", if std::fs::write("/var/tmp/x", "x").is_ok() { "ok" } else { "refused" });
}
""",
    "go": """package main

import (
\t"fmt"
\t"os"
\t"syscall"
)

func say(what string, err error) {
\tif err == nil {
\t\tfmt.Println(what, "ok")
\t} else {
\t\tfmt.Println(what, "refused")
\t}
}

func main() {
\tvar p [2]int
\tsay("pipe2", syscall.Pipe2(p[:], 0))
\t_, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
\tsay("socket", err)
\t_, err = os.ReadFile("/proc/self/status")
\tsay("proc", err)
\t_, err = os.ReadDir("/opt/sandbox/worker")
\tsay("worker", err)
\tsay("write", os.WriteFile("/var/tmp/x", []byte("x"), 0o600))
}
""",
    "cpp": """#include <cstdio>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <dirent.h>
int main() {
    int fds[2];
    std::printf("pipe2 %s\\n", syscall(SYS_pipe2, fds, 0) == 0 ? "ok" : "refused");
    std::printf("socket %s\\n", socket(AF_UNIX, SOCK_STREAM, 0) >= 0 ? "ok" : "refused");
    std::printf("proc %s\\n", open("/proc/self/status", O_RDONLY) >= 0 ? "ok" : "refused");
    std::printf("worker %s\\n", opendir("/opt/sandbox/worker") ? "ok" : "refused");
    std::printf("write %s\\n", open("/var/tmp/x", O_WRONLY | O_CREAT, 0600) >= 0 ? "ok" : "refused");
}
""",
    "javascript": """const fs = require('fs');
const tryIt = (what, f) => { try { f(); console.log(what, 'ok'); } catch (e) { console.log(what, 'refused'); } };
tryIt('pipe2', () => { const r = require('child_process').spawnSync('/bin/true'); if (r.error || r.status !== 0) throw new Error(); });
tryIt('socket', () => { const s = require('net').createServer(); s.on('error', () => {}); s.listen('/tmp/s'); if (!fs.existsSync('/tmp/s')) throw new Error(); });
tryIt('proc', () => fs.readFileSync('/proc/self/status'));
tryIt('worker', () => fs.readdirSync('/opt/sandbox/worker'));
tryIt('write', () => fs.writeFileSync('/var/tmp/x', 'x'));
""",
}
REACH_EXPECTED = "pipe2 refused\nsocket refused\nproc refused\nworker refused\nwrite refused\n"
SUM = {  # an io program: n, then n numbers
    "rust": "use std::io::Read;\nfn main() { let mut s = String::new(); std::io::stdin().read_to_string(&mut s).unwrap();\n"
            "    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect(); println!(\"{}\", v[1..].iter().sum::<i64>()); }\n",
    "go": "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tvar n, s, x int64\n\tfmt.Scan(&n)\n\tfor i := int64(0); i < n; i++ {\n\t\tfmt.Scan(&x)\n\t\ts += x\n\t}\n\tfmt.Println(s)\n}\n",
    "cpp": "#include <iostream>\nint main() { long long n, s = 0, x; std::cin >> n; while (n-- > 0 && std::cin >> x) s += x; std::cout << s << std::endl; }\n",
    "javascript": "const v = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(v.slice(1).reduce((a, b) => a + b, 0));\n",
}


@pytest.fixture(scope="module")
def polyglot(sandbox_opener):
    sandbox = sandbox_opener("docker", languages=LANGUAGES, workers=1)
    yield sandbox
    sandbox.close()


def _case(*calls: tuple[str, str]) -> CallCase:
    return CallCase(tuple(Call(args, expected, f"add{args.replace('[', '(').replace(']', ')')} == {expected}")
                          for args, expected in calls))


def _request(language: str, program: str, tests, domain: str = "hidden") -> RunRequest:
    return RunRequest(program, tests, 10.0, entry_point="add", language=language, domain=domain,
                      blind=domain != "agent")


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_function_is_compiled_once_and_graded_outside_its_process(polyglot, language):
    compiler = polyglot._backends[language]._compiler
    before = compiler.compiles
    tests = [_case(("[1, 2]", "3"), ("[-5, 5]", "0")), _case(("[2, 2]", "5"))]
    agent = polyglot.run(_request(language, ADD[language], tests, domain="agent"))
    hidden = polyglot.run(_request(language, ADD[language], tests))
    for outcomes in (agent, hidden):
        assert [o.status for o in outcomes] == ["passed", "failed"]
        assert outcomes[1].detail == "add(2, 2) == 5  # got 4"
    # One compile for both gradings (JavaScript runs from its source: none).
    assert compiler.compiles - before == (0 if language == "javascript" else 1)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_compile_error_is_every_test_s_outcome_with_the_program_s_line_numbers(polyglot, language):
    request = _request(language, BROKEN[language], [_case(("[1, 2]", "3")), _case(("[0, 0]", "0"))], domain="agent")
    outcomes = polyglot.run(request)
    expected_status = "error" if language == "javascript" else "compile_error"
    assert [o.status for o in outcomes] == [expected_status] * 2
    name = {"rust": "main.rs", "go": "main.go", "cpp": "main.cpp", "javascript": "main.js"}[language]
    assert f"{name}:3" in outcomes[0].detail, outcomes[0].detail
    if language != "javascript":
        compiled = polyglot.compile(request)
        assert compiled.status == "compile_error" and compiled.cached and f"{name}:3" in compiled.message
        assert "/tmp/test" not in compiled.message and "harness" not in compiled.message.split(name, 1)[0]


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("attack", list(HOSTILE))
def test_a_hostile_program_does_not_pass(polyglot, language, attack):
    outcomes = polyglot.run(_request(language, HOSTILE[attack][language], [_case(("[1, 2]", "3"))]))
    assert outcomes[0].status in ("failed", "error"), (attack, outcomes[0])


@pytest.mark.parametrize("language", LANGUAGES)
def test_compiled_code_reaches_no_pipe_socket_proc_or_file_outside_its_scratch(polyglot, language):
    outcomes = polyglot.run(RunRequest(REACH[language], [IoCase("", REACH_EXPECTED)], 10.0, compare="exact",
                                       language=language, domain="agent", blind=False))
    assert outcomes[0].status == "passed", (outcomes[0].detail, outcomes[0].output)


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_io_program_in_any_language_is_compared_by_the_io_rules(polyglot, language):
    cases = [IoCase("3\n1 2 3\n", "6\n"), IoCase("2\n1000000000000 1\n", "1000000000001\n"), IoCase("1\n5\n", "6\n")]
    outcomes = polyglot.run(RunRequest(SUM[language], cases, 10.0, compare="codecontests", language=language))
    assert [o.status for o in outcomes] == ["passed", "passed", "failed"]
