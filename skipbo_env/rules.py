"""The settings of a hand and a match (RULES.md: every setting, with its default)."""

from __future__ import annotations

import dataclasses
import difflib
from typing import Any

from skipbo_env.cards import CARDS_PER_DECK, HAND_SIZE
from skipbo_env.validation import excerpt, is_int

MIN_PLAYERS, MAX_PLAYERS = 2, 6
TEAM_WIN_MODES = ("both", "either")
TEAM_STOCK_MODES = ("own", "shared")
EXHAUSTED_DRAW_MODES = ("play_on", "draw")
# Upper limits, so that no engine stores a value it cannot hold. The batched engine keeps pile
# lengths in int16 and turn and play counters in int32 (skipbo_env.vector.layout); points are
# int64 there and in tournaments, Python ints in matches.
MAX_DECKS = 200
"""200 decks are 32,400 cards: every pile length fits int16 (at most 32,767)."""
MAX_COUNTER = 2**31 - 1
"""The largest ``max_turns`` and ``max_turn_plays``: the turn and the plays of a turn are int32."""
MAX_WIN_POINTS = 1_000_000
MAX_STOCK_CARD_POINTS = 10_000
"""With these, a hand scores at most 1,000,000 + 10,000 * 32,400 (every card of 200 decks left in
a stockpile) = 325,000,000 points: it fits int32, and int64 totals hold millions of such hands."""


def default_stock_size(num_players: int) -> int:
    """RULES.md, "Deal": 30 cards with 2-4 players, 20 with 5-6."""
    return 30 if num_players <= 4 else 20


