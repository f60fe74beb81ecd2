"""Literal values and test lines of other languages, read as data (never run): the
argument lists and expected values of asserts like `assert_eq!(add(1, 2), 3);`,
`assert(add(1, 2) == 3);`, `assert.deepStrictEqual(add(1, 2), 3);` or MultiPL-E's Go
table rows `{ actual: candidate(1, 2), expected: 3 },`, turned into JSON values (the
canonical form of sandbox/worker/values.py) for the sandbox's driver and its worker.

One reader serves every language: MultiPL-E's translators and models write literals from
one small family (numbers with suffixes and casts, strings and characters, vectors,
arrays, tuples, options, maps and sets in each language's spelling). What it cannot read
is not a test: LiteralError, and the caller drops it (an unparseable test) or reports it.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>"(?:[^"\\]|\\.)*"|`[^`]*`)
  | (?P<char>'(?:[^'\\]|\\.)*')
  | (?P<num>(?:0[xX][0-9a-fA-F_]+|(?:\d[\d_]*\.?[\d_]*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?))(?:[a-zA-Z][a-zA-Z0-9]*)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)*!?)
  | (?P<op>===|!==|==|!=|::|=>|->|&&|\|\||[-+*/%&!,:;.()\[\]{}<>=|?])
""", re.VERBOSE)
_NULLS = {"None", "nil", "null", "undefined", "std::nullopt", "nullopt", "nullptr", "NULL"}
_WRAPPERS = {"Some", "Box::new", "String::from", "std::string", "string", "Ok", "std::make_optional", "String",
             "Rc::new", "Arc::new", "Number", "BigInt", "std::optional", "optional"}
_TUPLES = {"std::make_tuple", "make_tuple", "std::make_pair", "make_pair", "std::tuple", "tuple", "std::pair", "pair"}
_LISTS = {"vec!", "std::vector", "vector", "std::deque", "std::list", "std::set", "std::unordered_set", "HashSet::from",
          "BTreeSet::from", "VecDeque::from", "Vec::from", "new Set", "Set", "Array", "Array.of", "std::array"}
_MAPS = {"HashMap::from", "BTreeMap::from", "std::map", "std::unordered_map", "map", "unordered_map", "new Map", "Map"}
_EMPTY = {"String::new": "", "Vec::new": [], "HashMap::new": {}, "BTreeMap::new": {}, "HashSet::new": [], "VecDeque::new": []}
_SKIPPED_METHODS = {"to_string", "to_owned", "into", "to_vec", "clone", "iter", "collect", "into_iter", "cloned",
                    "as_str", "as_slice", "unwrap", "to_lowercase", "chars", "copied"}


class LiteralError(ValueError):
    """Text that is not a literal this reader knows."""


@dataclass
class _Tokens:
    items: list[tuple[str, str]]
    at: int = 0

    def peek(self, ahead: int = 0) -> tuple[str, str]:
        index = self.at + ahead
        return self.items[index] if index < len(self.items) else ("end", "")

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.at += 1
        return token

    def expect(self, text: str) -> None:
        kind, value = self.take()
        if value != text:
            raise LiteralError(f"expected {text!r}, found {value or 'the end'!r}")


def tokens(text: str) -> _Tokens:
    items, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise LiteralError(f"unexpected character {text[position]!r}")
        position = match.end()
        kind = match.lastgroup
        if kind != "ws":
            items.append((kind, match.group()))
    return _Tokens(items)


def _number(text: str):
    body = text.replace("_", "")
    if body.lower().startswith("0x"):
        return int(re.match(r"0[xX][0-9a-fA-F]+", body).group(), 16)
    match = re.match(r"(\d*\.?\d*(?:[eE][+-]?\d+)?)([a-zA-Z]\w*)?$", body)
    if match is None or not match.group(1):
        raise LiteralError(f"not a number: {text}")
    digits, suffix = match.group(1), (match.group(2) or "").lower()
    if any(ch in digits for ch in ".eE") or suffix in ("f", "f32", "f64", "d"):
        return float(digits)
    return int(digits)


def _string(text: str) -> str:
    if text.startswith("`"):
        return text[1:-1]
    body = text[1:-1]
    if text.startswith("'"):
        body = body.replace('\\"', '"').replace('"', '\\"').replace("\\'", "'")
    try:
        return json.loads('"' + body.replace("\\'", "'").replace("\\0", "\\u0000") + '"', strict=False)
    except ValueError:
        raise LiteralError(f"cannot read the string {text}") from None


