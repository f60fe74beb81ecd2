"""Command-line entry point: a thin dispatcher, one module per sub-command."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Sequence

from harness.text.terminal import safe_streams, terminal_safe  # (terminal_safe: the commands import it from here)

# Sub-command name -> module in harness.commands exposing `register(subparsers)`;
# `register` adds the parser and sets `func(args) -> int` as its default.
COMMANDS: dict[str, str] = {
    "run": "run",
    "study": "study",
    "report": "report",
    "compare": "compare",
    "export": "export",
    "memory": "memory",
    "tasks": "tasks",
    "model": "model",
    "sandbox": "sandbox",
    "view": "view",
}


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad flag is one line on stderr (what, and where to look), exit 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(2, f"error: {message} (see `{self.prog} --help`)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m harness",
        description="Benchmark harness for Reflexion-style self-correcting code agents.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS.values():
        importlib.import_module(f"harness.commands.{module}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    with safe_streams():  # whatever a command prints is shown, never obeyed, by the terminal
        return _main(argv)


def _main(argv: Sequence[str] | None) -> int:
    from harness.models.base import ModelConfigError
    from harness.registry import RegistryError
    from harness.strategies.registry import StrategyError
    from harness.tasks.base import TaskError

    try:
        parser = build_parser()  # lists every registry's members: loads every plug-in
    except (StrategyError, RegistryError, TaskError, ModelConfigError) as exc:  # a broken plug-in: one line
        print(f"error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except UsageError as exc:  # may quote data (a task file's text, a dataset's error)
        print(f"error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `python -m harness tasks list humaneval | head`: the reader left; exit quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
