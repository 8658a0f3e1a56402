"""The learned bot's features and parameters, and the shipped weights files: what ``agents.learned.LearnedBot``
and its kernel twin ``agents.batched.learned`` both read.
"""

from __future__ import annotations

import json
import math

import numpy as np

from agents.shipped import LEARNED, of_kind
from skipbo_env.files import FileRefused, read_file_text

NAME = "learned"

FEATURES = (
    "stock_cards",             # stockpile tops played (own and partner's)
    "hand_numbers",            # number cards played from the hand
    "hand_wilds",              # SKIP-BO cards played from the hand
    "discard_numbers",         # number cards played from discard-pile tops
    "discard_wilds",           # SKIP-BO cards played from discard-pile tops
    "idle_wilds",              # SKIP-BO cards played by a sequence that plays no stockpile card (hand not stalled)
    "emptied_hand",            # 1 when the hand is emptied and cards can be drawn (five new cards)
    "threat",                  # sum over opponents of seat weight x chance to reach its stockpile top from the piles
    "threat_endgame",          # the same, each divided by that opponent's stockpile size
    "stalled_threat",          # "threat" when nothing can be drawn (else 0)
    "stalled_threat_endgame",  # "threat_endgame" when nothing can be drawn (else 0)
    "prospect",                # my chance to reach my stockpile top next turn (0 once it was played)
    "prospect_endgame",        # the same divided by my stockpile size
    "partner",                 # the partner's chance to reach its stockpile top (a partner with its own stockpile)
    "stalled_plays",           # cards played when nothing can be drawn (else 0)
    "stalled_completed",       # building piles completed when nothing can be drawn (else 0)
)
"""What the valuation of a stop weighs, in this order (the comments say what each counts)."""
DISCARD_FEATURES = ("discard_shape", "discard_coverage", "discard_reach")
"""The expert's three terms of a discard: the planner's pile-shape score, the average run hand and piles
play from a need (coverage), and the chance to reach the stockpile next turn."""
PARAMETERS = FEATURES + DISCARD_FEATURES
NUM_FEATURES = len(FEATURES)
NUM_PARAMETERS = len(PARAMETERS)
(F_STOCK, F_HAND_NUMBERS, F_HAND_WILDS, F_DISCARD_NUMBERS, F_DISCARD_WILDS, F_IDLE_WILDS, F_EMPTIED, F_THREAT,
 F_THREAT_ENDGAME, F_STALLED_THREAT, F_STALLED_THREAT_ENDGAME, F_PROSPECT, F_PROSPECT_ENDGAME, F_PARTNER,
 F_STALLED_PLAYS, F_STALLED_COMPLETED) = range(NUM_FEATURES)

PRETRAINED_WEIGHTS = of_kind(LEARNED)
"""The shipped weights by name (``agents.load_policy("learned-2p")``), read from the table of shipped players
(:mod:`agents.shipped`: how each was made, its other names): the learned bot with these weights, trained for two
and for four players. ``learned`` plays the first."""
WEIGHTS_FILE = next(iter(PRETRAINED_WEIGHTS.values()))
"""The shipped parameters ``learned`` plays: ``{"parameters": {name: weight, ...}, ...}`` (see
:func:`read_parameters`)."""
MAX_WEIGHTS_BYTES = 2**20
"""The largest weights file read (the shipped ones are about 2 KB)."""


def parameter_vector(weights: dict) -> np.ndarray:
    """float64[NUM_PARAMETERS] from ``{name: weight}`` (every name of :data:`PARAMETERS`, nothing else)."""
    unknown = sorted(set(weights) - set(PARAMETERS))
    missing = [name for name in PARAMETERS if name not in weights]
    if unknown or missing:
        raise ValueError(f"learned weights: unknown {unknown}, missing {missing}; the parameters are "
                         f"{', '.join(PARAMETERS)}")
    values = [weights[name] for name in PARAMETERS]
    if not all(_is_finite_number(value) for value in values):
        raise ValueError("learned weights: every weight must be a finite number")
    return np.array(values, dtype=np.float64)


def _is_finite_number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer beyond the floats
        return False


def read_parameters(path: str = WEIGHTS_FILE) -> np.ndarray:
    """The parameter vector of a weights file (JSON: ``{"parameters": {name: weight}}``); ``ValueError`` with
    the reason for a file that is not one. ``path`` is a path (a number is refused: it is not a file
    descriptor), read as a regular file of at most :data:`MAX_WEIGHTS_BYTES` (a FIFO or a device is refused
    before it is opened)."""
    if isinstance(path, int) and not isinstance(path, bool):
        raise ValueError(f"learned weights {path!r} is not a file path: give the path of a weights file "
                         f"(./{path} for a file named {path})")
    try:
        data = json.loads(read_file_text(path, max_bytes=MAX_WEIGHTS_BYTES, what="learned weights"))
    except FileRefused:
        raise
    except RecursionError:
        raise ValueError(f"learned weights {path!r} cannot be read: its JSON is nested too deeply") from None
    except ValueError as error:  # JSONDecodeError, and a number of more digits than Python converts
        raise ValueError(f"learned weights {path!r} cannot be read: {' '.join(str(error).split())[:200]}") from None
    if not isinstance(data, dict) or not isinstance(data.get("parameters"), dict):
        raise ValueError(f"learned weights {path!r}: expected a JSON object with a 'parameters' object")
    return parameter_vector(data["parameters"])


def parameter_dict(vector) -> dict:
    """``{name: weight}`` of a parameter vector."""
    return {name: float(value) for name, value in zip(PARAMETERS, vector)}
