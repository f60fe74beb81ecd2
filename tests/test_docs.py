"""The README and docs/ say what the code does.

The README is a map (at most 200 lines) whose quick start is what CI runs; every link
and repository path in the docs exists; every `python -m harness ...` command they
quote is accepted by the real parser; the `run` flag table in docs/running.md names
every flag the parser has, and no other, with the defaults RunConfig has.
"""
from __future__ import annotations

import contextlib
import importlib
import io
import re
import shlex
from dataclasses import fields
from pathlib import Path

import pytest

from harness.cli import build_parser
from harness.strategies import StrategyError, resolve
from harness.config import RunConfig

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
RUNNING = DOCS / "running.md"
# The pages the manual is split into (issue: one page per topic).
PAGES = ("README.md", "running.md", "strategies.md", "tasks.md", "models.md", "sandbox.md",
         "results.md", "view.md", "ray.md", "extending.md")


def _doc_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md")), REPO / "bench" / "RESULTS.md"]


# ----------------------------------------------------------------------------- markdown

_FENCE = re.compile(r"^\s*(```|~~~)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")


def _split(text: str) -> tuple[list[str], list[str]]:
    """(prose lines, fenced code lines) of a markdown text."""
    prose, code, fenced = [], [], False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        (code if fenced else prose).append(line)
    return prose, code


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    prose, _ = _split(path.read_text(encoding="utf-8"))
    seen: dict[str, int] = {}
    found = set()
    for line in prose:
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        slug = _slug(match.group(1))
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def _links(path: Path) -> list[str]:
    prose, _ = _split(path.read_text(encoding="utf-8"))
    # code spans may hold brackets and parentheses that are not links
    return [t for line in prose for t in _LINK.findall(_CODE_SPAN.sub("", line))]


def _broken_links(path: Path) -> list[str]:
    broken = []
    for target in _links(path):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            broken.append(f"{path.relative_to(REPO)}: {target} (no such file)")
            continue
        if anchor:
            page = dest / "README.md" if dest.is_dir() else dest
            if page.suffix != ".md" or anchor not in _anchors(page):
                broken.append(f"{path.relative_to(REPO)}: {target} (no heading #{anchor} in {page.relative_to(REPO)})")
    return broken


# ----------------------------------------------------------------------------- commands

_STOP_TOKENS = {"&&", "||", "|", ";", ">", "2>", ">>"}


def _harness_argv(snippet: str) -> list[str] | None:
    """The arguments after `python -m harness` in a shell snippet, or None if it holds none."""
    at = snippet.find("python -m harness")
    if at < 0:
        return None
    words = shlex.split(snippet[at:], comments=True)[3:]
    for i, word in enumerate(words):
        if word in _STOP_TOKENS:
            return words[:i]
    return words


def _quoted_commands(text: str) -> list[str]:
    """Every `python -m harness ...` command quoted in a markdown text: lines of fenced
    blocks (continued lines joined) and inline code spans."""
    prose, code = _split(text)
    found = []
    joined: list[str] = []
    for line in code:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1] + " " + line.strip()
        else:
            joined.append(line)
    found += [line for line in joined if "python -m harness" in line]
    for line in prose:
        found += [span for span in _CODE_SPAN.findall(line) if "python -m harness" in span]
    return found


