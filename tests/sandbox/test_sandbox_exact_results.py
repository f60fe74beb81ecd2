"""Results of Rust, Go, C++ and JavaScript functions on the docker sandbox: integers are
exact, and no result a program returns or writes makes the worker fail.

An integer expected value equals only an exactly equal integer, so a float that drops
the +7 of n*n + 7 near 9e18 or 1e22 fails in every language; the drivers print every
number so that it reads back exactly, so honest programs still pass. Programs that once
made the worker raise (a 401-digit result where a float is expected, from the type's own
encoding; a result line whose index is a Unicode digit, written before the driver ran)
get a verdict like any wrong answer, and no worker retires for them: retirement never
depends on what a program's answers were (every call is compared, once the program's
processes are gone)."""
from __future__ import annotations

import pytest

from sandbox.base import Call, CallCase, RunRequest

pytestmark = pytest.mark.docker
LANGUAGES = ("rust", "go", "cpp", "javascript")
N, N_BIG = 3000000001, 100000000003  # n*n near 9e18 (within an int64) and near 1e22
SQUARE_PLUS_7 = {
    "honest": {
        "rust": "fn f(n: i64) -> i128 {\n    (n as i128) * (n as i128) + 7\n}\n",
        "go": "package main\n\nfunc f(n int64) int64 {\n\treturn n*n + 7\n}\n",
        "cpp": "long long f(long long n) {\n    return n * n + 7;\n}\n",
        "javascript": "function f(n) {\n  return BigInt(n) * BigInt(n) + 7n;\n}\n",
    },
    "as doubles": {
        "rust": "fn f(n: i64) -> f64 {\n    (n as f64) * (n as f64) + 7.0\n}\n",
        "go": "package main\n\nfunc f(n int64) float64 {\n\treturn float64(n)*float64(n) + 7\n}\n",
        "cpp": "double f(long long n) {\n    return (double)n * (double)n + 7;\n}\n",
        "javascript": "function f(n) {\n  return n * n + 7;\n}\n",
    },
}
# Where a float (1.5) is expected: a result of 401 digits, by the program's own encoding
# of its own type (Go's and JavaScript's by a line written on the results descriptor
# before the driver starts, with a Unicode digit for an index).
BREAKERS = {
    "rust": "pub struct Big;\nimpl crate::__harness::ToJson for Big {\n"
            "    fn to_json(&self, out: &mut String) { out.push_str(&\"9\".repeat(401)); }\n}\n"
            "fn f(n: i64) -> Big {\n    Big\n}\n",
    "go": "package main\n\nimport (\n\t\"io\"\n\t\"os\"\n\t\"strings\"\n)\n\n"
          "func init() {\n\tdata, _ := io.ReadAll(os.NewFile(3, \"calls\"))\n\ttoken := strings.SplitN(string(data), \"\\n\", 2)[0]\n"
          "\tos.NewFile(4, \"results\").Write([]byte(token + \" \u00b2 1.5\\n\" + token + \" 0 \" + strings.Repeat(\"9\", 401) + \"\\n\" + token + \" end\\n\"))\n"
          "\tos.Exit(0)\n}\n\nfunc f(n int64) float64 {\n\treturn 0\n}\n",
    "cpp": "#include <string>\nnamespace big {\nstruct Big {};\n"
           "inline void encode(const Big&, std::string& out) { out += std::string(401, '9'); }\n}\n"
           "big::Big f(long long n) {\n    return {};\n}\n",
    "javascript": "const fs = require('fs');\nconst token = fs.readFileSync(3, 'utf8').split('\\n')[0];\n"
                  "fs.writeSync(4, `${token} \u00b2 1.5\\n${token} 0 ${10n ** 400n}\\n${token} end\\n`);\nprocess.exit(0);\n"
                  "function f(n) {\n  return 10n ** 400n;\n}\n",
}


@pytest.fixture(scope="module")
def polyglot(sandbox_opener):
    sandbox = sandbox_opener("docker", languages=LANGUAGES, workers=1)
    yield sandbox
    sandbox.close()


def _request(language: str, program: str, case: CallCase) -> RunRequest:
    return RunRequest(program, [case], 10.0, entry_point="f", language=language, domain="hidden", blind=True)


def _square_case(n: int) -> CallCase:
    return CallCase((Call(f"[{n}]", str(n * n + 7), f"f({n}) == {n * n + 7}"),))


def _retired(polyglot, language: str) -> tuple[int, int]:
    backend = polyglot._backends[language]
    return backend.replacements, len(backend._pool.retired)


@pytest.mark.parametrize("language", LANGUAGES)
def test_an_integer_result_must_be_exact(polyglot, language):
    for n in (N, N_BIG):
        if language in ("go", "cpp") and n == N_BIG:
            continue  # past their 64-bit integers: N's case is theirs
        honest = polyglot.run(_request(language, SQUARE_PLUS_7["honest"][language], _square_case(n)))
        doubles = polyglot.run(_request(language, SQUARE_PLUS_7["as doubles"][language], _square_case(n)))
        assert honest[0].status == "passed", (n, honest[0].detail)
        assert doubles[0].status == "failed", (n, doubles[0].detail)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_result_that_broke_the_worker_is_a_wrong_answer_and_retires_nothing(polyglot, language):
    right_first = CallCase((Call("[3]", "1.5", "f(3) == 1.5"), Call("[5]", "2.5", "f(5) == 2.5")))
    polyglot.run(_request(language, SQUARE_PLUS_7["honest"][language], _square_case(N)))  # a worker up
    before = _retired(polyglot, language)
    [outcome] = polyglot.run(_request(language, BREAKERS[language], right_first))
    assert outcome.status in ("failed", "error"), outcome
    assert _retired(polyglot, language) == before
