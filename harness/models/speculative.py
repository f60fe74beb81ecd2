"""Speculative decoding for the local model: which drafter the embedded engine runs.

A drafter proposes the next tokens cheaply and the model checks them all in one batch,
keeping the longest prefix it agrees with, plus its own next token: each answer is still
the model's own choice, token by token. It is not always the same answer as plain
decoding's: llama.cpp computes a batch of positions with other arithmetic than one
position at a time (measured here: log-probabilities moved by up to ~0.1 on SmolLM2), so
where two tokens are close the choice can flip, and the answer goes on from there
(tests/models/test_speculative.py shows both: what holds and what does not). Hence the
drafter is part of the model's identity (the response cache keys on it).

llama.cpp's drafters, through xllamacpp's
`CommonParams.speculative`:

- n-gram drafting, free (no second model): `ngram-mod` (a hash table of n-grams seen in
  the prompts and answers), `ngram-simple`, `ngram-map-k`, `ngram-map-k4v`: they predict
  text that repeats what came before (code shown back in a retry, a docstring restated);
- a draft model: a smaller model of the same family and vocabulary (`draft` names the
  catalogue's draft for the model, `draft:<name or path.gguf>` any other);
- both, joined by `+` (`ngram-mod+draft`): the engine asks each drafter in turn.

The setting (`--speculative`, `speculative` in a config file) is one of those, `off`, or
`auto` (the default): at one slot, the catalogue's measured best for the model (its
`speculative` in harness/data/local_models.toml; its draft model left out, with a note,
while that model is not fetched), and `ngram-mod` for a GGUF outside the catalogue; at
more slots, off (AUTO_MAX_SLOTS: measured no faster there).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.models.base import ModelConfigError
from harness.models.fetch import LocalModelInfo, catalogue, file_sha256, is_ready, model_path, resolve_models_dir

# The setting's words and the engine's types (xllamacpp.common_speculative_type names).
NGRAM_TYPES = {
    "ngram-mod": "COMMON_SPECULATIVE_TYPE_NGRAM_MOD",
    "ngram-simple": "COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE",
    "ngram-map-k": "COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K",
    "ngram-map-k4v": "COMMON_SPECULATIVE_TYPE_NGRAM_MAP_K4V",
}
DRAFT_TYPE = "COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE"
# `auto` drafts only up to this many slots. A drafter trades compute for memory traffic:
# at one slot decoding waits on memory (each token reads all the weights) and ngram-mod
# made 2.5x the tokens/s; at 4 slots on 2 cores decoding is compute-bound, rejected drafts
# cost compute, and the main job with ngram-mod was measured no faster (bench/RESULTS.md).
AUTO_MAX_SLOTS = 1
# Drafters that keep what they learn across calls (the others start from each request).
SHARED_STATE = frozenset({"ngram-mod"})
# For a GGUF the catalogue does not know: measured best on the default model (bench/RESULTS.md).
DEFAULT_NGRAM = "ngram-mod"
# Tokens a draft model proposes per step: the engine's default (3) leaves most of a long
# accepted run unproposed; llama.cpp's server used 16 (its `--draft-max`).
DRAFT_N_MAX = 16
SETTING_HELP = ("off, auto, an n-gram drafter (" + ", ".join(NGRAM_TYPES) + "), draft (the catalogue's draft "
                "model), draft:<name or path.gguf>, or an n-gram drafter and a draft joined by + (ngram-mod+draft)")


@dataclass(frozen=True)
class Parsed:
    """A setting's parts: an n-gram drafter and/or a draft model ("" = the catalogue's)."""

    ngram: str | None = None
    draft: str | None = None  # None: no draft model; "": the catalogue's draft for the model


def parse(setting: str) -> Parsed | None:
    """The parts of a setting; None for `auto`. ValueError (one line) if it is not one."""
    text = str(setting).strip()
    if text == "auto":
        return None
    if text == "off":
        return Parsed()
    ngram, draft = None, None
    for part in text.split("+"):
        part = part.strip()
        if part in NGRAM_TYPES and ngram is None:
            ngram = part
        elif (part == "draft" or part.startswith("draft:")) and draft is None:
            draft = part.partition(":")[2].strip()
            if part.startswith("draft:") and not draft:
                raise ValueError(f"speculative {setting!r}: draft: needs a model name or a .gguf path")
        else:
            raise ValueError(f"speculative must be {SETTING_HELP}; got {setting!r}")
    return Parsed(ngram, draft)


def check_setting(setting: str) -> bool:
    """Whether the drafter `setting` names drafts from other calls (ngram-mod's table is
    shared by every call and slot, so an answer then depends on what ran before);
    ValueError (one line) if it is not a setting. `auto` counts as not (yet) known: False."""
    parsed = parse(setting)
    return parsed is not None and parsed.ngram in SHARED_STATE


@dataclass(frozen=True)
class Speculation:
    """What the engine runs: an n-gram drafter, a draft model, both, or neither."""

    setting: str  # as asked ("auto", "ngram-mod", ...)
    ngram: str | None = None
    draft_name: str | None = None  # a catalogue name, or the path given
    draft_path: Path | None = None
    draft_sha256: str | None = None
    note: str | None = None  # why `auto` gave less than the catalogue's choice

    @property
    def mode(self) -> str:
        parts = [self.ngram] if self.ngram else []
        if self.draft_name:
            parts.append(f"draft:{self.draft_name}")
        return "+".join(parts) or "off"

    @property
    def on(self) -> bool:
        return bool(self.ngram or self.draft_path)

    @property
    def shares_state(self) -> bool:
        """Its drafts depend on earlier calls (and so, through the arithmetic, can its answers)."""
        return self.ngram in SHARED_STATE

    @property
    def identity(self) -> str:
        """The part of the model's identity (the response cache's key) that the drafter
        adds: it changes answers (tests/models/test_speculative.py), so it is part of what
        decides them; the draft model by its file's sha256, whatever path or name gave it."""
        if not self.on:
            return ""
        parts = [self.ngram] if self.ngram else []
        if self.draft_sha256:
            parts.append(f"draft-sha256-{self.draft_sha256}")
        return ":speculative-" + "+".join(parts)

    def describe(self) -> dict[str, Any]:
        """run.json's record (model_identity.speculative)."""
        out: dict[str, Any] = {"setting": self.setting, "mode": self.mode, "shares_state": self.shares_state}
        if self.draft_path is not None:
            out["draft_model"] = {"name": self.draft_name, "file": self.draft_path.name,
                                  "file_sha256": self.draft_sha256}
        if self.note:
            out["note"] = self.note
        return out

    def apply(self, params: Any, n_threads: int) -> None:
        """Sets `params.speculative` (an xllamacpp.CommonParams) to run this drafter."""
        if not self.on:
            return
        import xllamacpp

        kinds = xllamacpp.common_speculative_type
        types = [getattr(kinds, NGRAM_TYPES[self.ngram])] if self.ngram else []
        if self.draft_path is not None:
            types.append(getattr(kinds, DRAFT_TYPE))
            draft = params.speculative.draft
            draft.mparams.path = str(self.draft_path)
            draft.n_max = DRAFT_N_MAX
            draft.cpuparams.n_threads = n_threads
            draft.cpuparams_batch.n_threads = n_threads
        params.speculative.types = types


