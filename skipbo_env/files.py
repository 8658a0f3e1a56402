"""Files the project reads and writes: files read only when they are regular files of bounded size, atomic
writes, and output paths checked before long work starts.

Every file the project writes (game records, model files, checkpoints, reports) goes through
:func:`write_bytes_atomically`, so a reader never sees half a file and a crash never leaves
one. Every folder a command will write into is checked first (:func:`check_creatable`), so a
finished tournament or training run is never lost to a bad path at the end.

Every option or request that names a file to read (weights, saved positions, replays, models,
training state) goes through :func:`read_file_bytes` or :func:`read_file_text`: a path (never a
file descriptor), a regular file (never a FIFO or a device, which could block for ever or never
end), at most a stated number of bytes; each refusal is one :class:`FileRefused` (a
``ValueError``) whose message names the file and the problem.
"""

from __future__ import annotations

import json
import os
import stat
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


def json_text(data, *, indent: int | None = None, sort_keys: bool = False, compact: bool = False) -> str:
    """``data`` as standard JSON (RFC 8259), the one way the project turns data into a JSON file: NaN and the
    infinities are refused (``ValueError`` naming the first such value's place), since JSON has neither and strict
    readers refuse a file holding one; a figure that is undefined (the interval of a single value) is ``None``,
    written ``null``."""
    place = _non_finite_place(data, "")
    if place is not None:
        raise ValueError(f"not standard JSON: {place or 'the value'} is NaN or infinite (write None for an undefined figure)")
    return json.dumps(data, indent=indent, sort_keys=sort_keys, allow_nan=False,
                      separators=(",", ":") if compact else None)


def _non_finite_place(value, place: str) -> str | None:
    """Where in ``value`` (``a.b[2]``) the first NaN or infinity sits, else ``None``."""
    if isinstance(value, float):
        return place if value != value or value in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        items = ((f"{place}.{key}" if place else str(key), item) for key, item in value.items())
    elif isinstance(value, (list, tuple)):
        items = ((f"{place}[{index}]", item) for index, item in enumerate(value))
    else:
        return None
    return next((found for found in (_non_finite_place(item, where) for where, item in items) if found is not None),
                None)


def write_json_atomically(path: str | Path, data) -> None:
    write_text_atomically(path, json_text(data, indent=2, sort_keys=True) + "\n")


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


class FileRefused(ValueError):
    """A named file that is not a readable regular file within its size limit (the message says why)."""


def checked_path(path, what: str = "file") -> str:
    """``path`` as a string path; an integer (which ``open`` would take as a file descriptor), ``None`` or
    another type is refused."""
    if isinstance(path, bool) or isinstance(path, int) or not isinstance(path, (str, os.PathLike)):
        raise FileRefused(f"{what} must be a path, not {type(path).__name__} {path!r}")
    path = os.fspath(path)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path or "\x00" in path:
        raise FileRefused(f"{what} {path!r} is not a valid path")
    return path


def read_file_bytes(path, *, max_bytes: int, what: str = "file") -> bytes:
    """The contents of the regular file ``path``, refused (``FileRefused``) when it is missing, not a regular
    file, unreadable, or larger than ``max_bytes``. The type is checked before opening and again on the open
    file (opened without blocking), so a FIFO swapped in between cannot block the read."""
    path = checked_path(path, what)
    try:
        info = os.stat(path)
    except OSError as error:
        raise FileRefused(f"{what} {path!r} cannot be read: {error.strerror or error}") from None
    _check_regular(info, path, what, max_bytes)
    try:
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as error:
        raise FileRefused(f"{what} {path!r} cannot be read: {error.strerror or error}") from None
    with os.fdopen(descriptor, "rb") as file:
        _check_regular(os.fstat(file.fileno()), path, what, max_bytes)
        try:
            data = file.read(max_bytes + 1)
        except OSError as error:
            raise FileRefused(f"{what} {path!r} cannot be read: {error.strerror or error}") from None
    if len(data) > max_bytes:
        raise FileRefused(f"{what} {path!r} is larger than the {max_bytes:,} bytes it may be")
    return data


def read_file_text(path, *, max_bytes: int, what: str = "file") -> str:
    """:func:`read_file_bytes` decoded as UTF-8 (``FileRefused`` when it is not)."""
    data = read_file_bytes(path, max_bytes=max_bytes, what=what)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FileRefused(f"{what} {os.fspath(path)!r} is not UTF-8 text") from None


def _check_regular(info: os.stat_result, path: str, what: str, max_bytes: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise FileRefused(f"{what} {path!r} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        raise FileRefused(f"{what} {path!r} is not a regular file (a FIFO, socket or device is refused)")
    if info.st_size > max_bytes:
        raise FileRefused(f"{what} {path!r} is {info.st_size:,} bytes, more than the {max_bytes:,} it may be")