def _pairs_to_map(items: list) -> dict:
    out = {}
    for item in items:
        if not (isinstance(item, list) and len(item) == 2):
            raise LiteralError("a map's items must be pairs")
        key, value = item
        out[key if isinstance(key, str) else json.dumps(key)] = value
    return out


def _skip_type(t: _Tokens) -> None:
    """A type in angle brackets (`<long>`, `<std::string, long>`), if one follows."""
    if t.peek()[1] != "<":
        return
    depth = 0
    while True:
        kind, value = t.take()
        if kind == "end":
            raise LiteralError("unclosed type")
        depth += value == "<"
        depth -= value == ">"
        if value == ">>":
            depth -= 2
        if depth <= 0:
            return


def _sequence(t: _Tokens, close: str) -> list:
    items = []
    if t.peek()[1] == close:
        t.take()
        return items
    while True:
        items.append(value(t))
        kind, text = t.take()
        if text == close:
            return items
        if text != ",":
            raise LiteralError(f"expected ',' or {close!r}, found {text or 'the end'!r}")
        if t.peek()[1] == close:  # a trailing comma
            t.take()
            return items


def _object(t: _Tokens) -> dict:
    """{k: v, ...} (JavaScript, Go maps); the opening brace taken."""
    out = {}
    if t.peek()[1] == "}":
        t.take()
        return out
    while True:
        kind, key = t.peek()
        if kind == "name" and t.peek(1)[1] == ":":
            t.take()
            parsed_key = key
        else:
            parsed_key = value(t)
        t.expect(":")
        item = value(t)
        out[parsed_key if isinstance(parsed_key, str) else json.dumps(parsed_key)] = item
        kind, text = t.take()
        if text == "}":
            return out
        if text != ",":
            raise LiteralError("expected ',' or '}' in a map")
        if t.peek()[1] == "}":
            t.take()
            return out


def _braces(t: _Tokens):
    """{...}: a C++ initializer list, a Go element list, or a JS object."""
    kind, text = t.peek()
    if text == "}":
        t.take()
        return []
    if (kind == "name" and t.peek(1)[1] == ":") or (kind == "str" and t.peek(1)[1] == ":"):
        return _object(t)
    return _sequence(t, "}")


def _suffixes(t: _Tokens, result):
    while True:
        kind, text = t.peek()
        if text == "." and t.peek(1)[0] == "name" and t.peek(1)[1] in _SKIPPED_METHODS:
            t.take(); t.take()
            if t.peek()[1] == "::":
                t.take(); _skip_type(t)
            if t.peek()[1] == "(":
                t.take(); t.expect(")")
            continue
        if kind == "name" and "." in text and text.split(".", 1)[0] == "" :
            continue
        if kind == "name" and text.startswith(".") is False and text in ("as",):
            t.take(); t.take()  # `x as f64`
            continue
        return result


