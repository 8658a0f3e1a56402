"""Game records (RULES.md, "State format"): the seed, the deal and every action of a hand.

A record replays to the same game, state for state: :meth:`skipbo_env.game.Game.record` writes one,
:meth:`skipbo_env.game.Game.replay` plays it again; :func:`check_record` (which the replay calls first)
refuses a malformed one with ``ValueError``. This module knows the format, not the game.
"""

from __future__ import annotations

from skipbo_env import validation
from skipbo_env.actions import NUM_ACTIONS

RECORD_FORMAT = "skipbo-record/1"


def check_record(record) -> None:
    """A game record's keys and types: every refusal a ``ValueError`` (RULES.md, "State format")."""
    validation.check_plain_json(record, "the game record")
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise ValueError(f"not a game record: expected a mapping with format {RECORD_FORMAT!r}")
    deal = ("start",) if "start" in record else ("rules", "dealer")
    missing = [key for key in ("seed", *deal, "actions") if key not in record]
    if missing:
        raise ValueError(
            f"game record lacks {', '.join(missing)} (it needs seed, actions, and start or rules and dealer)"
        )
    if record["seed"] is not None or "start" not in record:  # a loaded start may carry its generator instead
        validation.checked_int(record["seed"], "the game record's seed", 0)
    if "dealer" in deal:
        validation.checked_int(record["dealer"], "the game record's dealer", 0)
    actions = record["actions"]
    if not isinstance(actions, list):
        raise ValueError(f"the game record's actions must be a list of action ids, not {validation.excerpt(actions)}")
    for index, action in enumerate(actions):
        if not validation.is_int(action) or not 0 <= action < NUM_ACTIONS:
            raise ValueError(
                f"game record action #{index} does not replay: {validation.excerpt(action)} is not an "
                f"action id: use an integer from 0 to {NUM_ACTIONS - 1}"
            )
