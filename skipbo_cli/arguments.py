"""Checks of ``skipbo`` flag values (argparse ``type=`` functions) and the sizes the commands accept.

Each check refuses a bad value with a message naming the allowed values, so the command stops
with one line before any work starts. Output paths are checked when the flags are read: a
tournament or a game is never lost at the end to a path that cannot be written.
"""

from __future__ import annotations

import argparse
import functools
import math
from pathlib import Path

from skipbo_env.files import check_creatable, check_writable

MAX_GAMES = 1_000_000
"""Games one ``skipbo evaluate`` plays; the schedule of every game is built before the first."""
MAX_SEED = 2**63 - 1
PLOT_SUFFIXES = (".png", ".pdf", ".svg")


def flag_check(check):
    """``check`` as an argparse ``type=``: its ``ValueError`` becomes the flag's one-line error."""

    @functools.wraps(check)
    def checked(text: str):
        try:
            return check(text)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return checked


def bounded_int(low: int, high: int | None):
    """A check for an integer from ``low`` to ``high`` (no upper end when ``None``)."""
    allowed = f"an integer from {low:,} to {high:,}" if high is not None else f"an integer >= {low:,}"

    @flag_check
    def integer(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not an integer: use {allowed}") from None
        if value < low or (high is not None and value > high):
            raise ValueError(f"{text} is not allowed: use {allowed}")
        return value

    return integer


seed = bounded_int(0, MAX_SEED)
"""A seed: an integer from 0 to 2**63 - 1."""
positive_int = bounded_int(1, None)


def bounded_float(accepts, allowed: str):
    """A check for a finite number that ``accepts(value)`` holds for; ``allowed`` says which in its error."""

    @flag_check
    def number(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not accepts(value):
            raise ValueError(f"{text!r} is not allowed: use {allowed}")
        return value

    return number


seconds = bounded_float(lambda value: value >= 0, "a finite number of seconds >= 0")
"""A finite, non-negative number of seconds."""


def output_file(*suffixes: str):
    """A check for a file to write: one of ``suffixes``, not a folder, in a folder that exists and is writable."""

    @flag_check
    def file_name(text: str) -> str:
        path = Path(text)
        if path.suffix.lower() not in suffixes:
            raise ValueError(f"{text!r} does not end in {_either(suffixes)}: use a file name ending in "
                             f"{_either(suffixes)}")
        if path.is_dir():
            raise ValueError(f"{text!r} is a folder: give a file name")
        folder = path.parent
        if not folder.is_dir():
            raise ValueError(f"cannot write {text!r}: the folder {str(folder)!r} does not exist")
        check_writable(folder, text)
        return text

    return file_name


@flag_check
def output_folder(text: str) -> str:
    """A folder to write into: an existing, writable folder or one that can be created."""
    check_creatable(Path(text))
    return text


def _either(suffixes: tuple[str, ...]) -> str:
    return suffixes[0] if len(suffixes) == 1 else ", ".join(suffixes[:-1]) + " or " + suffixes[-1]
