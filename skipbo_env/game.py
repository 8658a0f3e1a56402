"""One hand of Skip-Bo: the rules engine (RULES.md, "A turn" to "Scoring and matches").

The engine knows nothing of observations, rewards or agents. Chance events (the deal,
draws, recycling the completed piles) happen inside :meth:`Game.new` and :meth:`Game.step`,
all from one seeded ``numpy.random.Generator``.

Internal layout, read by the encoders (treat it as read-only):

- ``hand_counts[seat][v]``: how many cards of value ``v`` (1..13) the seat holds;
  ``hand_sizes[seat]`` their total. Hands are multisets, so order is not kept.
- ``stocks[seat]``, ``discards[seat][0..3]``, ``building[0..3]``, ``completed``,
  ``draw_pile``: lists of card values whose last element is the top card. With
  ``team_stock="shared"`` both partners' entries in ``stocks`` are the same list object.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json

import numpy as np

from skipbo_env import records, state_io
from skipbo_env.actions import (
    DISCARD_SOURCE,
    END_TURN,
    FIRST_DISCARD,
    NUM_ACTIONS,
    NUM_SOURCES,
    PARTNER_DISCARD_SOURCE,
    PARTNER_STOCK_SOURCE,
    STOCK_SOURCE,
    action_id,
    discard_action,
    discard_pile,
    discard_value,
    hand_play_action,
    play_action,
    play_pile,
    play_source,
)
from skipbo_env.cards import (HAND_SIZE, NUM_BUILDING_PILES, NUM_DISCARD_PILES, NUM_VALUES, TOP_VALUE, WILD,
                              canonical_slots, new_deck, shuffled)
from skipbo_env.explain import why_illegal
from skipbo_env.rules import Rules

class IllegalActionError(ValueError):
    """An action id that is not legal in the current position; the game is unchanged."""


class Game:
    """One hand. Create with :meth:`new` (a fresh deal) or :meth:`from_dict` (a saved position)."""

    __slots__ = (
        "rules", "num_players", "hand_counts", "hand_sizes", "stocks", "discards", "building",
        "completed", "draw_pile", "current_seat", "dealer", "turn", "phase", "plays_this_turn",
        "quiet_turns", "outcome", "winners", "_partner", "_rng", "_seed", "_start", "_actions",
        "_legal", "_mask",
    )

    def __init__(self, rules: Rules, seed: int) -> None:
        n = rules.num_players
        self.rules = rules
        self.num_players = n
        self.hand_counts = [[0] * (NUM_VALUES + 1) for _ in range(n)]
        self.hand_sizes = [0] * n
        self.stocks: list[list[int]] = [[] for _ in range(n)]
        self.discards = [[[] for _ in range(4)] for _ in range(n)]
        self.building: list[list[int]] = [[] for _ in range(4)]
        self.completed: list[int] = []
        self.draw_pile: list[int] = []
        self.current_seat = self.dealer = self.turn = 0
        self.phase = "play"
        self.plays_this_turn = self.quiet_turns = 0
        self.outcome: str | None = None
        self.winners: tuple[int, ...] = ()
        self._partner = [rules.partner_of(seat) for seat in range(n)]
        self._seed = seed
        self._rng = np.random.default_rng(seed)  # a loaded game may then restore a saved state
        self._start: dict | None = None
        self._actions: list[int] = []
        self._legal: list[int] | None = None
        self._mask: bytes | None = None

    # ------------------------------------------------------------------ creation
    @classmethod
    def new(cls, rules: Rules | None = None, seed: int | None = None, dealer: int | None = None) -> "Game":
        """A new hand: the whole deck shuffled, the stockpiles dealt, the first seat drawn up.

        The generator first draws one number that picks the dealer (RULES.md, "Deal": the
        first dealer is chosen at random), then shuffles; ``dealer`` overrides the pick.
        ``seed=None`` takes fresh entropy, which :meth:`record` keeps.
        """
        rules = rules if rules is not None else Rules()
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % 2**63)
        game = cls(rules, seed)
        n = rules.num_players
        drawn_dealer = int(game._rng.random() * n)
        if dealer is None:
            dealer = drawn_dealer
        elif not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < n:
            raise ValueError(f"dealer={dealer!r} is not a seat: use 0 to {n - 1}")
        game.dealer = int(dealer)
        game._deal(shuffled(new_deck(rules.decks), game._rng))
        game.current_seat = (game.dealer + 1) % n
        game._draw_up_to_five()
        return game

    def _deal(self, deck: list[int]) -> None:
        """RULES.md, "Deal": one stockpile per seat (per team when shared), the rest is the draw pile."""
        size = self.rules.stock_size
        piles = [deck[i * size:(i + 1) * size] for i in range(self.rules.num_stockpiles)]
        for seat in range(self.num_players):
            self.stocks[seat] = piles[self.stockpile_owner(seat)]
        self.draw_pile = deck[len(piles) * size:]

    @classmethod
    def from_dict(cls, state: dict, seed: int | None = None) -> "Game":
        """Load a position in the state format of RULES.md, refusing a broken one with ``ValueError``.

        Later shuffles draw from ``seed`` when given; otherwise from the generator state saved
        under ``"rng"`` by :meth:`to_dict` (so a saved game resumes exactly, future shuffles
        included); otherwise from a seed derived from the state, so loading the same position
        twice gives the same game. A state in phase ``"draw"`` performs the draw.
        """
        rules = state_io.check_state(state)
        if seed is not None:
            seed = state_io.checked_seed(seed)
        if seed is None and "rng" not in state:
            digest = hashlib.sha256(json.dumps(state, sort_keys=True).encode()).digest()
            seed = int.from_bytes(digest[:8], "little") >> 1
        game = cls(rules, seed)
        if seed is None:
            game._rng.bit_generator.state = state_io.checked_rng_state(state["rng"])
        game._start = json.loads(json.dumps(state))
        state_io.load_position(game, state)
        if game.outcome is None and game.phase == "draw":
            game.phase = "play"
            game._draw_up_to_five()
        return game

    @classmethod
    def at_state(cls, state: dict, record: dict) -> "Game":
        """The hand ``record`` describes (its ``seed``, its ``start`` when it was loaded, its ``actions``),
        brought to ``state`` without replaying: ``state`` (saved with its generator, as :meth:`to_dict`
        writes) must be the position those actions lead to. Its :meth:`record`, :attr:`seed` and
        :attr:`actions_taken` are then that hand's (the compiled hand behind ``raw_env`` builds its game so)."""
        game = cls.from_dict(state)
        game._seed = record["seed"]
        game._start = record.get("start")
        game._actions = list(record["actions"])
        return game

    def stockpile_owner(self, seat: int) -> int:
        """The seat whose ``stock`` entry holds this seat's stockpile in the state format."""
        return self.rules.team_of(seat) if self.rules.team_stock == "shared" else seat

    # ------------------------------------------------------------------ queries
    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def seed(self) -> int:
        return self._seed

    @property
    def actions_taken(self) -> int:
        """How many actions this hand has taken (the record's length): each action adds one."""
        return len(self._actions)

    @property
    def last_action(self) -> int | None:
        """The id of the action taken last in this hand (``None`` before the first)."""
        return self._actions[-1] if self._actions else None

    def can_draw(self) -> bool:
        """Whether a card could be drawn now (from the draw pile or recycled completed piles)."""
        return bool(self.draw_pile or self.completed)

    def partner_of(self, seat: int) -> int | None:
        return self._partner[seat]

    def legal_actions(self) -> list[int]:
        """The legal action ids for the seat to act, ascending; empty once the hand is over."""
        if self._legal is None:
            self._legal = list(itertools.compress(_ACTION_IDS, self.legal_mask()))
        return self._legal

    def legal_mask(self) -> bytes:
        """One byte per action id, 1 where the id is legal for the seat to act (all 0 once the hand is over)."""
        if self._mask is None:
            self._mask = _NO_ACTIONS if self.outcome is not None else self._compute_legal_mask()
        return self._mask

    def action_mask(self) -> np.ndarray:
        """bool[145]: :meth:`legal_mask` as a new numpy array."""
        return np.frombuffer(bytearray(self.legal_mask()), dtype=bool)

    def open_building_piles(self) -> list[tuple[int, int]]:
        """(slot, value needed) of every pile a card may go on: started piles and the lowest empty slot."""
        building = self.building
        return [(slot, len(building[slot]) + 1) for slot in canonical_slots(building)]

    def turn_play_limit_reached(self) -> bool:
        """RULES.md, "A turn that never ends" (``max_turn_plays``): once that many cards have been
        played to building piles this turn, no further play is legal; the player must discard
        (or end the turn with an empty hand when nothing can be drawn)."""
        limit = self.rules.max_turn_plays
        return limit is not None and self.plays_this_turn >= limit

    def _compute_legal_mask(self) -> bytes:
        """RULES.md, "Action ids": the plays of every hand card, stockpile and discard top onto the building
        piles it fits, and the discards (or the end of the turn with an empty hand), as one byte mask.

        Built as a Python int with byte ``id`` set for each legal id, OR-ing the masks cached per
        building position (which slots each card value fits) and per discard-pile position.
        """
        seat = self.current_seat
        fits = _NO_FITS if self.turn_play_limit_reached() else _fitting_slots(tuple(map(len, self.building)))
        discards = _DISCARD_MASKS[tuple(map(bool, self.discards[seat]))]
        mask = 0 if self.hand_sizes[seat] else _END_TURN_MASK
        for value in itertools.compress(_VALUES, self.hand_counts[seat]):  # the values in the hand
            mask |= _HAND_PLAY_MASKS[value][fits[value]] | discards[value]
        stock = self.stocks[seat]
        if stock:
            mask |= _PLAY_MASKS[STOCK_SOURCE][fits[stock[-1]]]
        for plays, pile in zip(_OWN_DISCARD_PLAY_MASKS, self.discards[seat]):
            if pile:
                mask |= plays[fits[pile[-1]]]
        partner = self._partner[seat]
        if partner is not None:
            partner_stock = self.stocks[partner]
            if partner_stock and partner_stock is not stock:
                mask |= _PLAY_MASKS[PARTNER_STOCK_SOURCE][fits[partner_stock[-1]]]
            for plays, pile in zip(_PARTNER_DISCARD_PLAY_MASKS, self.discards[partner]):
                if pile:
                    mask |= plays[fits[pile[-1]]]
        return mask.to_bytes(NUM_ACTIONS, "little")

    # ------------------------------------------------------------------ actions
    def step(self, action: int) -> None:
        """Take one action for the seat to act; draws and recycling follow as chance events.

        Raises :class:`IllegalActionError` (the game unchanged) when the id is not legal, or not an exact ``int``
        or numpy integer (:func:`~skipbo_env.actions.action_id`).
        """
        index = action_id(action)  # read by value: an object's own __eq__ never decides what is legal
        if index is None or not 0 <= index < NUM_ACTIONS or not self.legal_mask()[index]:
            raise IllegalActionError(why_illegal(self, action))
        action = index
        self._actions.append(action)
        self._legal = self._mask = None
        if action < FIRST_DISCARD:
            self._play(action)
        elif action < END_TURN:
            self._discard(action)
        else:
            self._end_turn()

    def _play(self, action: int) -> None:
        """RULES.md, "Play": one card onto a building pile; a pile of 12 is set aside at once."""
        source, slot = play_source(action), play_pile(action)
        seat = self.current_seat
        if source < STOCK_SOURCE:
            card = source + 1
            self.hand_counts[seat][card] -= 1
            self.hand_sizes[seat] -= 1
        elif source == STOCK_SOURCE:
            card = self.stocks[seat].pop()
        elif source < PARTNER_STOCK_SOURCE:
            card = self.discards[seat][source - DISCARD_SOURCE].pop()
        elif source == PARTNER_STOCK_SOURCE:
            card = self.stocks[self._partner[seat]].pop()
        else:
            card = self.discards[self._partner[seat]][source - PARTNER_DISCARD_SOURCE].pop()
        pile = self.building[slot]
        pile.append(card)
        if len(pile) == TOP_VALUE:
            self._set_aside_completed_pile(slot)
        self.plays_this_turn += 1
        if (source == STOCK_SOURCE or source == PARTNER_STOCK_SOURCE) and self._stockpiles_emptied(seat):
            self._finish("win", self._team_seats(seat))
            return
        if self.hand_sizes[seat] == 0:
            self._draw(HAND_SIZE)

    def _set_aside_completed_pile(self, slot: int) -> None:
        """RULES.md: a pile that reaches 12 is taken away and set aside; its slot is free again."""
        self.completed.extend(self.building[slot])
        self.building[slot] = []

    def _stockpiles_emptied(self, seat: int) -> bool:
        """RULES.md, "Winning a hand" and "Partners" (``team_win``): is the hand won?"""
        partner = self._partner[seat]
        if partner is None or self.rules.team_stock == "shared":
            return not self.stocks[seat]
        if self.rules.team_win == "both":
            return not self.stocks[seat] and not self.stocks[partner]
        return not self.stocks[seat] or not self.stocks[partner]

    def _team_seats(self, seat: int) -> tuple[int, ...]:
        partner = self._partner[seat]
        return (seat,) if partner is None else tuple(sorted((seat, partner)))

    def _discard(self, action: int) -> None:
        """RULES.md, "Discard": a hand card onto one of the player's own discard piles ends the turn."""
        value, slot = discard_value(action), discard_pile(action)
        seat = self.current_seat
        self.hand_counts[seat][value] -= 1
        self.hand_sizes[seat] -= 1
        self.discards[seat][slot].append(value)
        self._end_turn()

    def _end_turn(self) -> None:
        """Count quiet turns (``exhausted_draw``), apply ``max_turns``, pass to the left and draw."""
        quiet = self.plays_this_turn == 0 and not self.can_draw()
        self.quiet_turns = self.quiet_turns + 1 if quiet else 0
        self.turn += 1
        self.current_seat = (self.dealer + 1 + self.turn) % self.num_players
        self.plays_this_turn = 0
        self.phase = "draw"
        if self.rules.exhausted_draw == "play_on" and self.quiet_turns >= self.num_players:
            self._finish("draw", ())
            return
        if self.rules.max_turns is not None and self.turn >= self.rules.max_turns:
            self._finish("truncated", ())
            return
        self.phase = "play"
        self._draw_up_to_five()

    def _draw_up_to_five(self) -> None:
        """RULES.md, "A turn", step 1: draw until the hand holds 5 cards."""
        self._draw(HAND_SIZE - self.hand_sizes[self.current_seat])

    def _draw(self, count: int) -> None:
        """Draw ``count`` cards for the seat to act, recycling completed piles when the draw pile is empty.

        RULES.md, "Running out of cards to draw": with ``exhausted_draw="draw"`` the hand ends
        as a draw when a card must be drawn and none is left; with ``"play_on"`` the seat takes
        what there is.
        """
        seat = self.current_seat
        counts = self.hand_counts[seat]
        for _ in range(count):
            if not self.draw_pile:
                if not self.completed:
                    if self.rules.exhausted_draw == "draw":
                        self._finish("draw", ())
                    return
                self._recycle_completed_piles()
            counts[self.draw_pile.pop()] += 1
            self.hand_sizes[seat] += 1

    def _recycle_completed_piles(self) -> None:
        """RULES.md: only when the draw pile is empty are the completed piles shuffled into a new one."""
        self.draw_pile = shuffled(self.completed, self._rng)
        self.completed = []

    def _finish(self, outcome: str, winners: tuple[int, ...]) -> None:
        self.outcome = outcome
        self.winners = winners
        self._legal = []
        self._mask = _NO_ACTIONS

    def copy(self) -> "Game":
        """An independent copy: same position, same generator state, same record so far."""
        game = Game.__new__(Game)
        for name in ("rules", "num_players", "current_seat", "dealer", "turn", "phase", "plays_this_turn",
                     "quiet_turns", "outcome", "winners", "_partner", "_seed", "_start", "_legal", "_mask"):
            setattr(game, name, getattr(self, name))
        game.hand_counts = [counts[:] for counts in self.hand_counts]
        game.hand_sizes = self.hand_sizes[:]
        game.stocks = [[] for _ in range(self.num_players)]
        for seat in range(self.num_players):
            owner = self.stockpile_owner(seat)
            game.stocks[seat] = game.stocks[owner] if owner != seat else self.stocks[seat][:]
        game.discards = [[pile[:] for pile in piles] for piles in self.discards]
        game.building = [pile[:] for pile in self.building]
        game.completed = self.completed[:]
        game.draw_pile = self.draw_pile[:]
        game._rng = np.random.Generator(np.random.PCG64())
        game._rng.bit_generator.state = self._rng.bit_generator.state
        game._actions = self._actions[:]
        return game

    # ------------------------------------------------------------------ results
    def points(self) -> tuple[int, ...]:
        """This hand's points per seat (RULES.md, "Scoring"): only the winner (team) scores."""
        n = self.num_players
        if self.outcome != "win":
            return (0,) * n
        winning_team = self.rules.team_of(self.winners[0])
        cards_left = sum(
            len(self.stocks[seat])
            for seat in range(n)
            if self.stockpile_owner(seat) == seat and self.rules.team_of(seat) != winning_team
        )
        score = self.rules.win_points + self.rules.stock_card_points * cards_left
        return tuple(score if seat in self.winners else 0 for seat in range(n))

    # ------------------------------------------------------------------ files (skipbo_env.state_io, .records)
    def to_dict(self) -> dict:
        """The position in the state format of RULES.md (JSON-ready): :func:`skipbo_env.state_io.save_state`."""
        return state_io.save_state(self)

    def record(self) -> dict:
        """The game record (seed, deal: rules and dealer, or the loaded start state; actions) in the format
        :mod:`skipbo_env.records` checks."""
        record = {"format": records.RECORD_FORMAT, "seed": self._seed}
        if self._start is not None:
            record["start"] = self._start
        else:
            record["rules"] = self.rules.to_dict()
            record["dealer"] = self.dealer
        record["actions"] = list(self._actions)
        return record

    @classmethod
    def replay(cls, record: dict) -> "Game":
        """The game a :meth:`record` describes, every action taken again.

        A malformed record (:func:`skipbo_env.records.check_record`), or one whose actions do not replay,
        is refused with ``ValueError``.
        """
        records.check_record(record)
        if "start" in record:
            game = cls.from_dict(record["start"], seed=record["seed"])
        else:
            game = cls.new(Rules.from_dict(record["rules"]), seed=record["seed"], dealer=record["dealer"])
        for index, action in enumerate(record["actions"]):
            try:
                game.step(action)
            except IllegalActionError as error:
                raise ValueError(f"game record action #{index} does not replay: {error}") from None
        return game

    def __repr__(self) -> str:
        status = f"outcome={self.outcome!r}, winners={self.winners}" if self.outcome else f"seat {self.current_seat} to act"
        return f"Game({self.num_players} players, turn {self.turn}, {status})"


