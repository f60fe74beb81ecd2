"""`python -m harness sandbox build|check`: the Docker image the sandbox runs in."""
from __future__ import annotations

import argparse
import sys

from sandbox.base import SandboxConfig, SandboxUnavailable


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sandbox", help="build or check the Docker sandbox image",
        description="Build or check the Docker image that model-written code runs in.",
    )
    actions = parser.add_subparsers(dest="sandbox_action", metavar="ACTION", required=True)

    build = actions.add_parser(
        "build", help="build the sandbox image (skipped when it is up to date)",
        description="Build the sandbox image from sandbox/image/. Online it starts from "
        "the official python:3.11-slim; offline (no registry answers) from Debian "
        "packages via mmdebstrap and `docker import`.",
    )
    where = build.add_mutually_exclusive_group()
    where.add_argument("--online", dest="mode", action="store_const", const="online",
                       help="start from python:3.11-slim from a registry")
    where.add_argument("--offline", dest="mode", action="store_const", const="offline",
                       help="start from a Debian bookworm made with mmdebstrap")
    build.set_defaults(mode="auto")
    build.add_argument("--force", action="store_true",
                       help="rebuild even when the image is up to date (offline: the base too)")
    build.add_argument("--image", default=SandboxConfig().image, help="image tag (default: %(default)s)")
    build.add_argument("--mirror", default=None, help="Debian mirror for the offline build")
    build.add_argument("--language", action="append", default=None, metavar="LANGUAGE",
                       help="build the image of this language instead of Python's (rust, go, cpp, javascript; "
                            "repeatable; 'all' for every one, Python's included)")
    build.set_defaults(func=_build)

    check = actions.add_parser(
        "check", help="say whether the engine and the image are ready (exit 1 if not)",
    )
    check.add_argument("--image", default=SandboxConfig().image, help="image tag (default: %(default)s)")
    check.add_argument("--language", action="append", default=None, metavar="LANGUAGE",
                       help="check the image of this language (repeatable; 'all' for every one)")
    check.set_defaults(func=_check)


def _languages(given: list[str] | None) -> list[str]:
    from sandbox.toolchains import languages

    if not given:
        return ["python"]
    if "all" in given:
        return list(languages())
    unknown = [name for name in given if name not in languages()]
    if unknown:
        raise ValueError(f"unknown language {unknown[0]!r}; choose from: {', '.join(languages())}, all")
    return list(dict.fromkeys(given))


def _build(args: argparse.Namespace) -> int:
    from sandbox import image

    options = {"mirror": args.mirror} if args.mirror else {}
    try:
        for language in _languages(args.language):
            image.build(args.image, mode=args.mode, force=args.force, language=language, **options)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except (SandboxUnavailable, image.BuildError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


def _check(args: argparse.Namespace) -> int:
    from sandbox import image

    try:
        chosen = _languages(args.language)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ready = True
    for language in chosen:
        status = image.check(args.image, language)
        print(("ready: " if status.ready else "not ready: ") + status.detail)
        ready = ready and status.ready
    return 0 if ready else 1