def _parse_error(argv: list[str]) -> str | None:
    """None if the real parser takes `argv`, else what it said."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            args = build_parser().parse_args(argv)
        except SystemExit as exc:
            return err.getvalue().strip() or f"exit {exc.code}"
    strategy = getattr(args, "strategy", None)
    if isinstance(strategy, str):  # a name, a group or a list: the registry decides
        try:
            resolve(strategy)
        except StrategyError as exc:
            return str(exc)
    return None


def _bad_commands(text: str) -> list[str]:
    bad = []
    for command in _quoted_commands(text):
        argv = _harness_argv(command)
        problem = "no sub-command" if not argv else _parse_error(argv)
        if problem:
            bad.append(f"{command.strip()!r}: {problem}")
    return bad


# ----------------------------------------------------------------------------- the README


def test_the_readme_is_a_map_of_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; the manual belongs in docs/"


def test_the_readme_maps_every_page_of_docs_and_its_links_resolve():
    targets = {t.partition("#")[0] for t in _links(README)}
    pages = {p.name for p in DOCS.glob("*.md")}
    assert set(PAGES) <= pages, f"missing pages in docs/: {sorted(set(PAGES) - pages)}"
    unmapped = sorted(name for name in pages if f"docs/{name}" not in targets)
    assert unmapped == [], f"docs/ pages the README does not link: {unmapped}"
    assert [b for b in _broken_links(README)] == []


def test_the_quick_start_test_command_is_what_ci_runs():
    text = README.read_text(encoding="utf-8")
    start = text.index("## Quick start")
    block = re.search(r"```bash\n(.*?)\n```", text[start:], re.S).group(1).splitlines()
    commands = [line.split("#", 1)[0].strip() for line in block]
    assert commands == [
        "bash .ci/setup && .venv/bin/python -m harness run",
        "bash .ci/setup --tests && .venv/bin/python -m pytest",
    ]
    # .ci/run runs its two halves apart (to time each; tests/test_ci_run.py checks that
    # the tests run only after the setup succeeded, and that their failure is CI's).
    ci_run = [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()
              if line.strip() and not line.lstrip().startswith("#")]
    halves = [part.strip() for part in commands[1].split("&&")]
    found = [next((i for i, line in enumerate(ci_run) if line.split(" ||")[0] == half), None) for half in halves]
    assert None not in found and found == sorted(found), f".ci/run no longer runs the README's test command: {halves}"
    assert (REPO / ".ci" / "setup").is_file()


# ----------------------------------------------------------------------------- every page


@pytest.mark.parametrize("path", _doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_links_and_anchors_resolve(path: Path):
    assert _broken_links(path) == []


@pytest.mark.parametrize("path", _doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_quoted_harness_command_parses(path: Path):
    assert _bad_commands(path.read_text(encoding="utf-8")) == []


def test_the_docs_quote_many_commands_and_the_check_rejects_a_wrong_one():
    quoted = [c for p in _doc_files() for c in _quoted_commands(p.read_text(encoding="utf-8"))]
    assert len(quoted) >= 40, quoted  # the extraction finds the commands the pages hold
    wrong = (
        "Run `python -m harness run --trails 5` or\n\n```bash\n"
        "python -m harness run --model local \\\n    --strategy reflexion-ish\n"
        "python -m harness frobnicate\n```\n"
    )
    assert len(_bad_commands(wrong)) == 3
    assert _bad_commands("`python -m harness run --trials 5 --limit 2`") == []


_PATH = re.compile(r"^(?:\.ci|bench|docs|harness|sandbox|tasks|tests)/[\w./-]*$")


@pytest.mark.parametrize("path", _doc_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_repository_paths_and_python_names_exist(path: Path):
    prose, _ = _split(path.read_text(encoding="utf-8"))
    missing = []
    for span in (s for line in prose for s in _CODE_SPAN.findall(line)):
        if _PATH.match(span) and not (REPO / span).exists():
            missing.append(span)
        elif re.fullmatch(r"harness(\.\w+)+", span) and not _importable(span):
            missing.append(span)
    assert missing == []


def _importable(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for name in parts[cut:]:
                obj = getattr(obj, name)
        except AttributeError:
            return False
        return True
    return False


# ----------------------------------------------------------------------------- run flags


def _run_parser():
    parser = build_parser()
    return parser._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]


def _flag_rows() -> list[tuple[list[str], str]]:
    """(flags, default cell) of each row of the `run` flag table in docs/running.md."""
    text = RUNNING.read_text(encoding="utf-8")
    table = text[text.index("## `run` flags"):]
    table = table[:table.index("\n## ", 1)]
    rows = []
    for line in table.splitlines():
        if line.startswith("| `--"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            rows.append((re.findall(r"`(--[a-z][a-z-]*)", cells[0]), cells[1]))
    return rows


def test_the_flag_table_names_every_run_flag_and_no_other():
    documented = {flag for flags, _ in _flag_rows() for flag in flags}
    real = {f for a in _run_parser()._actions for f in a.option_strings if f.startswith("--")} - {"--help"}
    assert sorted(real - documented) == [], "run flags missing from docs/running.md's table"
    assert sorted(documented - real) == [], "docs/running.md's table names flags `run` does not have"
    assert "`prices`" in RUNNING.read_text(encoding="utf-8")  # the one TOML-only setting


_WORDS = {"none": (None,), "off": (False, None), "all": (None,), "built-in": (None,)}


def _same(cell: str, value) -> bool:
    if isinstance(value, tuple):
        value = ",".join(map(str, value))
    if isinstance(value, Path):
        return Path(cell).expanduser() == value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return float(cell) == float(value)
        except ValueError:
            return False
    return cell == str(value)


def test_the_flag_table_defaults_are_run_config_defaults(monkeypatch):
    monkeypatch.delenv("HARNESS_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    defaults = RunConfig()
    settings = {f.name for f in fields(RunConfig)}
    dests = {flag: a.dest for a in _run_parser()._actions for flag in a.option_strings}
    checked, wrong = 0, []
    for flags, cell in _flag_rows():
        literal = re.fullmatch(r"`?([^`\s]+)`?", cell)
        for flag in flags:
            dest = dests[flag]
            if dest not in settings or literal is None:
                continue  # a sentence, not a value: "min(workers, 4)", "the run id", ...
            value = getattr(defaults, dest)
            word = literal.group(1)
            ok = value in _WORDS[word] if word in _WORDS else _same(word, value)
            checked += 1
            if not ok:
                wrong.append(f"{flag}: the table says {cell}, RunConfig has {value!r}")
    assert wrong == []
    assert checked >= 30  # most rows hold a plain value


def _code_map() -> list[str]:
    text = (DOCS / "README.md").read_text(encoding="utf-8")
    block = text.split("## Where the code is", 1)[1].split("```", 2)[1]
    return block.splitlines()


def test_the_map_of_the_code_matches_the_tree():
    """docs/README.md's map: every folder and .py module it names exists where it says,
    and every package of harness/ and sandbox/ is named."""
    named: set[str] = set()
    top = ""
    for line in _code_map():
        head = re.match(r"^(\s*)(\S+/)\s", line + " ")
        if head and not head.group(1):
            top = head.group(2)
            named.add(top)
        elif head and len(head.group(1)) == 2 and top:
            named.add(top + head.group(2))
        for module in re.findall(r"\b([a-z_]+\.py)\b", line):
            named.add(module)
    folders = sorted(n for n in named if n.endswith("/"))
    missing = [n for n in folders if not (REPO / n).is_dir()]
    assert missing == [], f"the map names folders that do not exist: {missing}"
    modules = sorted(n for n in named if n.endswith(".py"))
    for module in modules:
        assert list(REPO.glob(f"harness/**/{module}")) or list(REPO.glob(f"sandbox/**/{module}")) \
            or (REPO / "harness" / module).exists(), f"the map names {module}, which is nowhere in harness/ or sandbox/"
    packages = {f"{p.parent.relative_to(REPO)}/" for p in (REPO / "harness").glob("*/__init__.py")}
    packages |= {f"{p.parent.relative_to(REPO)}/" for p in (REPO / "sandbox").glob("*/__init__.py")}
    text = "\n".join(_code_map())
    unnamed = sorted(p for p in packages if p not in named and p.split("/", 1)[1] not in text)
    assert unnamed == [], f"packages the map does not name: {unnamed}"
    loose = sorted(p.name for p in (REPO / "harness").glob("*.py"))
    assert len(loose) <= 5, f"at most 5 modules loose at the root of harness/: {loose}"
    assert all(name in text for name in loose if not name.startswith("__")), loose