def _id_mask(ids) -> int:
    """The int whose byte ``id`` is 1 for each of ``ids`` (``to_bytes(NUM_ACTIONS, "little")`` gives the mask)."""
    return sum(1 << 8 * action for action in ids)


@functools.cache  # at most 12 ** 4 building positions
def _fitting_slots(sizes: tuple[int, ...]) -> tuple[int, ...]:
    """For each card value 0..13, the building slots it may be played on (canonical slots: the started
    ones and the lowest empty one), as bits, with building piles of ``sizes``."""
    fits = [0] * (NUM_VALUES + 1)
    for slot in canonical_slots(sizes):
        fits[sizes[slot] + 1] |= 1 << slot
        fits[WILD] |= 1 << slot
    return tuple(fits)


_ACTION_IDS = range(NUM_ACTIONS)
_NO_ACTIONS = bytes(NUM_ACTIONS)
_END_TURN_MASK = _id_mask([END_TURN])
_VALUES = range(NUM_VALUES + 1)
_NO_FITS = (0,) * (NUM_VALUES + 1)
_SLOT_SETS = range(1 << NUM_BUILDING_PILES)
_PLAY_MASKS = [[_id_mask(play_action(source, slot) for slot in range(NUM_BUILDING_PILES) if bits >> slot & 1)
                for bits in _SLOT_SETS] for source in range(NUM_SOURCES)]
"""``_PLAY_MASKS[source][bits]``: the plays from ``source`` onto the building slots of ``bits``."""
_HAND_PLAY_MASKS = [None] + [_PLAY_MASKS[play_source(hand_play_action(value, 0))] for value in range(1, NUM_VALUES + 1)]
"""``_HAND_PLAY_MASKS[value][bits]``: the plays of a hand card of ``value`` onto the building slots of ``bits``."""
_OWN_DISCARD_PLAY_MASKS = _PLAY_MASKS[DISCARD_SOURCE:DISCARD_SOURCE + NUM_DISCARD_PILES]
_PARTNER_DISCARD_PLAY_MASKS = _PLAY_MASKS[PARTNER_DISCARD_SOURCE:PARTNER_DISCARD_SOURCE + NUM_DISCARD_PILES]
_DISCARD_MASKS = {
    started: [0] + [_id_mask(discard_action(value, slot) for slot in canonical_slots(started))
                    for value in range(1, NUM_VALUES + 1)]
    for started in itertools.product((False, True), repeat=NUM_DISCARD_PILES)
}
"""``_DISCARD_MASKS[started][value]``: the discards of ``value`` onto the canonical discard slots, the
seat's discard piles started as ``started`` says."""
