"""What the scripts of ``benchmarks/`` and ``experiments/`` share with ``skipbo``: bad input is one line, exit 2.

A script builds its parser with :class:`ScriptParser` and its flags with the checks below (or those of
:mod:`skipbo_cli.arguments`), so a bad flag value stops it with one line before any work, and ends with
``raise SystemExit(run(main))``: a ``ValueError`` or ``OSError`` raised for what it was given (a table the rules
refuse, a damaged input file, a folder it cannot write) ends it with ``SCRIPT: error: MESSAGE`` and exit 2, as
``skipbo`` ends (``SKIPBO_TRACEBACK=1`` shows the traceback instead).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

from skipbo_cli.arguments import bounded_float, bounded_int
from skipbo_cli.main import USAGE_ERROR, USER_ERRORS, CommandParser, describe_error
from skipbo_env.files import OutputPathError
from skipbo_env.rules import MAX_PLAYERS, MIN_PLAYERS

ScriptParser = CommandParser
"""A script's argument parser: a bad flag is one line (``SCRIPT: error: ...``) and exit 2."""

table_size = bounded_int(MIN_PLAYERS, MAX_PLAYERS)
"""A table size: an integer from 2 to 6."""
MAX_BATCH = 2**18
"""The most games of one batch of the batched engine a script builds (about 5 KB each: some 1.3 GB)."""
MAX_COUNT = 1_000_000
"""The most games, hands, repeats or steps per measurement a script takes (runs of hours at most)."""
MAX_PARALLEL = 256
"""The most threads, worker processes or Ray env runners a script starts."""
batch = bounded_int(1, MAX_BATCH)
count = bounded_int(1, MAX_COUNT)
parallel = bounded_int(1, MAX_PARALLEL)


positive_seconds = bounded_float(lambda value: value > 0, "a finite number of seconds > 0")
"""A finite number of seconds above 0."""


def check_output_file(path: str) -> None:
    """Refuse (``OutputPathError``, one line) a file to write that exists, or whose folder is missing or cannot
    be written (tried by creating and removing a file there, which also holds for root and read-only mounts)."""
    folder = Path(os.path.abspath(path)).parent
    if os.path.exists(path):
        raise OutputPathError(f"{path}: the file exists; give a new one")
    if not folder.is_dir():
        raise OutputPathError(f"{path}: no such folder {str(folder)!r}")
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".write-check-"):
            pass
    except OSError as error:
        raise OutputPathError(f"{path}: cannot write into the folder {str(folder)!r} ({error.strerror})") from None


def run(main, argv: list[str] | None = None) -> int:
    """``main(argv)``'s exit status; a ``ValueError`` or ``OSError`` it raises is one line on stderr and exit 2."""
    try:
        return main(argv) or 0
    except USER_ERRORS as error:
        if os.environ.get("SKIPBO_TRACEBACK"):
            raise
        print(f"{os.path.basename(sys.argv[0])}: error: {describe_error(error)}", file=sys.stderr)
        return USAGE_ERROR
