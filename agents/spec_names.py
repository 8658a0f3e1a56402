"""Names of policy specs: short names (``name=spec``) and the other names of shipped players (:data:`ALIASES`).

A short name is letters, digits, ``_``, ``.`` and ``-``, starting with a letter or ``_``; tournament reports,
``skipbo play``'s table and TensorBoard tags show it instead of the spec. Both the spec loader
(``agents.loading``) and the kernel bots' spec parser (``agents.batched.bots``) read names here.
"""

from __future__ import annotations

import re

NAMED_SPEC = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)=(.+)", re.DOTALL)
"""``name=spec``; the name has no ``:`` or ``/``, so ``planner:hold_wilds=false`` is not a name."""

ALIASES = {
    "pretrained-2p": "learned-2p",  # the strongest two-player player, whichever it is (issue 38 keeps this name)
    "pretrained-4p": "learned-4p",  # the earlier name of the four-player learned weights
}
"""Other names of shipped players -> the name that says what each is (``docs/bots.md``, "Shipped players").
Every spec parser accepts both; reports show the name a spec was given."""


def split_name(spec: str) -> tuple[str | None, str]:
    """``("mine", "bots/mybot.py:StockFirst")`` for ``"mine=bots/mybot.py:StockFirst"``; ``(None, spec)`` else."""
    named = NAMED_SPEC.fullmatch(spec.strip())
    return (named.group(1), named.group(2).strip()) if named else (None, spec)


def unaliased(name: str) -> str:
    """The name a shipped player's other name (:data:`ALIASES`) stands for; any other name as it is."""
    return ALIASES.get(name, name)
