"""numba's cache of the kernels, as ``skipbo_env.vector.jit`` patches it: several processes may compile into one
cache at once (the test suite's workers, a training run's compile helper)."""

from __future__ import annotations

from numba.core import caching

import skipbo_env.vector.jit  # noqa: F401 (the patch)


def cache_file(tmp_path) -> caching.IndexDataCacheFile:
    return caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", ("stamp", 1))


def test_an_entry_is_written_before_the_index_names_it(tmp_path, monkeypatch):
    file = cache_file(tmp_path)
    original = caching.IndexDataCacheFile._save_index
    seen = []

    def save_index(self, overloads):
        seen.extend((tmp_path / name).is_file() for name in overloads.values())
        original(self, overloads)

    monkeypatch.setattr(caching.IndexDataCacheFile, "_save_index", save_index)
    file.save(("signature", "a"), "code a")
    file.save(("signature", "b"), "code b")
    assert seen == [True, True, True]  # a reader that finds a name in the index finds its file


def test_two_writers_of_one_cache_keep_their_entries_apart(tmp_path):
    first, second = cache_file(tmp_path), cache_file(tmp_path)  # as two processes would open it
    first.save(("signature", "a"), "code a")
    second.save(("signature", "b"), "code b")
    first.save(("signature", "c"), "code c")
    reader = cache_file(tmp_path)
    assert [reader.load(("signature", key)) for key in "abc"] == ["code a", "code b", "code c"]
    assert list(tmp_path.glob("*.lock"))  # the index's lock
