"""The price table (harness/data/prices.toml) and cost arithmetic."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib import resources
from typing import Mapping

from harness.models.base import Price, Usage


@dataclass(frozen=True)
class ModelFacts:
    """What the table knows about one model id."""

    price: Price | None
    accepts_temperature: bool


def load_table() -> dict[str, ModelFacts]:
    text = resources.files("harness").joinpath("data", "prices.toml").read_text("utf-8")
    table: dict[str, ModelFacts] = {}
    for model_id, row in tomllib.loads(text)["models"].items():
        price = Price(
            input=float(row["input"]),
            output=float(row["output"]),
            cache_read=float(row.get("cache_read", 0.0)),
            cache_write=float(row.get("cache_write", 0.0)),
        )
        table[model_id] = ModelFacts(price, bool(row.get("temperature", False)))
    return table


def lookup(model_id: str, table: Mapping[str, ModelFacts]) -> ModelFacts | None:
    """The entry for `model_id`, or for its longest listed prefix (dated ids)."""
    if model_id in table:
        return table[model_id]
    best = max((k for k in table if model_id.startswith(k + "-")), key=len, default=None)
    return table[best] if best is not None else None


def price_for(
    model_id: str, overrides: Mapping[str, Price], table: Mapping[str, ModelFacts]
) -> Price | None:
    """Settings override the shipped table, by exact id or by prefix likewise."""
    if model_id in overrides:
        return overrides[model_id]
    best = max((k for k in overrides if model_id.startswith(k + "-")), key=len, default=None)
    if best is not None:
        return overrides[best]
    facts = lookup(model_id, table)
    return facts.price if facts else None


def cost_usd(usage: Usage, price: Price | None) -> float | None:
    if price is None:
        return None
    return (
        usage.input_tokens * price.input
        + usage.output_tokens * price.output
        + usage.cache_read_tokens * price.cache_read
        + usage.cache_write_tokens * price.cache_write
    ) / 1_000_000
