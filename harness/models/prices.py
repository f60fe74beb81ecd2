"""The price tables and cost arithmetic.

Prices come, last one winning, from the shipped table (harness/data/prices.toml), a
user's table of the same format (the `price_table` setting), the run TOML's `prices`
table, and the `--price IN/OUT` flag (the run's model, whatever id it reports). A model
with no price has an unknown cost (None), never 0.
"""
from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from harness.models.base import Price, Usage


@dataclass(frozen=True)
class ModelFacts:
    """What the table knows about one model id."""

    price: Price | None
    accepts_temperature: bool


# Any model the run opens: the key of the `--price` flag's entry among the overrides.
RUN_MODEL = "*"


class PriceError(ValueError):
    """A price table or a --price value that cannot be read; the message says where."""


def load_table() -> dict[str, ModelFacts]:
    text = resources.files("harness").joinpath("data", "prices.toml").read_text("utf-8")
    return _facts(tomllib.loads(text), "harness/data/prices.toml")


def _facts(data: Mapping[str, Any], where: str) -> dict[str, ModelFacts]:
    models = data.get("models")
    if not isinstance(models, Mapping):
        raise PriceError(f"{where}: expected a [models.\"<model id>\"] table per model (input = ..., output = ...)")
    table: dict[str, ModelFacts] = {}
    for model_id, row in models.items():
        if not isinstance(row, Mapping):
            raise PriceError(f"{where}: models.{model_id} must be a table with input and output prices")
        try:
            price = price_of(row)
        except (KeyError, TypeError, ValueError) as exc:
            raise PriceError(f"{where}: models.{model_id}: {exc}") from None
        table[str(model_id)] = ModelFacts(price, bool(row.get("temperature", False)))
    return table


def price_of(row: Mapping[str, Any]) -> Price:
    """A Price from a table row {input, output[, cache_read, cache_write]} in dollars per
    million tokens; every figure a finite number >= 0; a cache rate not given is the
    input rate."""
    values = {}
    for name in ("input", "output", "cache_read", "cache_write"):
        if name not in row:
            if name in ("input", "output"):
                raise KeyError(f"no {name} price")
            values[name] = values["input"]  # prompt-cache tokens are never free by omission
            continue
        value = row[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"{name} must be a number >= 0 (dollars per million tokens), got {value!r}")
        values[name] = float(value)
    return Price(**values)


def load_user_table(path: Path) -> dict[str, ModelFacts]:
    """A user's price table: the shipped table's format, any model ids."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise PriceError(f"price table {path}: cannot be read ({exc.strerror or exc})") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"price table {path}: not valid TOML ({exc})") from None
    return _facts(data, str(path))


_FLAG = re.compile(r"^\s*([0-9.eE+-]+)\s*/\s*([0-9.eE+-]+)\s*(?:/\s*([0-9.eE+-]+)\s*(?:/\s*([0-9.eE+-]+)\s*)?)?$")


def parse_price_flag(text: str) -> Price:
    """`--price IN/OUT[/CACHE_READ[/CACHE_WRITE]]`, dollars per million tokens. Prompt-cache
    reads and writes not given cost the input price (never free by omission)."""
    match = _FLAG.match(str(text))
    if not match:
        raise PriceError(f"--price {text!r}: write IN/OUT in dollars per million tokens, e.g. --price 3/15 "
                         "(optionally /CACHE_READ/CACHE_WRITE)")
    try:
        numbers = [float(g) if g is not None else None for g in match.groups()]
    except ValueError:
        raise PriceError(f"--price {text!r}: not numbers; e.g. --price 3/15") from None
    if any(n is not None and (not math.isfinite(n) or n < 0) for n in numbers):
        raise PriceError(f"--price {text!r}: prices must be numbers >= 0")
    inp, out, read, write = numbers
    return Price(input=inp, output=out, cache_read=inp if read is None else read,
                 cache_write=inp if write is None else write)


def run_prices(settings_prices: Mapping[str, Mapping[str, float]] | None = None, table_file: Path | None = None,
               flag: str | None = None) -> dict[str, Price]:
    """Every price a run knows beyond the shipped table, by model id: the user's table,
    then the run TOML's `prices`, then `--price` (as RUN_MODEL: whatever model runs)."""
    out: dict[str, Price] = {}
    if table_file is not None:
        out.update({m: f.price for m, f in load_user_table(table_file).items() if f.price is not None})
    for model_id, row in (settings_prices or {}).items():
        try:
            out[str(model_id)] = price_of(row)
        except (KeyError, TypeError, ValueError) as exc:
            raise PriceError(f"prices.{model_id}: {exc}") from None
    if flag:
        out[RUN_MODEL] = parse_price_flag(flag)
    return out


def model_id_of(spec: str) -> str:
    """The model id a spec names (for a price before any reply): anthropic:<id>,
    openai:<id>@<url>; otherwise the spec itself."""
    prefix, _, rest = spec.partition(":")
    if prefix == "anthropic" and rest:
        return rest
    if prefix == "openai" and rest:
        return rest.split("@", 1)[0]
    return spec


def price_of_model(spec: str, overrides: Mapping[str, Price], table: Mapping[str, ModelFacts] | None = None
                   ) -> Price | None:
    """The price of the model a spec names, None when unknown."""
    return price_for(model_id_of(spec), overrides, load_table() if table is None else table)


def lookup(model_id: str, table: Mapping[str, ModelFacts]) -> ModelFacts | None:
    """The entry for `model_id`, or for its longest listed prefix (dated ids)."""
    if model_id in table:
        return table[model_id]
    best = max((k for k in table if model_id.startswith(k + "-")), key=len, default=None)
    return table[best] if best is not None else None


def price_for(
    model_id: str, overrides: Mapping[str, Price], table: Mapping[str, ModelFacts]
) -> Price | None:
    """Settings override the shipped table, by exact id or by prefix likewise; the
    `--price` flag's entry (RUN_MODEL) overrides every other."""
    if RUN_MODEL in overrides:
        return overrides[RUN_MODEL]
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
