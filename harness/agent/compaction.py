"""Keeping an agent's conversation inside the model's context.

Before each turn the prompt's size is estimated (characters of the system prompt, the
messages, their tool calls and the tool definitions, over characters per token, which
starts at 3 and is measured from each reply's reported input tokens). When it passes
`limit` (the context less the reply's max_tokens, with 5% spare), the history is
shortened by the first rule that makes it fit, each step recorded as a Compaction
event; the messages sent after it are the shortened ones (every ModelCall event holds
exactly what was sent):

1. rule "cut": the tool results of the turns older than the last `keep_turns` become a
   one-line stub (their length and start; react_cut.j2);
2. the same for every turn but the last, with the long strings of their tool calls'
   arguments and their long texts also cut;
3. every tool result cut to its start, the last turn's too.

With `rule = "summary"`, the turns older than the last `keep_turns` are first replaced
by the model's summary of them (role "compaction", react_summarise.j2), put in the
task's message (react_summary.j2); the cut steps follow if it still does not fit. A
conversation that fits after none of them ends the episode: `context_full`.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from harness.models.base import Message
from harness.models.tools import ToolCall, ToolSpec
from harness.rundata.events import Compaction

RULES = ("cut", "summary")
_KEEP_CHARS = 300  # a text this long or shorter is never cut
_HEAD_CHARS = 120  # a stub keeps this much of the text's start
_LAST_HEAD_CHARS = 600  # step 3: what a tool result keeps


@dataclass
class Compactor:
    limit: int  # tokens the prompt may take
    rule: str
    keep_turns: int
    render: Callable[..., str]  # the prompt set's render(template, **values)
    task_text: str  # the task's message as first sent (a summary is put after it)
    chars_per_token: float = 3.0
    summary: str | None = None

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"compaction must be one of {', '.join(RULES)}, got {self.rule!r}")

    # --- size -----------------------------------------------------------------------
    @staticmethod
    def chars(system: str, messages: Sequence[Message], specs: Sequence[ToolSpec]) -> int:
        n = len(system) + sum(len(json.dumps(s.to_dict())) for s in specs)
        for m in messages:
            n += len(m.content) + 8 + sum(len(c.name) + len(c.arguments) + 16 for c in m.tool_calls)
        return n

    def tokens(self, system: str, messages: Sequence[Message], specs: Sequence[ToolSpec]) -> int:
        return math.ceil(self.chars(system, messages, specs) / self.chars_per_token)

    def calibrate(self, chars: int, input_tokens: int) -> None:
        """Characters per token as the last reply's reported input tokens say (within
        1.5 and 4: a backend that reports nothing useful changes nothing much)."""
        if input_tokens > 0 and chars > 0:
            self.chars_per_token = min(4.0, max(1.5, chars / input_tokens))

    # --- fitting ---------------------------------------------------------------------
    def fit(self, system: str, messages: list[Message], specs: Sequence[ToolSpec],
            summarise: Callable[[list[Message], str | None], str] | None,
            record: Callable[[Compaction], None]) -> tuple[list[Message], bool]:
        """(the messages to send, whether they fit)."""
        before = self.tokens(system, messages, specs)
        if before <= self.limit:
            return messages, True
        steps: list[tuple[str, Callable[[list[Message]], tuple[list[Message], int, str | None]]]] = []
        if self.rule == "summary" and summarise is not None:
            steps.append((f"summary by the model of the turns older than the last {self.keep_turns}",
                          lambda ms: self._summarised(ms, summarise)))
        steps += [
            (f"cut the tool results older than the last {self.keep_turns} turns",
             lambda ms: self._cut(ms, self.keep_turns, arguments=False)),
            ("cut the tool results, long call arguments and long texts of every turn but the last",
             lambda ms: self._cut(ms, 1, arguments=True)),
            ("cut every tool result to its start", self._cut_all),
        ]
        current = messages
        for rule, step in steps:
            shortened, dropped, summary = step(current)
            if dropped == 0:
                continue
            after = self.tokens(system, shortened, specs)
            record(Compaction(rule=rule, tokens_before=before, tokens_after=after, dropped=dropped, summary=summary))
            current, before = shortened, after
            if after <= self.limit:
                return current, True
        return current, False

    def _stub(self, text: str, keep: int = _HEAD_CHARS) -> str:
        head = " ".join(text[:keep].split())
        return self.render("react_cut", chars=len(text), head=head)

    def _short(self, text: str, limit: int = _KEEP_CHARS) -> tuple[str, bool]:
        if len(text) <= limit:
            return text, False
        stub = self._stub(text)
        return (stub, True) if len(stub) < len(text) else (text, False)

    @staticmethod
    def _turn_starts(messages: Sequence[Message]) -> list[int]:
        return [i for i, m in enumerate(messages) if m.role == "assistant"]

    def _cut(self, messages: list[Message], keep: int, *, arguments: bool) -> tuple[list[Message], int, None]:
        starts = self._turn_starts(messages)
        if len(starts) <= keep:
            return messages, 0, None
        end = starts[len(starts) - keep] if keep > 0 else len(messages)
        out, dropped = [], 0
        for i, m in enumerate(messages):
            if 0 < i < end:
                if m.role == "tool":
                    content, changed = self._short(m.content)
                    if changed:
                        m, dropped = replace(m, content=content), dropped + 1
                elif arguments and m.role == "assistant":
                    content, changed = self._short(m.content)
                    calls, cut_calls = self._cut_arguments(m.tool_calls)
                    if changed or cut_calls:
                        m, dropped = replace(m, content=content, tool_calls=calls), dropped + int(changed) + cut_calls
            out.append(m)
        return out, dropped, None

    def _cut_arguments(self, calls: Sequence[ToolCall]) -> tuple[tuple[ToolCall, ...], int]:
        out, cut = [], 0
        for c in calls:
            try:
                args = json.loads(c.arguments)
            except (ValueError, RecursionError):
                args = None
            if isinstance(args, dict):
                shortened = {k: (self._short(v)[0] if isinstance(v, str) else v) for k, v in args.items()}
                if shortened != args:
                    c, cut = ToolCall(c.id, c.name, json.dumps(shortened, ensure_ascii=False)), cut + 1
            elif len(c.arguments) > _KEEP_CHARS:
                c, cut = ToolCall(c.id, c.name, json.dumps({"cut": self._stub(c.arguments)})), cut + 1
            out.append(c)
        return tuple(out), cut

    def _cut_all(self, messages: list[Message]) -> tuple[list[Message], int, None]:
        out, dropped = [], 0
        for m in messages:
            if m.role == "tool" and len(m.content) > _LAST_HEAD_CHARS + _KEEP_CHARS:
                m, dropped = replace(m, content=m.content[:_LAST_HEAD_CHARS] + "\n" + self._stub(m.content, 0)), \
                    dropped + 1
            out.append(m)
        return out, dropped, None

    def _summarised(self, messages: list[Message],
                    summarise: Callable[[list[Message], str | None], str]) -> tuple[list[Message], int, str | None]:
        starts = self._turn_starts(messages)
        if len(starts) <= self.keep_turns:
            return messages, 0, None
        end = starts[len(starts) - self.keep_turns] if self.keep_turns > 0 else len(messages)
        older = messages[1:end]
        summary = summarise(older, self.summary).strip()
        if not summary:
            return messages, 0, None
        self.summary = summary
        first = replace(messages[0], content=self.task_text + "\n\n" + self.render("react_summary", summary=summary),
                        cache_prefix=False)
        return [first, *messages[end:]], len(older), summary
