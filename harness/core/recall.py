"""Recall across tasks: lessons written on *other* tasks, read from a frozen pool.

A run whose strategies include `reflexion+recall` names a source at start
(`recall_from`): an earlier run folder (the lessons in its trials.jsonl) or
`namespace:<name>` (the lessons under <memory_dir>/<name>/ as they stand when the run
starts). The run copies that source into its own folder (recall_pool.json) and records
the source's digest in run.json; every recall of the run reads that copy, never a
lesson the run itself writes, so its result does not depend on the order tasks finish
in, and `--resume` refuses a source that changed.

Hygiene is decided once, at start, from the two task sets (never from a verdict):
a lesson written with oracle feedback is left out of a normal run; a lesson about the
same task (same id or same prompt), or from a task whose hidden tests share a line with
this task's hidden tests, is never recalled for this task; a lesson quoting a
hidden-test line of any task of the run is never recalled at all. An io task's hidden
tests are data, not code: their "lines" are each input and expected output, whole and
line by line, so two tasks share a hidden test when they share one of those (the same
problem in two datasets), and a lesson quotes one when it holds one; a set may mix
function and io tasks. Lessons are cut to `recall_max_chars`. The pool file holds
lesson texts, source prompts and hashes of hidden-test lines: no hidden-test text.

Ranking: BM25 (the `bm25s` library) over each lesson's document (its source task's
prompt and the lesson), queried with this task's prompt and, from trial 2 on, the
last trial's internal-test feedback; the top `recall_k` lessons scoring above 0 that
hygiene allows are shown in their own section of the Actor's prompt.
"""
from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from itertools import islice
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Sequence

from harness.config import SCOPES  # noqa: F401  (every setting's values live in config)
from harness.tasks.base import IoTest, Task, TaskSet, Test

if TYPE_CHECKING:
    from harness.config import RunConfig

POOL_FILE = "recall_pool.json"
NAMESPACE_PREFIX = "namespace:"
FROZEN_PREFIX = "frozen:"  # memory commands: the pool a recall run froze at its start
POOL_SCHEMA = 1
# A hidden-test line shorter than this (normalised) says too little to mark two tasks
# as sharing tests ("assert True", "}"); so does a line found in this many tasks or more
# (HumanEval's "def check(candidate):", its METADATA block).
MIN_LINE_CHARS = 12
BOILERPLATE_TASKS = 3
QUERY_DOC = "the task's prompt; from trial 2 on, also the last trial's internal-test feedback"
INDEXED_DOC = "the source task's prompt and the lesson"


class RecallError(ValueError):
    """The recall source cannot be read or has changed; the message says what to do."""


# --------------------------------------------------------------------------- the pool


@dataclass(frozen=True)
class PoolLesson:
    """One lesson recall may show: from another task, as the source held it."""

    id: str  # source_run/source_task/strategy/attempt/trial: unique within a source
    text: str  # cut to recall_max_chars
    source_task: str
    source_run: str
    source_task_set: str
    strategy: str
    attempt: int
    trial: int  # the trial whose failure the lesson is about
    oracle_feedback: bool
    source_prompt: str
    # Did the source attempt end solved (its final trial passed the source's hidden
    # tests)? Measurement of another run, for reports only; None when unknown.
    source_solved: bool | None = None
    capped: bool = False

    def document(self) -> str:
        return f"{self.source_prompt}\n{self.text}"


@dataclass(frozen=True)
class Recalled:
    """A lesson shown to one trial, with its rank and BM25 score."""

    lesson: str
    source_task: str
    source_run: str
    score: float
    rank: int
    id: str

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


def _sha(data: Any) -> str:
    return "sha256:" + hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def cap(text: str, max_chars: int) -> tuple[str, bool]:
    """One line, at most max_chars, cut at a word boundary."""
    flat = " ".join(text.split())
    if len(flat) <= max_chars:
        return flat, False
    cut = flat[: max_chars - 1].rsplit(" ", 1)[0] if " " in flat[: max_chars - 1] else flat[: max_chars - 1]
    return cut.rstrip(" ,;:") + "\u2026", True


