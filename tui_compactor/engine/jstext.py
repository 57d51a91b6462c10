"""JavaScript text semantics the reference relies on, reproduced in Python.

The pi reference measures strings with ``String.length`` (UTF-16 code units), renders tool
arguments with ``JSON.stringify`` (compact, non-ASCII kept, JS number formatting, integer-like
keys first) and sorts file lists by UTF-16 code units. Matching it bit for bit needs these.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

__all__ = ["utf16_len", "js_slice", "js_stringify", "js_number", "js_sorted", "js_keys"]

_encode_str = json.encoder.encode_basestring  # type: ignore[attr-defined]
_SURROGATE = re.compile("[\ud800-\udfff]")
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_MAX_SAFE = 2**53


def utf16_len(text: str) -> int:
    """Length of ``text`` in UTF-16 code units (JavaScript ``String.length``)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def js_slice(text: str, end: int) -> str:
    """``text.slice(0, end)`` with ``end`` counted in UTF-16 units.

    A cut through a surrogate pair keeps the lone high surrogate, as JavaScript does.
    """
    if text.isascii():
        return text[:end]
    units = text.encode("utf-16-le", "surrogatepass")[: 2 * end]
    return units.decode("utf-16-le", "surrogatepass")


def js_utf16_key(text: str) -> bytes:
    """A sort key that orders strings by UTF-16 code units (JavaScript's default sort)."""
    return text.encode("utf-16-be", "surrogatepass")


def js_sorted(items: Any) -> list[str]:
    """``[...items].sort()`` for strings: UTF-16 code unit order."""
    values = list(items)
    if all(value.isascii() for value in values):
        return sorted(values)
    return sorted(values, key=js_utf16_key)


def js_number(value: int | float) -> str:
    """Format a number the way JavaScript's ``Number.prototype.toString`` does."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        if -_MAX_SAFE <= value <= _MAX_SAFE:
            return str(value)
        value = float(value)  # JSON.parse gives a double for big integers
    if math.isnan(value) or math.isinf(value):
        return "null"  # what JSON.stringify writes for them
    if value == 0:
        return "0"
    if value.is_integer() and abs(value) <= _MAX_SAFE:
        return str(int(value))
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    # value = 0.digits * 10**point
    point = len(digit_tuple) + int(exponent)
    count = len(digits)
    if count <= point <= 21:
        text = digits + "0" * (point - count)
    elif 0 < point <= 21:
        text = digits[:point] + "." + digits[point:]
    elif -6 < point <= 0:
        text = "0." + "0" * (-point) + digits
    else:
        mantissa = digits[0] + ("." + digits[1:] if count > 1 else "")
        power = point - 1
        text = f"{mantissa}e{'+' if power >= 0 else '-'}{abs(power)}"
    return sign + text


def js_keys(obj: dict[str, Any]) -> list[str]:
    """Property order of a parsed JSON object: array-index keys ascending, then insertion."""
    keys = list(obj)
    index_keys = [key for key in keys if _ARRAY_INDEX.fullmatch(key) and int(key) < 2**32 - 1]
    if not index_keys:
        return keys
    index_set = set(index_keys)
    return sorted(index_keys, key=int) + [key for key in keys if key not in index_set]


def _string(text: str) -> str:
    encoded = _encode_str(text)
    if _SURROGATE.search(encoded):
        # Python keeps lone surrogates raw; well-formed JSON.stringify escapes them.
        encoded = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", encoded)
    return encoded


def js_stringify(value: Any) -> str | None:
    """``JSON.stringify(value)`` (compact). Returns None where JavaScript returns ``undefined``.

    Nesting deeper than Python's recursion allows (a damaged or hostile file) is written by an
    iterative walker with the same rules, so no value can crash a caller."""
    try:
        return _stringify(value)
    except RecursionError:
        return _stringify_deep(value)


def _stringify_deep(value: Any) -> str | None:
    """``_stringify`` without recursion: an explicit stack of pending pieces."""
    if not isinstance(value, (list, dict)):
        return _stringify(value)
    out: list[str] = []
    # Each stack item is either a value to write or a literal piece of text (a ``str`` marker).
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        literal, item = stack.pop()
        if literal:
            out.append(item)
        elif isinstance(item, list):
            pieces: list[tuple[bool, Any]] = [(True, "[")]
            for position, element in enumerate(item):
                if position:
                    pieces.append((True, ","))
                pieces.append((False, element) if _defined(element) else (True, "null"))
            pieces.append((True, "]"))
            stack.extend(reversed(pieces))
        elif isinstance(item, dict):
            pieces = [(True, "{")]
            first = True
            for key in js_keys(item):
                if not _defined(item[key]):
                    continue
                pieces.append((True, ("" if first else ",") + _string(str(key)) + ":"))
                pieces.append((False, item[key]))
                first = False
            pieces.append((True, "}"))
            stack.extend(reversed(pieces))
        else:
            out.append(_stringify(item) or "null")
    return "".join(out)


def _defined(value: Any) -> bool:
    """Whether ``JSON.stringify`` writes the value (not ``undefined``)."""
    return value is None or isinstance(value, (str, bool, int, float, list, dict))


def _stringify(value: Any) -> str | None:
    if value is None:
        return "null"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, list):
        return "[" + ",".join(_stringify(item) or "null" for item in value) + "]"
    if isinstance(value, dict):
        parts = []
        for key in js_keys(value):
            rendered = _stringify(value[key])
            if rendered is not None:
                parts.append(_string(str(key)) + ":" + rendered)
        return "{" + ",".join(parts) + "}"
    return None
