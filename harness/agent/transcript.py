"""An episode as Self-Reflection and the summariser read it: a list of entries
{"role": assistant | tool | note, "name" (a tool result's tool), "text", "calls"
([{"name", "arguments"}], an assistant turn's calls)}, rendered by react_transcript.j2.

Built from the messages of a conversation (the summariser) or from a trial's recorded
events (Self-Reflection: the lesson about episode e is written at the start of episode
e+1, which may run in a later session), and cut to a budget of characters by
`within`: each text to its share, the oldest entries left out first.
"""
from __future__ import annotations

from typing import Any, Sequence

from harness.models.base import Message
from harness.rundata.events import ModelCall, ToolCallRun

Entry = dict[str, Any]


def of_messages(messages: Sequence[Message]) -> list[Entry]:
    out: list[Entry] = []
    for m in messages:
        if m.role == "assistant":
            out.append({"role": "assistant", "name": "", "text": m.content,
                        "calls": [{"name": c.name, "arguments": c.arguments} for c in m.tool_calls]})
        elif m.role == "tool":
            out.append({"role": "tool", "name": m.name or "", "text": m.content, "calls": []})
        else:
            out.append({"role": "note", "name": "", "text": m.content, "calls": []})
    return out


def of_events(events: Sequence[Any], role: str = "agent") -> list[Entry]:
    """The agent's turns (ModelCall events of `role`) and each call's result, in order."""
    out: list[Entry] = []
    for e in events:
        if isinstance(e, ModelCall) and e.role == role and e.error is None:
            out.append({"role": "assistant", "name": "", "text": e.text,
                        "calls": [{"name": c.get("name", ""), "arguments": c.get("arguments", "")}
                                  for c in e.tool_calls]})
        elif isinstance(e, ToolCallRun):
            out.append({"role": "tool", "name": e.name, "text": e.result, "calls": []})
    return out


def within(entries: Sequence[Entry], chars: int, per_entry: int = 1200) -> tuple[list[Entry], int]:
    """(the entries that fit in `chars`, newest kept, each text and argument cut to
    `per_entry`; how many of the oldest were left out)."""
    def short(text: str) -> str:
        return text if len(text) <= per_entry else text[:per_entry // 2] + " [...] " + text[-per_entry // 2:]

    cut = [{**e, "text": short(e["text"]),
            "calls": [{"name": c["name"], "arguments": short(c["arguments"])} for c in e["calls"]]} for e in entries]
    kept: list[Entry] = []
    total = 0
    for e in reversed(cut):
        size = len(e["text"]) + sum(len(c["arguments"]) + len(c["name"]) for c in e["calls"]) + 20
        if kept and total + size > chars:
            break
        kept.append(e)
        total += size
    kept.reverse()
    return kept, len(cut) - len(kept)
