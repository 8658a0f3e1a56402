"""Short names of policy specs: ``name=spec`` (``mine=bots/mybot.py:StockFirst``).

A name is letters, digits, ``_``, ``.`` and ``-``, starting with a letter or ``_``; tournament reports,
``skipbo play``'s table and TensorBoard tags show it instead of the spec. Both the spec loader
(``agents.loading``) and the kernel bots' spec parser (``agents.batched.bots``) read names here.
"""

from __future__ import annotations

import re

NAMED_SPEC = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)=(.+)", re.DOTALL)
"""``name=spec``; the name has no ``:`` or ``/``, so ``planner:hold_wilds=false`` is not a name."""


def split_name(spec: str) -> tuple[str | None, str]:
    """``("mine", "bots/mybot.py:StockFirst")`` for ``"mine=bots/mybot.py:StockFirst"``; ``(None, spec)`` else."""
    named = NAMED_SPEC.fullmatch(spec.strip())
    return (named.group(1), named.group(2).strip()) if named else (None, spec)