@dataclass
class SourceLessons:
    """What a source holds: its raw lessons and the tasks they are about."""

    spec: str
    kind: str  # run | namespace
    rows: list[dict[str, Any]]  # run_id, task_id, strategy, attempt, trial, text, oracle_feedback, task_set
    tasks: dict[tuple[str, str], Task]  # (task-set spec, task id) -> task
    task_set_digests: dict[str, str]
    solved: dict[tuple[str, str, str, int], bool] = field(default_factory=dict)  # (run, task, strategy, attempt)

    def digest(self) -> str:
        """sha256 over its lessons and the digests of their task sets."""
        rows = sorted(
            ({k: r.get(k) for k in ("run_id", "task_id", "strategy", "attempt", "trial", "text", "oracle_feedback",
                                    "task_set")} for r in self.rows),
            key=lambda r: (str(r["run_id"]), str(r["task_id"]), str(r["strategy"]), r["attempt"] or 0, r["trial"] or 0),
        )
        return _sha({"lessons": rows, "task_sets": self.task_set_digests})


def _load_task_set(spec: str, task_ids: Sequence[str] | None, digest: str | None, where: str) -> TaskSet:
    from harness.tasks import TaskError, load_tasks

    try:
        tasks = load_tasks(spec)
        if task_ids is not None:
            tasks = tasks.select(task_ids=task_ids)
    except TaskError as exc:
        raise RecallError(f"{where}: cannot load its task set {spec!r} ({exc}); recall needs the source tasks' "
                          "prompts (ranking) and hidden tests (hygiene)") from None
    if digest is not None and tasks.digest != digest:
        raise RecallError(f"{where}: its task set {spec!r} changed since it was written "
                          f"(digest {tasks.digest} != {digest}); its lessons cannot be checked against it")
    return tasks


def source_name(spec: str) -> str:
    """The source as run.json records it: a run folder as an absolute path."""
    return spec if spec.startswith(NAMESPACE_PREFIX) else str(Path(spec).expanduser().resolve())


def read_source(spec: str, memory_dir: Path | None, without_run: str | None = None) -> SourceLessons:
    """The lessons a source holds now (an earlier run folder, or namespace:<name>);
    `without_run`: leaving out the lessons that run wrote (a run that recalls from the
    namespace it writes into finds the source as it stood when it began)."""
    if spec.startswith(NAMESPACE_PREFIX):
        return _read_namespace(spec, spec[len(NAMESPACE_PREFIX):], memory_dir, without_run)
    return _read_run(spec, Path(spec).expanduser())


