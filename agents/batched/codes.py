"""Who plays a seat, as the kernels see it (``controllers[g, seat]``): the bot codes.

A kernel bot takes a block of codes, one per *variant* (a planner's switch mask, the row of a learned
bot's shipped weights); the blocks follow each other from 0 in the order of ``agents.registry.REGISTRY``
(:mod:`agents.batched.bots` lays them out and reads a spec's code). Below them, :data:`OTHER`: a seat no
kernel bot plays. Above them, from :data:`TABLE_CODES` on: the rows of a table of parameters that a
training kernel is given (``agents.batched.learned``).

Each kernel bot module (``agents/batched/<bot>.py``) declares its block with three names:
``VARIANTS`` (how many codes it takes), ``variant_of(name, spec)`` (the variant a spec of the bot
registered as ``name`` asks for, ``None`` for a spec of another bot) and the kernel
``act(r, legal, g, cfg, streams, variant)`` (the action of that variant for the seat to act in game
``g``, record ``r``; ``streams``: every seat's generator, see :func:`agents.batched.bots.new_streams`).
:func:`spec_switches` and :func:`switch_mask` serve bots whose variants are true/false switches.
"""

from __future__ import annotations

OTHER = -1
"""Any other player (the learner, a network, a Python policy): :func:`agents.batched.bots.play_bots` stops there."""
TABLE_CODES = 1 << 20
"""``TABLE_CODES + k``: the learned bot with the parameters of row ``k`` of a table given to a kernel (training
plays any weights without compiling again); every registered kernel bot's code is below it."""


def spec_switches(spec: str, name: str, switches: tuple[str, ...]) -> dict | None:
    """The switches ``"name:switch=false,..."`` sets (``{}`` for a bare ``"name"``); ``None`` for another name.

    Raises ``ValueError`` for an option that is not one of ``switches`` or a value that is not true/false.
    """
    head, sep, tail = spec.partition(":")
    if head.strip() != name:
        return None
    chosen = {}
    for item in tail.split(",") if sep else ():
        key, eq, value = (part.strip() for part in item.partition("="))
        if key not in switches:
            raise ValueError(f"policy spec {spec!r}: the {name} has no option {key!r}; its options: "
                             f"{', '.join(switches)}")
        if not eq or value.lower() not in ("true", "false"):
            raise ValueError(f"policy spec {spec!r}: option {key} takes true or false, not {value!r}")
        chosen[key] = value.lower() == "true"
    return chosen


def switch_mask(switches: dict, names: tuple[str, ...], defaults: dict) -> int:
    """The mask of ``switches`` (bit ``i``: ``names[i]``; missing ones at their ``defaults``)."""
    chosen = {**defaults, **switches}
    return sum(1 << i for i, name in enumerate(names) if chosen[name])