@dataclasses.dataclass(frozen=True)
class Rules:
    """Every setting of RULES.md. Invalid values raise ``ValueError`` naming the setting.

    ``stock_size=None`` means the table-size default (30 for 2-4 players, 20 for 5-6).
    ``max_turn_plays`` caps the cards played to building piles in one turn (RULES.md, "A turn
    that never ends"); ``max_turns`` truncates a hand after that many turns.
    ``match_end`` is one of ``{"target": N}``, ``{"rounds": N}``, ``{"single_hand": True}``.
    """

    num_players: int = 2
    stock_size: int | None = None
    decks: int = 1
    partners: bool = False
    team_win: str = "both"
    team_stock: str = "own"
    exhausted_draw: str = "play_on"
    max_turn_plays: int | None = 100
    max_turns: int | None = None
    win_points: int = 25
    stock_card_points: int = 5
    match_end: dict = dataclasses.field(default_factory=lambda: {"target": 500})

    def __new__(cls, *args, **settings):
        """Refuse an unknown keyword with ``ValueError`` naming the settings (not the bare ``TypeError``)."""
        _check_setting_names(settings)
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if not is_int(self.num_players) or not MIN_PLAYERS <= self.num_players <= MAX_PLAYERS:
            raise ValueError(
                f"num_players={excerpt(self.num_players)} is not allowed: use an integer from "
                f"{MIN_PLAYERS} to {MAX_PLAYERS}"
            )
        if self.stock_size is None:
            object.__setattr__(self, "stock_size", default_stock_size(self.num_players))
        self._check_int_in_range("stock_size", 1)
        self._check_int_in_range("decks", 1, MAX_DECKS)
        self._check_choice("team_win", TEAM_WIN_MODES)
        self._check_choice("team_stock", TEAM_STOCK_MODES)
        self._check_choice("exhausted_draw", EXHAUSTED_DRAW_MODES)
        if not isinstance(self.partners, bool):
            raise ValueError(f"partners={excerpt(self.partners)} is not allowed: use true or false")
        self._check_partners()
        if self.max_turn_plays is not None:
            self._check_int_in_range("max_turn_plays", 1, MAX_COUNTER, ", or None for no limit")
        if self.max_turns is not None:
            self._check_int_in_range("max_turns", 1, MAX_COUNTER, ", or None for no limit")
        self._check_int_in_range("win_points", 0, MAX_WIN_POINTS)
        self._check_int_in_range("stock_card_points", 0, MAX_STOCK_CARD_POINTS)
        object.__setattr__(self, "match_end", _checked_match_end(self.match_end))
        self._check_deck_holds_the_deal()

    def _check_int_in_range(self, name: str, low: int, high: int | None = None, extra: str = "") -> None:
        value = getattr(self, name)
        if not is_int(value) or value < low or (high is not None and value > high):
            allowed = f"an integer >= {low}" if high is None else f"an integer from {low} to {high}"
            raise ValueError(f"{name}={excerpt(value)} is not allowed: use {allowed}{extra}")

    def _check_choice(self, name: str, allowed: tuple[str, ...]) -> None:
        value = getattr(self, name)
        if value not in allowed:
            raise ValueError(f"{name}={excerpt(value)} is not allowed: use one of {', '.join(map(repr, allowed))}")

    def _check_partners(self) -> None:
        if self.partners and self.num_players not in (4, 6):
            raise ValueError(
                f"partners=True needs 4 or 6 players (partners sit opposite each other); "
                f"num_players is {self.num_players}"
            )
        if not self.partners:
            for name, default in (("team_win", "both"), ("team_stock", "own")):
                if getattr(self, name) != default:
                    raise ValueError(f"{name}={excerpt(getattr(self, name))} needs partners=True")

    def _check_deck_holds_the_deal(self) -> None:
        """RULES.md, "Deal": the deck holds every stockpile plus one full hand per seat."""
        needed = self.stock_size * self.num_stockpiles + HAND_SIZE * self.num_players
        available = CARDS_PER_DECK * self.decks
        if needed > available:
            largest = (available - HAND_SIZE * self.num_players) // self.num_stockpiles
            raise ValueError(
                f"stock_size={excerpt(self.stock_size)} is too large for {self.num_players} players with "
                f"decks={self.decks}: the deal needs {excerpt(needed)} cards and the deck has {available}; "
                f"use stock_size <= {largest} or more decks"
            )

    @property
    def num_teams(self) -> int:
        return self.num_players // 2 if self.partners else self.num_players

    @property
    def num_stockpiles(self) -> int:
        return self.num_teams if self.team_stock == "shared" else self.num_players

    @property
    def deck_size(self) -> int:
        return CARDS_PER_DECK * self.decks

    def team_of(self, seat: int) -> int:
        """Team index of a seat: seats ``i`` and ``i + n/2`` are partners."""
        return seat % self.num_teams

    def partner_of(self, seat: int) -> int | None:
        """The partner's seat, or ``None`` in a singles game."""
        if not self.partners:
            return None
        return (seat + self.num_players // 2) % self.num_players

    def to_dict(self) -> dict:
        return {field.name: _copy(getattr(self, field.name)) for field in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, settings: dict) -> "Rules":
        if not isinstance(settings, dict):
            raise ValueError(f"rules must be a mapping of settings, got {type(settings).__name__}")
        _check_setting_names(settings)  # before the call: a name that is not a string never reaches it
        return cls(**settings)


def _check_setting_names(settings: dict) -> None:
    """``ValueError`` for names that are not settings, with the closest setting where one is near."""
    unknown = [name for name in settings if name not in SETTING_NAMES]
    if not unknown:
        return
    hints = [f" (did you mean {close[0]}?)" if (close := difflib.get_close_matches(str(name), SETTING_NAMES, 1))
             else "" for name in unknown]
    named = ", ".join(excerpt(name) + hint for name, hint in sorted(zip(unknown, hints), key=lambda pair: str(pair[0])))
    raise ValueError(f"unknown setting(s) {named}; the settings are {', '.join(SETTING_NAMES)}")


def _copy(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else value


def _checked_match_end(match_end: Any) -> dict:
    """RULES.md, "Scoring and matches": target score, fixed rounds, or a single hand."""
    allowed = 'use {"target": N}, {"rounds": N} or {"single_hand": true}'
    if not isinstance(match_end, dict) or len(match_end) != 1:
        raise ValueError(f"match_end={excerpt(match_end)} is not allowed: {allowed}")
    (key, value), = match_end.items()
    if key in ("target", "rounds") and is_int(value) and value >= 1:
        return {key: value}
    if key == "single_hand" and value is True:
        return {key: True}
    raise ValueError(f"match_end={excerpt(match_end)} is not allowed: {allowed} with N >= 1")


SETTING_NAMES = tuple(field.name for field in dataclasses.fields(Rules))
