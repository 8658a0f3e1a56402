"""Where a page lists the training backends, it lists every one of ``training.backends.BACKENDS``: a paragraph
that names two or more backend packages (`training/NAME/`) or backends in a list (the backends (`sb3`, ...))
names them all. (The generated lists, `skipbo train --help`, `--list-configs`, `--list-keys` and the
leaderboard's table, read the table itself: tests/training/test_backend_registry.py.)"""

from __future__ import annotations

import re
from pathlib import Path

from training.backends import BACKENDS

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def incomplete_lists(text: str, names=tuple(BACKENDS)) -> list[str]:
    """The paragraphs of ``text`` that list some backends but not all of ``names``."""
    problems = []
    for paragraph in re.split(r"\n\s*\n", text):
        packages = {name for name in names if f"`training/{name}/`" in paragraph}
        listed = set()
        for inner in re.findall(r"backends \(([^)]*)\)", paragraph):
            listed |= {name for name in names if f"`{name}`" in inner}
        for found in (packages, listed):
            if len(found) >= 2 and found != set(names):
                problems.append(f"lists {sorted(found)}, not {sorted(set(names) - found)}: {paragraph[:80]!r}")
    return problems


def test_every_list_of_the_backends_names_them_all():
    problems = {str(page.relative_to(ROOT)): incomplete_lists(page.read_text()) for page in PAGES}
    assert {page: found for page, found in problems.items() if found} == {}


def test_an_incomplete_list_is_caught():
    assert incomplete_lists("the backends (`sb3`, `snes`), the config", ("sb3", "snes", "td"))
    assert incomplete_lists("`training/sb3/` and `training/snes/`", ("sb3", "snes", "td"))
    assert not incomplete_lists("the backends (`sb3`, `snes`, `td`)", ("sb3", "snes", "td"))