def value(t: _Tokens):
    kind, text = t.take()
    if text in ("&", "*"):
        if t.peek()[1] == "mut":
            t.take()
        return value(t)
    if text == "-":
        inner = value(t)
        if isinstance(inner, bool) or not isinstance(inner, (int, float)):
            raise LiteralError("a minus before something that is not a number")
        return -inner
    if text == "+":
        return value(t)
    if kind == "num":
        return _suffixes(t, _number(text))
    if kind == "str":
        return _suffixes(t, _string(text))
    if kind == "char":
        return _suffixes(t, _string(text))
    if text == "(":
        # A C-style cast `(long)3`, `(float)1.5`, `(std::string)"a"`: a type, then a value.
        if t.peek()[0] == "name" and t.peek(1)[1] in (")", "<") and t.peek()[1] not in {"true", "false"} | _NULLS:
            save = t.at
            t.take()
            _skip_type(t)
            if t.peek()[1] == ")" and t.peek(1)[0] in ("num", "str", "char", "name", "op") and t.peek(1)[1] not in (",", ")", "]", "}", ";", "==", "===", ""):
                t.take()
                return value(t)
            t.at = save
        items = _sequence(t, ")")
        return _suffixes(t, items[0] if len(items) == 1 else items)
    if text == "[":
        if t.peek()[1] == "]" and t.peek(1)[0] == "name":  # Go: []int{...}
            t.take()
            while t.peek()[1] != "{":
                if t.peek()[0] == "end":
                    raise LiteralError("a Go slice type without its elements")
                t.take()
            t.take()
            return _suffixes(t, _braces(t))
        return _suffixes(t, _sequence(t, "]"))
    if text == "{":
        return _suffixes(t, _braces(t))
    if kind == "name":
        if text in ("true", "True"):
            return True
        if text in ("false", "False"):
            return False
        if text in _NULLS:
            return None
        if text == "new" and t.peek()[0] == "name":
            text = "new " + t.take()[1]
        if text in _EMPTY and t.peek()[1] == "(":
            t.take(); t.expect(")")
            return _suffixes(t, _EMPTY[text] if not isinstance(_EMPTY[text], (list, dict)) else type(_EMPTY[text])())
        if text == "map" and t.peek()[1] == "[":  # Go: map[string]int{...}
            while t.peek()[1] != "{":
                if t.peek()[0] == "end":
                    raise LiteralError("a Go map type without its elements")
                t.take()
            t.take()
            found = _braces(t)
            return _suffixes(t, found if isinstance(found, dict) else _pairs_to_map(found))
        if t.peek()[1] == "::" and t.peek(1)[1] == "<":  # vec::<i32>, Vec::<_>::new
            t.take()
        _skip_type(t)
        if t.peek()[1] == "::":  # `Vec::<i32>::new` after its type
            t.take()
            text = text + "::" + t.take()[1]
        opener = t.peek()[1]
        if opener in ("(", "[", "{") and (text in _WRAPPERS | _TUPLES | _LISTS | _MAPS or text.endswith("!")):
            t.take()
            close = {"(": ")", "[": "]", "{": "}"}[opener]
            items = _sequence(t, close) if opener != "{" else _braces(t)
            if text in _WRAPPERS:
                if len(items) != 1:
                    raise LiteralError(f"{text} takes one value")
                return _suffixes(t, items[0])
            if text in _TUPLES:
                return _suffixes(t, list(items))
            if len(items) == 1 and isinstance(items[0], list) and opener == "(":  # vector<T>({1, 2}), HashMap::from([...])
                items = items[0]
            if text in _MAPS:
                return _suffixes(t, items if isinstance(items, dict) else _pairs_to_map(items))
            return _suffixes(t, items)
        if text in _EMPTY:  # Vec::<i32>::new(), after its type
            if t.peek()[1] == "(":
                t.take(); t.expect(")")
            return _suffixes(t, type(_EMPTY[text])() if isinstance(_EMPTY[text], (list, dict)) else _EMPTY[text])
        raise LiteralError(f"{text} is not a literal")
    raise LiteralError(f"unexpected {text or 'end'!r}")


def parse_value(text: str):
    t = tokens(text)
    found = value(t)
    if t.peek()[0] != "end":
        raise LiteralError(f"more after the value: {t.peek()[1]!r}")
    return found


@dataclass(frozen=True)
class ParsedCall:
    args: list
    expected: object
    label: str


def _balanced(t: _Tokens) -> int:
    """Skip to the matching close of the bracket just taken; the index after it."""
    depth = 1
    while depth:
        kind, text = t.take()
        if kind == "end":
            raise LiteralError("unbalanced brackets")
        depth += text in ("(", "[", "{")
        depth -= text in (")", "]", "}")
    return t.at


def parse_assert(line: str, entry_point: str, aliases: tuple[str, ...] = ("candidate",)) -> ParsedCall:
    """The call and expected value of one test line; LiteralError if it is not one."""
    t = tokens(line)
    names = {entry_point, *aliases}
    start = next((i for i, (kind, text) in enumerate(t.items)
                  if kind == "name" and text in names and i + 1 < len(t.items) and t.items[i + 1][1] == "("), None)
    if start is None:
        raise LiteralError(f"no call of {entry_point}")
    negated = start > 0 and t.items[start - 1][1] == "!"
    t.at = start + 2
    args_start = t.at
    end = _balanced(t)
    inner = _Tokens(t.items[args_start:end - 1])
    args = _sequence(_Tokens(inner.items + [("op", ")")]), ")") if inner.items else []
    t.at = end
    kind, text = t.peek()
    if text in ("==", "===", ","):
        t.take()
        if t.peek()[0] == "name" and t.peek()[1] == "expected" and t.peek(1)[1] == ":":  # Go's table rows
            t.take(); t.take()
        expected = value(t)
    elif text in (")", ";", "", "}") or text == "{":
        expected = not negated
    else:
        raise LiteralError(f"cannot read what the call is compared with ({text!r})")
    return ParsedCall(args, expected, line.strip())
