"""What the events of tool-using agents say, for the numbers and the views.

An agent's trial holds its turns as ModelCall events with a turn number, each call's
result as a ToolCallRun event, compactions, and the episode's end as a Note named
"episode" (harness/agent/episode.py). From them:

* `trial_counts`: a record's turns, tool calls by tool, tool calls that did not return
  ok, and its episode's stop reason: columns of the trial frame (frames.trial_row);
* `agent_table` and `stop_table`: per strategy, summed over every recorded trial (the
  numbers' "agents" and "stop_reasons" tables: summary.json);
* `conversation`: one trial as the conversation the model had (the view, the report).
"""
from __future__ import annotations

import json
from typing import Any, Iterable, Sequence

import pandas as pd

from harness.rundata.events import Compaction, ModelCall, Note, ToolCallRun, as_dicts

EPISODE = "episode"  # the Note an agent's episode ends with


def episode_of(events: Iterable[Any]) -> dict[str, Any] | None:
    for e in events:
        if isinstance(e, Note) and e.name == EPISODE:
            return dict(e.data)
    return None


def trial_counts(events: Sequence[Any]) -> tuple[int, dict[str, int], int, str | None]:
    """(turns, tool calls by tool, tool calls not ok, the episode's stop reason)."""
    turns = sum(1 for e in events if isinstance(e, ModelCall) and e.turn is not None and e.role == "agent")
    by_tool: dict[str, int] = {}
    not_ok = 0
    for e in events:
        if isinstance(e, ToolCallRun):
            by_tool[e.name] = by_tool.get(e.name, 0) + 1
            not_ok += int(e.status != "ok")
    found = episode_of(events)
    return turns, by_tool, not_ok, (str(found["stop"]) if found and found.get("stop") else None)


def agent_table(trials: pd.DataFrame, strategies: Sequence[str]) -> list[dict[str, Any]]:
    """Per strategy whose trials made tool calls or turns: episodes (trials with turns),
    turns (total, and mean per episode), tool calls (total, by tool, not ok) and the
    episodes' stop reasons, over every recorded trial."""
    rows = []
    for strategy in strategies:
        g = trials[trials["strategy"] == strategy] if not trials.empty else trials
        if g.empty or "turns" not in g.columns:
            continue
        episodes = g[g["turns"] > 0]
        if episodes.empty:
            continue
        by_tool: dict[str, int] = {}
        for calls in episodes["tool_calls"]:
            for name, n in (calls or {}).items():
                by_tool[name] = by_tool.get(name, 0) + int(n)
        stops = episodes["episode_stop"].fillna("(none)").value_counts()
        rows.append({
            "strategy": strategy,
            "episodes": int(len(episodes)),
            "turns": int(episodes["turns"].sum()),
            "turns_per_episode": round(float(episodes["turns"].mean()), 3),
            "tool_calls": int(sum(by_tool.values())),
            "tool_calls_by_tool": dict(sorted(by_tool.items())),
            "tool_calls_not_ok": int(episodes["tool_errors"].sum()),
            "episode_stops": {str(k): int(v) for k, v in sorted(stops.items())},
        })
    return rows


def stop_table(trials: pd.DataFrame, strategies: Sequence[str]) -> list[dict[str, Any]]:
    """Per strategy: its complete attempts by their final trial's stop reason, and of
    those, the ones whose final program did not compile, by compile status
    (`did_not_compile`: {compile_error | compile_timeout | compile_memory: attempts}; {}
    where every final program compiled or nothing was compiled)."""
    rows = []
    if trials.empty:
        return rows
    finals = trials[trials["final"] & trials["complete"]]
    failed = finals["compile_status"].notna() & (finals["compile_status"] != "ok") \
        if "compile_status" in finals.columns else pd.Series(False, index=finals.index)
    for strategy in strategies:
        mine = finals["strategy"] == strategy
        g = finals[mine]
        counts = g["stop_reason"].fillna("(none)").value_counts()
        broken = finals[mine & failed]
        for reason, n in sorted(counts.items()):
            of_reason = broken[broken["stop_reason"].fillna("(none)") == reason]
            statuses = of_reason["compile_status"].value_counts() if not of_reason.empty else {}
            rows.append({"strategy": strategy, "stop_reason": str(reason), "attempts": int(n),
                         "did_not_compile": {str(k): int(v) for k, v in sorted(dict(statuses).items())}})
    return rows


