"""lats (Zhou et al. 2023, "Language Agent Tree Search", the programming setting): a tree
search over implementations, valued by the agent's own tests.

    tests once -> root = the first answer -> [select a leaf by UCT -> reflect on it ->
    its children, one Actor answer each -> evaluate on the agent's tests -> back up] ...

* **Nodes.** Node 0 (the root) is the attempt's first answer, made as every strategy
  makes it (the run's temperature and seed). A child of node p is an Actor answer that
  sees p's implementation, p's feedback on the agent's own tests, and the lessons on
  the path from the root to p (the last `--memory-window`, p's own last); siblings
  differ by their seed, sampled as resample's later samples are (the run's temperature
  if above 0, else `--resample-temperature`).
* **Value.** A node's value is the fraction of the agent's own (internal) tests it
  passes: no model-scored value call. Every node's value is backed up to its
  ancestors once, so a node's visits are the nodes of its subtree and its backed-up
  value the mean over them.
* **Selection and expansion.** From the root, descend to the child with the highest
  UCT score, mean + c * sqrt(ln(visits of the parent) / visits), ties to the older
  node, until a leaf; that leaf is expanded into `width` children. Self-Reflection on
  a node runs when its first child is made (only expanded nodes get a lesson: in the
  search a lesson is read by the node's descendants only). Lessons are stored in
  long-term memory as reflexion's are; a lats attempt reads none from there.
* **Stop** at the first node that passes all the agent's tests (`internal_pass`), or
  when the budget of nodes is spent (`budget`): `expansions` rounds of `width`
  children, or with `expansions` 0 (the default) at most `--trials` nodes, the last
  round cut short. No tests kept: the root only (`no_internal_tests`).
* **Submitted**: the best node, the one passing the most of the agent's tests, the
  older on ties. Hidden tests decide nothing: they grade each record's code only.

**A trial is one node.** Trial t makes node t - 1 (the root at trial 1, with the
tests), and its record carries the implementation the search would submit if it
stopped there (the best node so far), that node's verdicts on the agent's tests and
on the hidden ones. So pass@1 at trial t is "after t implementations", as for
reflexion and resample, and each call is charged to the trial it serves (a lesson to
the trial of the first child it serves). Each record also holds the tree as it stands
then: one `node` event per node, `chosen` on the path from the root to the node the
record submits (on the final record: the final path), and the trial's own node's
`test_run` ("node N") and a `lats_node` note (its feedback and raw answer), from which
an interrupted attempt is resumed. With `width` 1 the tree is a chain and the model is
asked exactly what reflexion asks; what LATS adds is the branching, the UCT selection
and submitting the best node.

Options (`--strategy-option lats.KEY=VALUE`): `width` (children per expansion, 2),
`expansions` (expansion rounds; 0: as many as `--trials` allows), `uct` (the
exploration constant c, 1.0).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Sequence

from harness.core.actor import graded_program
from harness.core import Draft, Previous, TrialScope, evaluate, grade_hidden, reflect, store_lessons, tests_of, \
    verdicts, write_code, write_tests
from harness.core.evaluator import Evaluation
from harness.rundata import TestRecord
from harness.rundata.events import LessonWritten, MemoryShown, Node, Note, TestRun, of_type
from harness.strategies.base import Strategy, Traits

if TYPE_CHECKING:
    from harness.core import AttemptContext
    from harness.rundata import TrialRecord
    from harness.tasks.base import Task

NODE_NOTE = "lats_node"  # the note holding what a node's record does not: its feedback and raw answer


@dataclass
class SearchNode:
    """One implementation in the tree, with its verdict on the agent's own tests."""

    id: int
    parent: int | None
    depth: int
    draft: Draft
    internal: Evaluation | None  # None: the answer held no code to test
    feedback: str  # the text the agent read about it
    value: float  # the fraction of the agent's tests it passes
    passed: bool  # all of them
    lesson: str = ""  # Self-Reflection on it, written when its first child is made
    children: list[int] = field(default_factory=list)

    @property
    def trial(self) -> int:
        return self.id + 1

    @property
    def shown_code(self) -> str:
        """The implementation as its children and Self-Reflection see it."""
        return self.draft.code or self.draft.raw_output


