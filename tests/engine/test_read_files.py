"""skipbo_env.files.read_file_bytes: a path, a regular file, a size cap, one FileRefused each."""

import os

import pytest

from skipbo_env.files import FileRefused, read_file_bytes, read_file_text


@pytest.mark.parametrize("path", [0, 1, 2, True, None, 3.5])
def test_a_file_descriptor_or_other_non_path_is_refused_before_anything_is_opened(path):
    with pytest.raises(FileRefused, match="must be a path"):
        read_file_bytes(path, max_bytes=10, what="weights file")


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FileRefused, match="not a regular file"):
        read_file_bytes(fifo, max_bytes=10)


def test_devices_and_folders_are_refused(tmp_path):
    with pytest.raises(FileRefused, match="not a regular file"):
        read_file_bytes("/dev/zero", max_bytes=10)
    with pytest.raises(FileRefused, match="is a directory"):
        read_file_bytes(tmp_path, max_bytes=10)


def test_a_file_over_the_cap_is_refused_and_one_within_it_is_read(tmp_path):
    path = tmp_path / "data.json"
    path.write_text("x" * 100)
    with pytest.raises(FileRefused, match="100 bytes, more than the 99"):
        read_file_bytes(path, max_bytes=99)
    assert read_file_text(path, max_bytes=100) == "x" * 100


def test_a_missing_file_and_bad_text_name_the_file(tmp_path):
    with pytest.raises(FileRefused, match="nothing-here.*cannot be read"):
        read_file_bytes(tmp_path / "nothing-here", max_bytes=10)
    path = tmp_path / "binary"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(FileRefused, match="not UTF-8"):
        read_file_text(path, max_bytes=10)
