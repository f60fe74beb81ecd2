"""Speculative decoding in the local engine, with the real SmolLM2-135M GGUF.

The claim under test: at one slot, an answer is the model's own answer whether or not a
drafter runs (greedy and seeded sampling alike), byte for byte, while the drafter does
propose tokens that the model accepts. Skipped like tests/models/test_local.py when the
engine or the file is missing (a failure under HARNESS_REQUIRE_MODEL=1).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.models import Message, ModelConfigError, ModelSettings
from harness.models.local_backend import LocalModel
from harness.models.speculative import Parsed, parse
from tests.models.test_local import TEST_MODEL, gguf  # noqa: F401 - the fixture

pytestmark = pytest.mark.model

_MODULE = (Path(__file__).resolve().parents[2] / "harness" / "models" / "speculative.py").read_text()[:1800]

# (messages, max_tokens, temperature, seed): a rewrite that shows code back (what n-gram
# drafting predicts), questions whose answers share little with their prompt, an answer
# cut by max_tokens, a stop sequence, and a seeded sample at temperature 0.8.
PROMPTS = [
    ([Message("user", f"Here is a module:\n```python\n{_MODULE}\n```\nRepeat it exactly, in one code block.")],
     160, 0.0, 0, None),
    ([Message("user", "Write a Python function that returns the n-th Fibonacci number.")], 96, 0.0, 0, None),
    ([Message("user", "List the planets of the solar system, one a line, then list them again reversed.")],
     96, 0.0, 0, None),
    ([Message("user", "def add(a, b):\n    return a + b\n\nWrite three asserts that test add.")], 9, 0.0, 0, None),
    ([Message("user", "Count from 1 to 40, separated by commas.")], 120, 0.0, 0, ["25"]),
    ([Message("user", "Write a short story about a robot who learns to paint.")], 64, 0.8, 3, None),
]


def _answers(model: LocalModel) -> list[tuple[str, str, int]]:
    out = []
    for messages, max_tokens, temperature, seed, stop in PROMPTS:
        c = model.complete(messages, max_tokens=max_tokens, temperature=temperature, seed=seed, stop=stop)
        out.append((c.text, c.stop_reason, c.usage.output_tokens, c.draft_tokens, c.draft_accepted))
    return out


@pytest.fixture(scope="module")
def plain_answers(gguf: Path):  # noqa: F811
    model = LocalModel.open(TEST_MODEL, ModelSettings(n_ctx=1024, speculative="off"))
    try:
        assert model.describe()["speculative"] == {"setting": "off", "mode": "off"}
        return _answers(model)
    finally:
        model.close()


@pytest.mark.parametrize("setting", ["ngram-mod", "ngram-simple", "draft"])
def test_one_slot_answers_are_byte_identical_with_and_without_a_drafter(plain_answers, gguf: Path, setting):  # noqa: F811
    # The small model drafts for itself (a draft model needs the same vocabulary): a
    # drafter that is always right still goes through the engine's verify-and-accept path.
    draft = f"draft:{gguf}" if setting == "draft" else setting
    model = LocalModel.open(TEST_MODEL, ModelSettings(n_ctx=1024, speculative=draft))
    try:
        # Drafters that learn from what they saw (ngram-mod keeps one table for every
        # call): the answers are asked twice, the second time after all the others.
        first, again = _answers(model), _answers(model)
    finally:
        model.close()
    assert model.speculation.on
    for got in (first, again):
        assert [a[:3] for a in got] == [a[:3] for a in plain_answers]
    assert all(a[3] is None and a[4] is None for a in plain_answers)  # no drafter: nothing recorded
    drafted = [a[3] for a in first + again]
    accepted = [a[4] for a in first + again]
    assert all(isinstance(n, int) and 0 <= k <= n for n, k in zip(drafted, accepted))
    # The drafter did work: the repeated module was drafted and (mostly) accepted.
    assert first[0][4] > 0 and again[0][4] > 0
    assert sum(accepted) > 0


def test_settings_parse_and_bad_ones_name_the_choices():
    assert parse("auto") is None
    assert parse("off") == Parsed()
    assert parse("ngram-mod") == Parsed("ngram-mod")
    assert parse("draft") == Parsed(None, "")
    assert parse("ngram-simple+draft:/x/y.gguf") == Parsed("ngram-simple", "/x/y.gguf")
    for bad in ("ngram", "ngram-mod+ngram-simple", "draft+draft", "draft:", "on", ""):
        with pytest.raises(ValueError, match="speculative"):
            parse(bad)


def test_auto_and_draft_settings_resolve_against_the_catalogue(gguf: Path, tmp_path: Path):  # noqa: F811
    from harness.models.fetch import catalogue
    from harness.models.speculative import DEFAULT_NGRAM, resolve

    known = catalogue()
    small = known[TEST_MODEL]
    # auto: the catalogue's choice for the model, n-gram drafting when it names none
    assert resolve("auto", spec="t", sha256=small.sha256, models_dir=None).mode == (small.speculative or DEFAULT_NGRAM)
    assert resolve("auto", spec="t", sha256="0" * 64, models_dir=None).mode == DEFAULT_NGRAM
    assert resolve("off", spec="t", sha256=small.sha256, models_dir=None).on is False
    # a model with a draft in the catalogue, its draft not fetched (an empty models folder)
    big = next(m for m in known.values() if m.draft)
    empty = tmp_path / "models"
    empty.mkdir()
    fallback = resolve("auto", spec="t", sha256=big.sha256, models_dir=empty)
    if big.speculative and "draft" in big.speculative:
        assert fallback.draft_path is None and "not fetched" in (fallback.note or "")
    with pytest.raises(ModelConfigError, match=f"model fetch {big.draft}"):
        resolve("draft", spec="t", sha256=big.sha256, models_dir=empty)
    with pytest.raises(ModelConfigError, match="names no draft model"):
        resolve("draft", spec="t", sha256=small.sha256, models_dir=None)
    with pytest.raises(ModelConfigError, match="neither a .gguf file nor a model of the catalogue"):
        resolve("draft:nothing-here", spec="t", sha256=small.sha256, models_dir=None)
    named = resolve(f"ngram-mod+draft:{gguf}", spec="t", sha256=small.sha256, models_dir=None)
    assert named.mode == f"ngram-mod+draft:{gguf}" and named.draft_sha256 == small.sha256
    assert named.describe()["draft_model"] == {"name": str(gguf), "file": gguf.name, "file_sha256": small.sha256}
