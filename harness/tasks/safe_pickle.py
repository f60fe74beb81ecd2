"""LiveCodeBench's compressed test cases, decoded without running anything.

The lite release stores `private_test_cases` as base64 of zlib of a pickle of a JSON
string. `pickle.loads` on dataset bytes would run whatever the pickle names (a
`__reduce__` calling os.system); this unpickler resolves no global at all, so it can
build only pickle's own plain values, and we accept the result only if it is a str.
"""
from __future__ import annotations

import base64
import binascii
import io
import pickle
import zlib

MAX_DECOMPRESSED = 1 << 30  # 1 GiB: more than any release holds for one problem


class UnsafePickle(ValueError):
    """The bytes are not a pickled string (or would need code to unpickle)."""


class _StringOnly(pickle.Unpickler):
    def find_class(self, module: str, name: str):  # every global: functions, classes
        raise UnsafePickle(f"the pickle names {module}.{name}; only a pickled string is accepted")

    def persistent_load(self, pid):
        raise UnsafePickle("the pickle uses a persistent id; only a pickled string is accepted")


def unpickle_string(data: bytes) -> str:
    try:
        value = _StringOnly(io.BytesIO(data)).load()
    except UnsafePickle:
        raise
    except Exception as exc:  # a truncated or malformed pickle
        raise UnsafePickle(f"not a readable pickle ({type(exc).__name__}: {exc})") from None
    if type(value) is not str:
        raise UnsafePickle(f"the pickle holds a {type(value).__name__}, not a string")
    return value


def decode_compressed(text: str) -> str:
    """base64 -> zlib -> pickled str -> the str (a JSON text, for the caller to parse)."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError) as exc:
        raise UnsafePickle(f"not base64 ({exc})") from None
    inflater = zlib.decompressobj()
    try:
        data = inflater.decompress(raw, MAX_DECOMPRESSED)
    except zlib.error as exc:
        raise UnsafePickle(f"not zlib data ({exc})") from None
    if inflater.unconsumed_tail:
        raise UnsafePickle(f"decompresses to more than {MAX_DECOMPRESSED} bytes")
    return unpickle_string(data)