def resolve(setting: str, *, spec: str, sha256: str, models_dir: Path | None, slots: int = 1) -> Speculation:
    """The drafter `setting` asks for, for the model whose file has this sha256, opened
    with `slots` slots; a ModelConfigError says what is wrong (an unknown setting, a draft
    model not fetched)."""
    try:
        parsed = parse(setting)
    except ValueError as exc:
        raise ModelConfigError(f"{spec}: {exc}") from None
    known = catalogue()
    info = next((m for m in known.values() if m.sha256 == sha256), None)
    note = None
    if parsed is None and slots > AUTO_MAX_SLOTS:
        return Speculation(setting, note=f"auto at {slots} slots: off, measured no faster there (bench/RESULTS.md)")
    if parsed is None:  # auto: the catalogue's measured choice, else n-gram drafting
        parsed = parse(info.speculative) if info is not None and info.speculative else Parsed(DEFAULT_NGRAM)
        if parsed.draft is not None:
            draft = _catalogue_draft(parsed.draft, info, known)
            if draft is not None and not is_ready(draft, resolve_models_dir(models_dir)):
                note = (f"draft model {draft.name} not fetched (`python -m harness model fetch {draft.name}`): "
                        f"drafting without it")
                parsed = Parsed(parsed.ngram)
    if parsed.draft is None:
        return Speculation(setting, parsed.ngram, note=note)
    name, path, draft_sha = _draft_file(parsed.draft, info, known, spec=spec, models_dir=models_dir)
    return Speculation(setting, parsed.ngram, name, path, draft_sha, note)


def _catalogue_draft(named: str, info: LocalModelInfo | None,
                     known: dict[str, LocalModelInfo]) -> LocalModelInfo | None:
    name = named or (info.draft if info is not None else None)
    return known.get(name) if name else None


def _draft_file(named: str, info: LocalModelInfo | None, known: dict[str, LocalModelInfo], *, spec: str,
                models_dir: Path | None) -> tuple[str, Path, str]:
    """(name, path, sha256) of the draft model `named` ("" = the catalogue's for this model)."""
    if not named:
        if info is None or not info.draft:
            has = sorted(n for n, m in known.items() if m.draft)
            raise ModelConfigError(
                f"{spec}: the catalogue names no draft model for this model (it has one for: "
                f"{', '.join(has) or 'none'}); give one with draft:<name or path.gguf>, or use an n-gram drafter")
        named = info.draft
    if named in known and not Path(named).expanduser().is_file():
        draft = known[named]
        folder = resolve_models_dir(models_dir)
        if not is_ready(draft, folder):
            raise ModelConfigError(
                f"{spec}: the draft model {named} is not in {folder}; run `python -m harness model fetch {named}`")
        return named, model_path(draft, folder), draft.sha256
    path = Path(named).expanduser()
    if not path.is_file() or path.suffix.lower() != ".gguf":
        raise ModelConfigError(
            f"{spec}: draft model {named!r} is neither a .gguf file nor a model of the catalogue "
            f"({', '.join(sorted(known))})")
    return str(path), path, file_sha256(path)
