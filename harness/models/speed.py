"""How long a run will keep a model busy, before it starts: from the model's measured
speed. The embedded model's speeds are the catalogue's (harness/data/local_models.toml,
measured on 2 cores); a model of another kind has none here (its time is not estimated).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

from harness.models.fetch import LocalModelInfo, catalogue, default_model_name


def local_info(spec: str) -> LocalModelInfo | None:
    """The catalogue entry of a `local[:<name>]` spec (None for a GGUF path or another kind)."""
    prefix, _, rest = spec.partition(":")
    if prefix != "local":
        return None
    known = catalogue()
    name = rest or default_model_name()
    return known.get(name) if not Path(name).suffix == ".gguf" else None


def is_local(spec: str) -> bool:
    return spec.partition(":")[0] == "local"


def time_estimate(spec: str, estimate: Mapping[str, Any]) -> dict[str, Any] | None:
    """{fewest_s, most_s, basis} for an estimate (harness/run/budget.py) of a model with a
    measured speed: the fewest tokens at the fastest speed .. the most at the slowest;
    None when the speed is not known."""
    info = local_info(spec)
    if info is None or info.tokens_per_s is None:
        return None
    slow, fast = info.tokens_per_s
    prompt = info.prompt_tokens_per_s
    f, m = estimate["total"]["fewest"], estimate["total"]["most"]

    def seconds(bound: Mapping[str, Any], gen: float) -> float:
        return bound["output_tokens"] / gen + (bound["input_tokens"] / prompt if prompt else 0.0)

    basis = (f"{info.name}'s measured speed on 2 cores: {slow:g}..{fast:g} generated tokens/s"
             + (f", {prompt:g} prompt tokens/s" if prompt else " (prompt reading not counted)")
             + "; every answer at its whole max_tokens, so the most is an upper bound")
    return {"fewest_s": round(seconds(f, fast), 1), "most_s": round(seconds(m, slow), 1), "basis": basis}