class Tree:
    """The search tree of one attempt. Visits and backed-up values follow from its
    shape: each node's value is backed up to its ancestors exactly once."""

    def __init__(self) -> None:
        self.nodes: list[SearchNode] = []

    def __len__(self) -> int:
        return len(self.nodes)

    def add(self, node: SearchNode) -> SearchNode:
        if node.id != len(self.nodes):
            raise ValueError(f"lats: node {node.id} added as node {len(self.nodes)}")
        self.nodes.append(node)
        if node.parent is not None:
            self.nodes[node.parent].children.append(node.id)
        return node

    def subtree(self, nid: int) -> list[SearchNode]:
        out, todo = [], [nid]
        while todo:
            node = self.nodes[todo.pop()]
            out.append(node)
            todo.extend(node.children)
        return out

    def visits(self, nid: int) -> int:
        return len(self.subtree(nid))

    def mean_value(self, nid: int) -> float:
        below = self.subtree(nid)
        return sum(n.value for n in below) / len(below)

    def uct(self, nid: int, c: float) -> float:
        node = self.nodes[nid]
        if node.parent is None:
            return self.mean_value(nid)
        n = self.visits(nid)
        return self.mean_value(nid) + c * math.sqrt(math.log(self.visits(node.parent)) / n)

    def select(self, c: float) -> SearchNode:
        """The leaf to expand: from the root, the child of highest UCT, ties to the older."""
        node = self.nodes[0]
        while node.children:
            node = self.nodes[max(node.children, key=lambda i: (self.uct(i, c), -i))]
        return node

    def expanding(self, width: int) -> SearchNode | None:
        """The node whose expansion is under way (it has fewer than `width` children)."""
        last = self.nodes[-1]
        if last.parent is None:
            return None
        parent = self.nodes[last.parent]
        return parent if len(parent.children) < width else None

    def best(self) -> SearchNode:
        """The node to submit: all the agent's tests passed, else the most of them, the older on ties."""
        return max(self.nodes, key=lambda n: (n.passed, n.value, -n.id))

    def path(self, nid: int) -> list[SearchNode]:
        """From the root to `nid`."""
        out = [self.nodes[nid]]
        while out[-1].parent is not None:
            out.append(self.nodes[out[-1].parent])
        return out[::-1]

    def lessons(self, nid: int, window: int) -> list[str]:
        """The lessons on the path from the root to `nid`, the last `window`, `nid`'s last."""
        found = [n.lesson for n in self.path(nid) if n.lesson]
        return found[-window:] if window > 0 else []

    def events(self, submitted: int) -> list[Node]:
        """The tree as it stands, `chosen` on the path from the root to `submitted`."""
        chosen = {n.id for n in self.path(submitted)}
        return [Node(id=n.id, parent=n.parent, depth=n.depth, code=n.draft.code, value=n.value,
                     passed_internal=n.passed, chosen=n.id in chosen, lesson=n.lesson or None,
                     visits=self.visits(n.id)) for n in self.nodes]

    @classmethod
    def from_records(cls, task: "Task", records: Sequence["TrialRecord"]) -> "Tree":
        """The tree an interrupted attempt had built, from its records' events alone
        (the last record's `node` events, each node's `test_run` and note): no hidden
        result is read."""
        last = records[-1]
        shape = sorted(of_type(last.events, Node), key=lambda n: n.id)
        if [n.id for n in shape] != list(range(last.trial)):
            raise ValueError(f"lats: the record of trial {last.trial} of {task.task_id} attempt {last.attempt} "
                             f"does not hold the search tree's {last.trial} nodes; the attempt cannot be resumed")
        notes: dict[int, dict[str, Any]] = {}
        runs: dict[int, TestRun] = {}
        lessons: dict[int, str] = {}
        for rec in records:
            for ev in rec.events:
                if isinstance(ev, Note) and ev.name == NODE_NOTE:
                    notes[int(ev.data["node"])] = ev.data
                elif isinstance(ev, TestRun) and ev.node is not None:
                    runs[ev.node] = ev
                elif isinstance(ev, LessonWritten) and ev.node is not None:
                    lessons[ev.node] = ev.text
        tree = cls()
        for n in shape:
            note = notes.get(n.id)
            if note is None:
                raise ValueError(f"lats: no record of {task.task_id} attempt {last.attempt} holds node {n.id}'s "
                                 f"{NODE_NOTE!r} note; the attempt cannot be resumed")
            code, error = n.code, note.get("error")
            draft = Draft(str(note.get("raw_output", "")), code, graded_program(task, code) if not error else "",
                          error, note.get("temperature_used"))
            run = runs.get(n.id)
            internal = None if run is None else Evaluation(
                [TestRecord(str(r["test"]), str(r["status"]), str(r.get("detail") or "")) for r in run.results],
                run.passed, run.seconds)
            tree.add(SearchNode(n.id, n.parent, n.depth, draft, internal, str(note.get("feedback", "")), n.value,
                                n.passed_internal, lessons.get(n.id, n.lesson or "")))
        # Only the node the last record submitted, or a later one, can be submitted from
        # here on (values never change; ties go to the older): its verdicts on the
        # agent's tests are the record's own, as graded (a test run event keeps less).
        submitted = max((n for n in shape if n.chosen), key=lambda n: n.depth)
        if tree.nodes[submitted.id].internal is not None:
            tree.nodes[submitted.id].internal = Evaluation(list(last.internal_results), bool(last.internal_passed),
                                                           tree.nodes[submitted.id].internal.seconds)
        return tree


