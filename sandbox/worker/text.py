"""Short, one-line text for failure details.
"""
from __future__ import annotations

import reprlib
import traceback

from .protocol import DETAIL_MAX


def one_line(text: str, limit: int = DETAIL_MAX) -> str:
    text = " ".join(part.strip() for part in str(text).strip().splitlines())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short_repr(value: object) -> str:
    shortener = reprlib.Repr()
    shortener.maxstring = shortener.maxother = 160
    shortener.maxlist = shortener.maxtuple = shortener.maxset = shortener.maxdict = 20
    shortener.maxlong = 100
    try:
        return shortener.repr(value)
    except BaseException as exc:  # e.g. an int too long for repr
        return f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"


def exception_line(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError):
        return f"{type(exc).__name__}: {exc}"
    try:
        return traceback.format_exception_only(type(exc), exc)[-1].strip()
    except BaseException:
        return type(exc).__name__
