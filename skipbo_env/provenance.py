"""What produced a figure: versions, commit, machine and load, in one place.

Every benchmark, tournament report and training run records :func:`versions` (read from the
installed packages' metadata, so nothing heavy is imported) and :func:`machine` (CPU count and
load average), so a figure can be reproduced and judged.
"""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from skipbo_env import __version__

LIBRARIES = ("numpy", "numba", "torch", "gymnasium", "pettingzoo", "stable-baselines3", "sb3-contrib", "openskill",
             "ray", "rlcard")
"""The distributions reported when installed; a missing one is left out."""


def versions() -> dict:
    """``{"skipbo-lab", "python", <library>: version..., "git": short commit or None}``."""
    found = {"skipbo-lab": __version__, "python": platform.python_version()}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    found["git"] = git_commit()
    return found


def machine() -> dict:
    """CPU count and the 1, 5 and 15 minute load averages (a busy machine gives slower figures)."""
    load = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    return {"cpus": os.cpu_count(), "load_average": [round(x, 2) for x in load], "platform": platform.platform()}


def git_commit() -> str | None:
    """The checkout's short commit, or None outside a git checkout."""
    root = Path(__file__).resolve().parents[1]
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                             timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def header(command: str, seed) -> str:
    """The line a benchmark prints first: the command, the seed, the versions and the load."""
    return f"command: {command}\nseed: {seed}\nversions: {versions()}\nmachine: {machine()}"
