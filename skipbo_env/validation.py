"""Checks for input from outside the engine: a loaded state, a game record, settings.

Every refusal is a ``ValueError`` whose message names the problem and quotes at most a short
excerpt of the input, whatever the input's types. :func:`check_plain_json` comes first, so that
the checks after it meet only JSON values (objects with string keys, lists, strings, numbers,
booleans, null) of bounded depth and size.
"""

from __future__ import annotations

import reprlib

MAX_DEPTH = 16
"""Deepest nesting accepted; a state nests 6 levels (state, seats, seat, discards, pile, card)."""
MAX_INT_BITS = 256
"""Largest integer accepted anywhere (a generator state needs 128 bits)."""
EXCERPT_LENGTH = 60

_repr = reprlib.Repr()
_repr.maxlevel, _repr.maxlist, _repr.maxdict = 2, 4, 3
_repr.maxstring = _repr.maxlong = _repr.maxother = 24


def is_int(value) -> bool:
    """An integer, and not a boolean (``True`` is not 1 here); floats, even ``3.0``, are not integers."""
    return isinstance(value, int) and not isinstance(value, bool)


def excerpt(value) -> str:
    """A short ``repr`` of ``value`` for an error message, safe for huge and deeply nested values."""
    if is_int(value) and value.bit_length() > MAX_INT_BITS:
        return f"<an integer of {value.bit_length()} bits>"
    text = _repr.repr(value)
    return text if len(text) <= EXCERPT_LENGTH else text[:EXCERPT_LENGTH - 3] + "..."


def checked_int(value, name: str, low: int, high: int | None = None) -> int:
    """``value`` if it is an integer from ``low`` to ``high`` (no upper bound when ``None``)."""
    if not is_int(value) or value < low or (high is not None and value > high):
        allowed = f"from {low} to {high}" if high is not None else f">= {low}"
        raise ValueError(f"{name}={excerpt(value)} is not allowed: use an integer {allowed}")
    return value


def check_plain_json(value, what: str) -> None:
    """Refuse anything but plain JSON values nested at most :data:`MAX_DEPTH` deep."""
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if depth > MAX_DEPTH:
            raise ValueError(f"{what} nests deeper than {MAX_DEPTH} levels")
        if isinstance(item, dict):
            for key, child in item.items():
                if not isinstance(key, str):
                    raise ValueError(f"{what} has the key {excerpt(key)}: JSON object keys are strings")
                pending.append((child, depth + 1))
        elif isinstance(item, list):
            pending.extend((child, depth + 1) for child in item)
        elif is_int(item) and item.bit_length() > MAX_INT_BITS:
            raise ValueError(f"{what} holds an integer of {item.bit_length()} bits, larger than any it can use")
        elif item is not None and not isinstance(item, (str, int, float, bool)):
            raise ValueError(f"{what} holds {excerpt(item)}, a {type(item).__name__}, which is not a JSON value")