class Lats(Strategy):
    traits = Traits(
        name="lats",
        description="tree search over implementations, valued by the agent's own tests (UCT), lessons fed to children",
        writes_tests=True, iterates=True, writes_lessons=True, rival="resample", isolates="reflexion",
        order=40, plot_style=((0, (3, 1, 1, 1)), "D"), calls_per_trial=(2.0, 1.5),
    )
    options = {"width": 2, "expansions": 0, "uct": 1.0}

    @classmethod
    def convert_option(cls, key: str, value: Any) -> Any:
        """Options are checked before a run starts: width >= 1, expansions >= 0, uct finite >= 0."""
        found = super().convert_option(key, value)
        if (key == "width" and found < 1) or (key == "expansions" and found < 0) or \
                (key == "uct" and not (found >= 0 and math.isfinite(found))):
            raise ValueError(f"lats.{key}: {value!r} is out of range (width >= 1, expansions >= 0, uct >= 0)")
        return found

    def budget(self, ctx: "AttemptContext") -> tuple[int, int, float]:
        """(width, the most nodes an attempt makes, the UCT constant), checked."""
        found = {}
        for key in self.options:
            try:
                found[key] = self.option(ctx, key)
            except ValueError:
                raise ValueError(f"lats.{key} must be {'a number' if key == 'uct' else 'an integer'}, got "
                                 f"{ctx.settings.options(self.traits.name)[key]!r}") from None
        width, expansions, c = found["width"], found["expansions"], found["uct"]
        if width < 1:
            raise ValueError(f"lats.width must be at least 1, got {width} (--strategy-option lats.width=N)")
        if expansions < 0:
            raise ValueError(f"lats.expansions must be 0 (as many as --trials allows) or more, got {expansions}")
        if not (c >= 0 and math.isfinite(c)):
            raise ValueError(f"lats.uct must be a finite number of at least 0, got {c}")
        return width, (1 + expansions * width if expansions else ctx.settings.trials), c

    def run_attempt(self, ctx: "AttemptContext", task: "Task", attempt: int,
                    done: Sequence["TrialRecord"]) -> Iterator["TrialRecord"]:
        s = ctx.settings
        width, most, c = self.budget(ctx)
        tree = Tree.from_records(task, done) if done else Tree()
        tests = tests_of(task, done) if done else []
        for trial in range(len(tree) + 1, most + 1):
            scope = ctx.trial(task, self.traits.name, attempt, trial)
            if trial == 1:
                tests = write_tests(scope, attempt)
                parent = None
                draft = write_code(scope, previous=None, settings=s.first_call(attempt))
            else:
                parent = tree.expanding(width) or tree.select(c)
                draft = self.expand(scope, tree, parent)
            node = self.add_node(scope, tree, parent, draft, tests)
            best = tree.best()
            if not tests:
                stop: str | None = "no_internal_tests"
            elif node.passed:
                stop = "internal_pass"
            elif trial == most:
                stop = "budget"
            else:
                stop = None
            for ev in tree.events(best.id):
                scope.event(ev)
            hidden = grade_hidden(scope, best.draft)  # measurement only: nothing above reads it
            record = scope.record(final=stop is not None, stop_reason=stop, code=best.draft.code,
                                  raw_output=best.draft.raw_output, feedback=best.feedback, error=best.draft.error,
                                  temperature_used=best.draft.temperature_used,
                                  **verdicts(best.internal, hidden, tests, task))
            yield record  # the caller has stored it when we resume here
            store_lessons(ctx, record)
            if record.final:
                return

    def expand(self, scope: TrialScope, tree: Tree, parent: SearchNode) -> Draft:
        """One child of `parent`: Self-Reflection on `parent` first if this is its first child."""
        s = scope.ctx.settings
        if not parent.children:
            parent.lesson = reflect(scope, scope.attempt, code=parent.shown_code, feedback=parent.feedback,
                                    about_trial=parent.trial, node=parent.id)
        lessons = tree.lessons(parent.id, s.memory_window)
        scope.event(MemoryShown(lessons=lessons))
        return write_code(scope, previous=Previous(parent.shown_code, parent.feedback), lessons=lessons,
                          settings=s.fresh_sample(scope.attempt, scope.trial))

    def add_node(self, scope: TrialScope, tree: Tree, parent: SearchNode | None, draft: Draft,
                 tests: Sequence[Any]) -> SearchNode:
        """`draft` on the agent's own tests, added to the tree as the trial's node."""
        nid = len(tree)
        internal, feedback = evaluate(scope, draft, tests, label=f"node {nid}", node=nid)
        passed_count = sum(r.status == "passed" for r in internal.records) if internal else 0
        value = passed_count / len(tests) if tests else 0.0
        node = tree.add(SearchNode(nid, parent.id if parent else None, parent.depth + 1 if parent else 0, draft,
                                   internal, feedback, value, bool(tests) and bool(internal and internal.passed)))
        scope.event(Note(name=NODE_NOTE, data={"node": nid, "feedback": feedback, "raw_output": draft.raw_output,
                                               "error": draft.error, "temperature_used": draft.temperature_used}))
        return node
