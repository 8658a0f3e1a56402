"""Names of policy specs: short names (``name=spec``) and the other and old names of shipped players (:data:`ALIASES`,
read from the table of shipped players, :mod:`agents.shipped`).

A short name is letters, digits, ``_``, ``.`` and ``-``, starting with a letter or ``_``; tournament reports,
``skipbo play``'s table and TensorBoard tags show it instead of the spec. Both the spec loader
(``agents.loading``) and the kernel bots' spec parser (``agents.batched.bots``) read names here.
"""

from __future__ import annotations

import re
import warnings

from agents.shipped import ALIASES, OLD_NAMES

NAMED_SPEC = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)=(.+)", re.DOTALL)
"""``name=spec``; the name has no ``:`` or ``/``, so ``planner:hold_wilds=false`` is not a name."""

__all__ = ["ALIASES", "OLD_NAMES", "NAMED_SPEC", "split_name", "unaliased"]


def split_name(spec: str) -> tuple[str | None, str]:
    """``("mine", "bots/mybot.py:StockFirst")`` for ``"mine=bots/mybot.py:StockFirst"``; ``(None, spec)`` else."""
    named = NAMED_SPEC.fullmatch(spec.strip())
    return (named.group(1), named.group(2).strip()) if named else (None, spec)


def unaliased(name: str) -> str:
    """The name a shipped player's other name (:data:`ALIASES`, silently) or old name (:data:`OLD_NAMES`, with a
    one-line note naming the new name) stands for; any other name as it is."""
    if name in OLD_NAMES:
        warnings.warn(f"note: the player {name!r} is now called {OLD_NAMES[name]!r} (the old name still works)",
                      FutureWarning, stacklevel=2)
        return OLD_NAMES[name]
    return ALIASES.get(name, name)
