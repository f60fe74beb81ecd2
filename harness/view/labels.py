"""Human words for record fields and numbers: what the pages print instead of snake_case."""
from __future__ import annotations

import datetime as _dt
import math
from typing import Any

LABELS = {
    "model_calls": "model calls", "cached_calls": "calls the cache answered", "input_tokens": "input tokens",
    "output_tokens": "output tokens", "cache_read_tokens": "prompt-cache reads", "cache_write_tokens":
    "prompt-cache writes", "cost_usd": "cost", "model_s": "model time", "sandbox_s": "sandbox time",
    "wall_s": "trial time", "internal_pass": "its own tests passed", "budget": "trial budget spent",
    "single_sample": "one sample", "no_internal_tests": "no self-tests to check", "error": "error",
    "passed": "passed", "failed": "failed", "timeout": "timed out", "load_s": "loading",
    "sandbox_start_s": "sandbox start-up", "trials_s": "trials (elapsed)", "report_s": "report",
    "max_internal_tests": "self-tests per attempt", "memory_window": "lessons shown", "test_timeout_s":
    "time limit per test", "max_tokens": "max tokens per answer", "oracle_feedback": "oracle feedback",
    "samples": "samples", "trials": "trial budget", "temperature": "temperature", "seed": "seed",
    "workers": "workers", "sandbox": "sandbox", "memory_namespace": "memory namespace", "tasks": "task set",
    "submitted": "submitted", "max_turns": "turn limit reached", "token_budget": "token budget spent",
    "context_full": "context full", "no_tool_call": "no tool call",
}
SETTINGS = ("tasks", "trials", "samples", "temperature", "seed", "max_internal_tests", "memory_window",
            "max_tokens", "test_timeout_s", "workers", "sandbox", "memory_namespace", "oracle_feedback")


def label(key: Any) -> str:
    text = str(key)
    return LABELS.get(text, text.replace("_", " "))


def num(x: Any, digits: int = 0) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, (int, float)):
        return f"{x:,.{digits}f}"
    return str(x)


def when(stamp: Any) -> str:
    """An ISO time as 'YYYY-MM-DD HH:MM UTC'."""
    t = parse_time(stamp)
    return t.strftime("%Y-%m-%d %H:%M UTC") if t else (str(stamp) if stamp else "–")


def parse_time(stamp: Any) -> _dt.datetime | None:
    if not stamp:
        return None
    text = str(stamp).replace("Z", "+00:00")
    try:
        t = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)


def model_text(header: dict[str, Any]) -> dict[str, str]:
    """The model spec, and what run.json recorded of its identity (file sha256, served
    model, engine): never a guess from this checkout."""
    cfg = header.get("config") if isinstance(header.get("config"), dict) else {}
    spec = str(header.get("model") or cfg.get("model") or "?")
    ident = header.get("model_identity") if isinstance(header.get("model_identity"), dict) else {}
    info = header.get("model_info") if isinstance(header.get("model_info"), dict) else {}
    file = ident.get("file") or ident.get("path") or info.get("file") or info.get("path") or ""
    sha = ident.get("file_sha256") or info.get("sha256") or ""
    served = ident.get("served_model") or ""
    engine = " ".join(str(ident[k]) for k in ("engine", "engine_version") if ident.get(k))
    note = "" if (ident or info) else "run.json does not record the model's identity"
    return {"spec": spec, "file": str(file or served), "sha256": str(sha), "engine": engine, "note": note}


def settings(config: dict[str, Any], header: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """The settings a reader needs to judge a run, in words (run.json holds them all)."""
    out = []
    header = header or {}
    for key in SETTINGS:
        if key in config and config[key] is not None:
            value = config[key]
            if key == "test_timeout_s":
                value = f"{value} s"
            out.append((label(key), num(value) if isinstance(value, bool) else str(value)))
    tasks = header.get("tasks") if isinstance(header.get("tasks"), dict) else {}
    if tasks.get("digest"):
        out.append(("task set digest", str(tasks["digest"])))
    if tasks.get("prompt_form"):
        out.append(("task prompt form", str(tasks["prompt_form"])))
    prompts = header.get("prompts") if isinstance(header.get("prompts"), dict) else {}
    if prompts:
        where = prompts.get("folder") or "the harness's own"
        changed = prompts.get("overridden") or []
        out.append(("prompt set", f"{where}; digest {str(prompts.get('digest', '?'))[:19]}"
                    + (f"; overrides {', '.join(map(str, changed))}" if changed else "")))
    memory = header.get("memory") if isinstance(header.get("memory"), dict) else {}
    if memory:
        earlier = memory.get("earlier") if isinstance(memory.get("earlier"), dict) else {}
        text = f"{memory.get('namespace')} ({'shared' if memory.get('shared') else 'this run only'})"
        if earlier.get("lessons"):
            text += f"; {earlier['lessons']} lessons from {earlier.get('runs', '?')} earlier run(s) at the start"
        out.append(("memory", text))
    git = header.get("git") if isinstance(header.get("git"), dict) else {}
    if git.get("commit"):
        out.append(("harness commit", f"{str(git['commit'])[:12]}{' (dirty)' if git.get('dirty') else ''}"))
    return out