def _read_run(spec: str, run_dir: Path) -> SourceLessons:
    from harness.rundata import read_run_header, read_trials

    try:
        header = read_run_header(run_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise RecallError(f"recall_from {spec!r}: {exc} (give an earlier run folder, or namespace:<name>)") from None
    info = header.get("tasks") or {}
    task_spec = str(info.get("spec") or header.get("config", {}).get("tasks") or "")
    task_set = _load_task_set(task_spec, info.get("task_ids"), info.get("digest"), f"recall_from {spec!r}")
    records = read_trials(run_dir / "trials.jsonl")
    rows = [
        {"run_id": r.run_id, "task_id": r.task_id, "strategy": r.strategy, "attempt": r.attempt,
         "trial": r.trial - 1, "text": r.lesson, "oracle_feedback": r.oracle_feedback, "task_set": task_spec}
        for r in records if r.lesson
    ]
    solved = {(r.run_id, r.task_id, r.strategy, r.attempt): bool(r.hidden_passed) for r in records if r.final}
    return SourceLessons(spec, "run", rows, {(task_spec, t.task_id): t for t in task_set.tasks},
                         {task_spec: task_set.digest}, solved)


def _read_namespace(spec: str, name: str, memory_dir: Path | None, without_run: str | None) -> SourceLessons:
    if not name or memory_dir is None:
        raise RecallError(f"recall_from {spec!r}: name the namespace (namespace:<name>) and the memory folder")
    folder = memory_dir / name
    if not folder.is_dir():
        raise RecallError(f"recall_from {spec!r}: no memory namespace {name!r} in {memory_dir}")
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").split("\n"):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue  # a torn line from a killed run
            if isinstance(row, dict) and row.get("text") and row.get("task_id") and row.get("run_id") != without_run:
                rows.append({k: row.get(k) for k in ("run_id", "task_id", "strategy", "attempt", "trial", "text",
                                                     "oracle_feedback", "task_set")})
    tasks: dict[tuple[str, str], Task] = {}
    digests: dict[str, str] = {}
    for task_spec in sorted({str(r["task_set"]) for r in rows if r.get("task_set")}):
        try:
            task_set = _load_task_set(task_spec, None, None, f"recall_from {spec!r}")
        except RecallError:
            digests[task_spec] = "unloadable"  # its lessons count as unknown_source_task
            continue
        digests[task_spec] = task_set.digest
        tasks.update({(task_spec, t.task_id): t for t in task_set.tasks})
    return SourceLessons(spec, "namespace", rows, tasks, digests)


# --------------------------------------------------------------------------- hygiene


def _norm_line(line: str, entry_point: str) -> str:
    flat = " ".join(line.split())
    for name in {entry_point, "candidate"}:
        if name:
            flat = re.sub(rf"\b{re.escape(name)}\b", "f", flat)
    return flat


# An io test's text can run to megabytes: its first IO_LINES_READ lines of input and of
# output are fragments, and the whole text one more (whitespace flattened up to
# IO_FLATTEN_MAX characters; past that, its line endings and outer blanks only).
IO_LINES_READ = 200
IO_FLATTEN_MAX = 1 << 20


def _whole(text: str) -> str:
    if len(text) <= IO_FLATTEN_MAX:
        return " ".join(text.split())
    return text.replace("\r\n", "\n").strip()


def _fragments(test: Test, entry_point: str) -> Iterator[str]:
    """The normalised pieces of one hidden test that say something: a function test's
    lines (the entry point named `f`); an io test's input and expected output, each
    whole and line by line; a runner test's test files, line by line. Shorter than
    MIN_LINE_CHARS: left out."""
    if isinstance(test, IoTest):
        for text in (test.input, test.output):
            whole = _whole(text)
            if len(whole) >= MIN_LINE_CHARS:
                yield whole
            for line in islice(text.splitlines(), IO_LINES_READ):
                if len(flat := " ".join(line.split())) >= MIN_LINE_CHARS and flat != whole:
                    yield flat
        return
    suite = getattr(test, "suite", None)
    if suite is not None:  # a runner test (an exercise's): the lines of its test files and data
        for path in suite.hidden:
            for line in islice(suite.file(path).splitlines(), IO_LINES_READ):
                if len(flat := " ".join(line.split())) >= MIN_LINE_CHARS:
                    yield flat
        return
    for line in test.splitlines():
        if len(flat := _norm_line(line, entry_point)) >= MIN_LINE_CHARS:
            yield flat


@dataclass(frozen=True)
class _HiddenLines:
    """What hygiene knows of one task's hidden tests: a hash of each fragment (for
    "shares a hidden test with"), and the fragments short enough to be quoted in a lesson
    (`assert ` dropped from a function test's)."""

    hashes: frozenset[str]
    quotable: dict[str, str]  # hash -> fragment

    @classmethod
    def of(cls, task: Task, quote_max: int) -> "_HiddenLines":
        hashes: set[str] = set()
        quotable: dict[str, str] = {}
        for test in task.hidden_tests:
            for fragment in _fragments(test, task.entry_point):
                digest = _line_hash(fragment)
                hashes.add(digest)
                if len(fragment) <= quote_max + 7:  # (+ "assert ")
                    quotable[digest] = fragment if isinstance(test, IoTest) else re.sub(r"^assert\s+", "", fragment)
        return cls(frozenset(hashes), quotable)


def _line_hash(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _exclusions(pool: Sequence[PoolLesson], source_tasks: Mapping[str, Task], targets: Sequence[Task],
                scope: str, target_task_set: str) -> tuple[dict[str, dict[str, str]], dict[str, int]]:
    """{target task id: {pool id: reason}} and the count of each reason."""
    everyone = {t.task_id: t for t in targets} | dict(source_tasks)
    quote_max = max((len(x.text) for x in pool), default=0)
    lines_of = {key: _HiddenLines.of(t, quote_max) for key, t in everyone.items()}
    seen_in: dict[str, int] = {}
    distinct = {(t.prompt, t.hidden_tests): key for key, t in everyone.items()}  # a task in both sets counts once
    for key in distinct.values():
        for digest in lines_of[key].hashes:
            seen_in[digest] = seen_in.get(digest, 0) + 1
    boilerplate = {digest for digest, n in seen_in.items() if n >= BOILERPLATE_TASKS}
    source_hashes = {key: lines_of[key].hashes - boilerplate for key in source_tasks}
    # A lesson that quotes a hidden-test line of any task of the run is shown to none.
    quoting: set[str] = set()
    flat_index = _GramIndex(pool)  # the lessons as io fragments are compared with them
    for target in targets:
        known = lines_of[target.task_id]
        fragments = {x for digest, x in known.quotable.items() if digest not in boilerplate}
        fragments = {x for x in fragments if len(x) >= MIN_LINE_CHARS - 2}
        if not fragments:
            continue
        if target.entry_point:
            quoting |= {x.id for x in pool if any(f in _norm_line(x.text, target.entry_point) for f in fragments)}
        else:
            quoting |= flat_index.quoting(fragments)
    excluded: dict[str, dict[str, str]] = {}
    counts: dict[str, int] = {}
    for target in targets:
        mine_hashes = lines_of[target.task_id].hashes - boilerplate
        out: dict[str, str] = {}
        for lesson in pool:
            source = source_tasks[_source_key(lesson)]
            if lesson.source_task == target.task_id or source.prompt.strip() == target.prompt.strip():
                reason = "same_task"
            elif scope == "other_task_sets" and lesson.source_task_set == target_task_set:
                reason = "same_task_set"
            elif source_hashes[_source_key(lesson)] & mine_hashes:
                reason = "shared_hidden_tests"
            elif lesson.id in quoting:
                reason = "quotes_hidden_tests"
            else:
                continue
            out[lesson.id] = reason
            counts[reason] = counts.get(reason, 0) + 1
        if out:
            excluded[target.task_id] = out
    return excluded, counts


class _GramIndex:
    """The pool's lessons, whitespace flattened, indexed by every substring of GRAM
    characters: a fragment is looked for only in the lessons holding its first GRAM
    characters (an io task may have thousands of fragments; the pool, hundreds of lessons)."""

    GRAM = MIN_LINE_CHARS - 2

    def __init__(self, pool: Sequence[PoolLesson]) -> None:
        self.flat = {x.id: " ".join(x.text.split()) for x in pool}
        self.by_gram: dict[str, set[str]] = {}
        for lesson_id, text in self.flat.items():
            for i in range(len(text) - self.GRAM + 1):
                self.by_gram.setdefault(text[i:i + self.GRAM], set()).add(lesson_id)

    def quoting(self, fragments: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for fragment in fragments:
            for lesson_id in self.by_gram.get(fragment[:self.GRAM], ()):
                if lesson_id not in found and fragment in self.flat[lesson_id]:
                    found.add(lesson_id)
        return found


def _source_key(lesson: PoolLesson) -> str:
    return f"{lesson.source_task_set}\0{lesson.source_task}"


# --------------------------------------------------------------------------- freezing


@dataclass
class FrozenPool:
    """The pool a run reads, made once at its start."""

    source: str
    source_kind: str
    source_digest: str
    lessons: list[PoolLesson]
    excluded: dict[str, dict[str, str]]  # target task id -> {pool id: reason}
    counts: dict[str, int]  # run-wide counts: oracle_feedback, unknown_source_task, capped, per-target reasons

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": POOL_SCHEMA,
            "source": self.source,
            "source_kind": self.source_kind,
            "source_digest": self.source_digest,
            "lessons": [asdict(x) for x in self.lessons],
            "excluded": self.excluded,
        }

    def write(self, run_dir: Path, config: "RunConfig") -> dict[str, Any]:
        """Writes recall_pool.json; returns what run.json records under "recall"."""
        from harness.rundata import write_json

        data = self.to_json()
        write_json(run_dir / POOL_FILE, data)
        return describe(config, self, pool_digest=_sha(data))


def freeze(config: "RunConfig", targets: TaskSet) -> FrozenPool:
    """Reads the source as it stands now and applies every hygiene rule for `targets`."""
    assert config.recall_from
    return collect(source_name(config.recall_from), config.memory_dir, max_chars=config.recall_max_chars,
                   oracle_feedback=config.oracle_feedback, targets=targets, scope=config.recall_scope)


def collect(spec: str, memory_dir: Path | None, *, max_chars: int, oracle_feedback: bool = False,
            targets: TaskSet | None = None, scope: str = "other_tasks") -> FrozenPool:
    """The pool a source gives: its lessons cut to max_chars, oracle-feedback lessons
    left out unless `oracle_feedback`, and the per-task exclusions for `targets`."""
    source = read_source(spec, memory_dir)
    counts: dict[str, int] = {"source_lessons": len(source.rows)}
    pool: list[PoolLesson] = []
    source_tasks: dict[str, Task] = {}
    for row in source.rows:
        task = source.tasks.get((str(row.get("task_set") or ""), str(row["task_id"])))
        if task is None:
            counts["unknown_source_task"] = counts.get("unknown_source_task", 0) + 1
            continue
        if row.get("oracle_feedback") and not oracle_feedback:
            counts["oracle_feedback"] = counts.get("oracle_feedback", 0) + 1
            continue
        text, capped = cap(str(row["text"]), max_chars)
        counts["capped"] = counts.get("capped", 0) + int(capped)
        key = (row.get("run_id"), row["task_id"], row.get("strategy"), row.get("attempt"))
        lesson = PoolLesson(
            id=f"{row.get('run_id')}/{row['task_id']}/{row.get('strategy')}/{row.get('attempt')}/{row.get('trial')}",
            text=text, source_task=str(row["task_id"]), source_run=str(row.get("run_id") or ""),
            source_task_set=str(row.get("task_set") or ""), strategy=str(row.get("strategy") or ""),
            attempt=int(row.get("attempt") or 0), trial=int(row.get("trial") or 0),
            oracle_feedback=bool(row.get("oracle_feedback")), source_prompt=task.prompt,
            source_solved=source.solved.get(key), capped=capped,  # type: ignore[arg-type]
        )
        pool.append(lesson)
        source_tasks[_source_key(lesson)] = task
    unique = {x.id: x for x in pool}
    pool = [unique[i] for i in sorted(unique)]
    excluded: dict[str, dict[str, str]] = {}
    if targets is not None:
        excluded, per_target = _exclusions(pool, source_tasks, targets.tasks, scope, targets.spec)
        counts.update(per_target)
    return FrozenPool(source.spec, source.kind, source.digest(), pool, excluded, counts)


def open_pool(spec: str, memory_dir: Path | None, *, max_chars: int = 300, oracle_feedback: bool = False) -> FrozenPool:
    """The pool the memory commands show: a source (run folder, namespace:<name>) as
    recall would read it, or `frozen:<run folder>`, the pool a recall run froze."""
    if spec.startswith(FROZEN_PREFIX):
        run_dir = Path(spec[len(FROZEN_PREFIX):]).expanduser()
        path = run_dir / POOL_FILE
        if not path.is_file():
            raise RecallError(f"{spec}: no {POOL_FILE} in {run_dir} (only runs with reflexion+recall freeze a pool)")
        data = json.loads(path.read_text(encoding="utf-8"))
        return FrozenPool(data["source"], data["source_kind"], data["source_digest"],
                          [PoolLesson(**x) for x in data["lessons"]], data.get("excluded") or {}, {})
    return collect(source_name(spec), memory_dir, max_chars=max_chars, oracle_feedback=oracle_feedback)


def describe(config: "RunConfig", pool: FrozenPool, *, pool_digest: str) -> dict[str, Any]:
    """run.json's "recall": source, digests, K, scope, ranking, hygiene counts."""
    try:
        from importlib.metadata import version

        bm25s_version = version("bm25s")
    except Exception:  # noqa: BLE001 - a version is a nicety here
        bm25s_version = None
    return {
        "strategies": list(config.recalling_strategies()),
        "source": pool.source,
        "source_kind": pool.source_kind,
        "source_digest": pool.source_digest,
        "pool_file": POOL_FILE,
        "pool_digest": pool_digest,
        "pool_lessons": len(pool.lessons),
        "k": config.recall_k,
        "scope": config.recall_scope,
        "max_chars": config.recall_max_chars,
        "ranking": {
            "ranker": "bm25", "library": "bm25s", "version": bm25s_version,
            "method": "lucene", "k1": 1.5, "b": 0.75, "tokenizer": "bm25s.tokenize, English stopwords",
            "query": QUERY_DOC, "document": INDEXED_DOC, "min_score": "above 0",
        },
        "hygiene": {
            "rules": ["no lesson written with oracle feedback (in a normal run)", "no lesson about the same task",
                      "no lesson from a task whose hidden tests share a line with this task's",
                      "no lesson quoting a hidden-test line of any task of the run", f"lessons cut to {config.recall_max_chars} characters"],
            "excluded": pool.counts,
        },
    }


def changed_source(header: Mapping[str, Any], config: "RunConfig", run_dir: Path) -> str | None:
    """Why a resumed run cannot go on with its recall source, or None."""
    recorded = header.get("recall")
    if not isinstance(recorded, Mapping):
        return None
    try:
        now = read_source(str(recorded["source"]), config.memory_dir, without_run=header.get("run_id")).digest()
    except RecallError as exc:
        return f"its recall source cannot be read any more: {exc}"
    if now != recorded.get("source_digest"):
        return (f"its recall source {recorded['source']!r} changed since the run started (digest {now} != "
                f"{recorded.get('source_digest')}): recall must read the lessons as they stood; start a new run")
    path = run_dir / POOL_FILE
    try:
        pool_digest = _sha(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return f"its frozen recall pool {path} is missing or unreadable"
    if pool_digest != recorded.get("pool_digest"):
        return f"its frozen recall pool {path} was edited (digest {pool_digest} != {recorded.get('pool_digest')})"
    return None


# --------------------------------------------------------------------------- ranking


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    import bm25s

    return bm25s.tokenize(list(texts), stopwords="en", return_ids=False, show_progress=False)


class Bm25Index:
    """BM25 over the pool's documents, by bm25s; scores every document for a query."""

    def __init__(self, documents: Sequence[str]) -> None:
        import bm25s

        self.size = len(documents)
        self._tokens = _tokenize(documents) if documents else []
        self._vocab = {tok for doc in self._tokens for tok in doc}
        self._index = None
        if self._vocab:
            self._index = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
            self._index.index(self._tokens, show_progress=False)
        self._lock = threading.Lock()

    def scores(self, query: str) -> list[float]:
        if self._index is None:
            return [0.0] * self.size
        tokens = [t for t in _tokenize([query])[0] if t in self._vocab]
        if not tokens:
            return [0.0] * self.size
        with self._lock:
            return [float(x) for x in self._index.get_scores(tokens)]


class Recall:
    """What one run recalls: its frozen pool, its per-task exclusions, the index."""

    def __init__(self, lessons: Sequence[PoolLesson], excluded: Mapping[str, Iterable[str]], k: int) -> None:
        self.lessons = list(lessons)
        self.excluded = {task: set(ids) for task, ids in excluded.items()}
        self.k = k
        self.index = Bm25Index([x.document() for x in self.lessons])

    @classmethod
    def from_pool(cls, pool: FrozenPool, k: int) -> "Recall":
        return cls(pool.lessons, pool.excluded, k)

    @classmethod
    def open(cls, run_dir: Path, k: int) -> "Recall":
        data = json.loads((run_dir / POOL_FILE).read_text(encoding="utf-8"))
        return cls([PoolLesson(**x) for x in data["lessons"]], data.get("excluded") or {}, k)

    def ranked(self, query: str, task_id: str | None = None, k: int | None = None) -> list[Recalled]:
        """The top k lessons for a query, best first (ties: pool order); none scoring 0,
        none whose text is already among them."""
        banned = self.excluded.get(task_id, set()) if task_id is not None else set()
        scores = self.index.scores(query)
        order = sorted(range(len(self.lessons)), key=lambda i: (-round(scores[i], 6), i))
        out: list[Recalled] = []
        for i in order:
            lesson = self.lessons[i]
            if scores[i] <= 0 or len(out) >= (self.k if k is None else k):
                break
            if lesson.id in banned or lesson.source_task == task_id or any(r.lesson == lesson.text for r in out):
                continue  # (the same words twice would only cost context)
            out.append(Recalled(lesson.text, lesson.source_task, lesson.source_run, round(scores[i], 4),
                                len(out) + 1, lesson.id))
        return out

    def for_trial(self, task: Task, feedback: str | None) -> list[Recalled]:
        query = task.prompt if not feedback else f"{task.prompt}\n{feedback}"
        return self.ranked(query, task.task_id)