def not_compiled(stops: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per strategy, from `stop_table`'s rows: its complete attempts (`finals`), those
    whose final program did not compile (`total`) and by compile status (`by_status`)."""
    out: dict[str, dict[str, Any]] = {}
    for row in stops:
        entry = out.setdefault(row["strategy"], {"finals": 0, "total": 0, "by_status": {}})
        entry["finals"] += int(row["attempts"])
        for status, n in (row.get("did_not_compile") or {}).items():
            entry["total"] += int(n)
            entry["by_status"][status] = entry["by_status"].get(status, 0) + int(n)
    for entry in out.values():
        entry["by_status"] = dict(sorted(entry["by_status"].items()))
    return out


def arguments_text(arguments: Any) -> str:
    """A tool call's arguments as a reader wants them: the JSON the model wrote decoded,
    each string value shown as it is (code keeps its lines and indentation, not \\n
    escapes), one `name:` heading per argument, the only argument without one; text
    that is not a JSON object is shown as written."""
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if not isinstance(value, dict) or not value:
        return text
    shown = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, indent=1) for k, v in value.items()}
    if len(shown) == 1:
        return next(iter(shown.values()))
    return "\n".join(f"{k}:\n{v}" if "\n" in v else f"{k}: {v}" for k, v in shown.items())


def conversation(events: Sequence[Any]) -> dict[str, Any] | None:
    """A trial's agent turns as a conversation, or None when it has none: {"system",
    "task" (the first message sent), "turns": [{turn, text, input_tokens, output_tokens,
    latency_s, cached, error, calls: [tool_call events as dicts], compactions: [the
    compactions just before this turn], nudged (no call)}], "episode" (its end)}."""
    agent = [e for e in events if isinstance(e, ModelCall) and e.role == "agent" and e.turn is not None]
    if not agent:
        return None
    turns: list[dict[str, Any]] = []
    by_turn: dict[int, dict[str, Any]] = {}
    pending: list[dict[str, Any]] = []
    for e, d in zip(events, as_dicts(list(events))):
        if isinstance(e, Compaction):
            pending.append(d)
        elif isinstance(e, ModelCall) and e.role == "compaction" and pending:
            pending[-1]["summary_call"] = {"latency_s": e.latency_s, "input_tokens": e.input_tokens,
                                          "output_tokens": e.output_tokens}
        elif isinstance(e, ModelCall) and e.role == "agent" and e.turn is not None:
            entry = {"turn": e.turn, "text": e.text, "input_tokens": e.input_tokens, "output_tokens": e.output_tokens,
                     "latency_s": e.latency_s, "cached": e.cached, "error": e.error, "calls": [],
                     "asked": list(e.tool_calls), "compactions": pending, "messages_sent": len(e.messages)}
            pending = []
            turns.append(entry)
            by_turn[e.turn] = entry
        elif isinstance(e, ToolCallRun):
            target = by_turn.get(e.turn) if e.turn is not None else (turns[-1] if turns else None)
            if target is not None:
                target["calls"].append({**d, "arguments_shown": arguments_text(e.arguments)})
    for entry in turns:
        entry["nudged"] = not entry["asked"] and entry["error"] is None
    first = agent[0]
    return {
        "system": first.system or "",
        "task": first.messages[0].get("content", "") if first.messages else "",
        "turns": turns,
        "episode": episode_of(events) or {},
        "trailing_compactions": pending,
    }
