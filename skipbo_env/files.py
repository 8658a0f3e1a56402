"""Files the project writes: atomic writes, and output paths checked before long work starts.

Every file the project writes (game records, model files, checkpoints, reports) goes through
:func:`write_bytes_atomically`, so a reader never sees half a file and a crash never leaves
one. Every folder a command will write into is checked first (:func:`check_creatable`), so a
finished tournament or training run is never lost to a bad path at the end.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path


class OutputPathError(ValueError):
    """A path that cannot be written; the message says why."""


def write_bytes_atomically(path: str | Path, data: bytes) -> None:
    """Write to a temporary file beside ``path``, flush it to disk, then rename: a reader never
    sees half a file. The file gets the usual mode (umask), not mkstemp's 0600."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, 0o666 & ~current_umask())  # mkstemp makes 0600; give the file the usual mode
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    write_bytes_atomically(path, text.encode())


def write_json_atomically(path: str | Path, data) -> None:
    write_text_atomically(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def fsync_directory(path: Path) -> None:
    """Flush a folder's entries (a rename inside it) to disk, where the platform allows it."""
    if sys.platform.startswith("win"):
        return
    handle = os.open(path, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def check_creatable(path: Path) -> None:
    """Refuse (:class:`OutputPathError`) a folder that is a file or cannot be made where it should be."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise OutputPathError(f"{str(path)!r} is a file, not a folder: give a folder")
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputPathError(f"cannot create the folder {str(path)!r}: {str(existing)!r} is a file")
    check_writable(existing, str(path))


def check_writable(folder: Path, text: str) -> None:
    """Refuse a folder this process cannot write into; ``text`` is the path as the user gave it."""
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OutputPathError(f"cannot write {text!r}: the folder {str(folder)!r} is not writable")
