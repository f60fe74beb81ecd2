"""The one registry (harness/registry.py): every extension point's members are found in
their package or through entry points, a name is taken once, and what the CLI offers is
generated from it."""
from __future__ import annotations

import pytest

from harness.cli import build_parser
from harness.kinds.languages import canonical, get_language, language_names
from harness.registry import POINTS, REGISTRY, Member, Point, Registry, RegistryError
from harness.tasks.registry import known_forms


@pytest.fixture(autouse=True)
def _wide_help(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100000")  # argparse wraps long spec forms mid-token otherwise


def _help(command: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    return " ".join(sub.choices[command].format_help().split())


def test_every_point_has_members():
    for point in POINTS:
        assert REGISTRY.names(point.key), point.key


def test_every_registered_task_source_is_in_run_help():
    text = _help("run")
    for form in known_forms():
        assert " ".join(form.split()) in text, form
    assert len(known_forms()) == len(REGISTRY.names("tasks"))


def test_run_help_names_every_model_backend_sandbox_and_strategy():
    text = _help("run")
    for prefix in REGISTRY.names("models"):
        assert f"{prefix}" in text
    for name in REGISTRY.names("sandboxes"):
        assert name in text
    for name in REGISTRY.names("strategies"):
        assert name in text


def test_languages_and_their_other_names_come_from_their_modules():
    assert language_names()[0] == "python" and set(language_names()) == set(REGISTRY.names("languages"))
    for name in language_names():
        for alias in get_language(name).aliases:
            assert canonical(alias) == name
    with pytest.raises(ValueError, match="unknown language 'cobol'"):
        canonical("cobol")


def _point(members):
    return Point("things", "thing", lambda: iter(members), lambda value: isinstance(value, int))


def test_a_name_taken_twice_is_refused_naming_both():
    registry = Registry([_point([Member("one", 1, "module a")])], entry_points=False)
    with pytest.raises(RegistryError, match="thing 'one' is defined twice: by module a and by module b"):
        registry.register("things", "one", 2, origin="module b")
    registry.register("things", "one", 1, origin="module a")  # the same member again is no conflict
    registry.register("things", "two", 2, origin="module b")
    assert registry.names("things") == ("one", "two") and registry.get("things", "two") == 2
    registry.unregister("things", "two")
    with pytest.raises(RegistryError, match="unknown thing 'two'; known: one"):
        registry.get("things", "two")


def test_a_member_given_by_path_is_checked_when_loaded():
    registry = Registry([_point([Member("path", "os.path:join", "here"), Member("gone", "no_such_module_x:y", "here")])],
                        entry_points=False)
    with pytest.raises(RegistryError, match="thing 'path' .* is not a thing"):
        registry.get("things", "path")
    with pytest.raises(RegistryError, match="cannot be imported"):
        registry.get("things", "gone")
