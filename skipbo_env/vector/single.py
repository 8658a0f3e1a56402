"""One hand in the batched engine's arrays, stepped by one compiled call: the core behind ``raw_env``.

:class:`CompiledHand` holds a batch of one (:mod:`.layout`'s record, the mask, the observation)
and steps it with the same kernels as :class:`~skipbo_env.vector.VectorGame`, so it is the rules
engine's hand state for state (tests/envs/test_compiled_hand.py holds the two together). One
action is one kernel call that takes the action, computes the new mask and writes the new seat to
act's observation, and writes the action into the hand's log (an int64 array, ``log[:logged]``);
Python keeps only what the call returns (the seat to act, or how the hand ended) and the count of
actions, from which :meth:`CompiledHand.game` builds a rules-engine :class:`~skipbo_env.game.Game`
(same position, generator and record) when someone asks for one.

The kernels take the rules as an int64 array (a tuple argument costs numba a type check per
field at every call) and read the observation's offsets as compiled-in constants
(:mod:`skipbo_env.encoding` is one of ``jit.KERNEL_SOURCES``, so a change of it recompiles them); its
scales come as an argument, an array of the type ``VectorGame`` passes, so that both share one
compiled ``encode_observation``. A hand calls its kernel through the compiled entry point for the
hand's own argument types (:func:`compiled_entry`): a numba dispatcher spends about 0.35 us per call
matching the arguments' types against its compiled signatures, as much as a whole step of the rules.
"""

from __future__ import annotations

import numba
import numpy as np

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_SIZE, as_action_id
from skipbo_env.explain import why_illegal
from skipbo_env.game import Game, IllegalActionError
from skipbo_env.rules import Rules
from skipbo_env.vector import observe
from skipbo_env.vector.observe import SCALE
from skipbo_env.vector.engine import record_state, write_game
from skipbo_env.vector.jit import jit
from skipbo_env.vector.kernels import compute_legal, deal_game, points_of_rows, step_game
from skipbo_env.vector.layout import OUTCOME_NAMES, RUNNING, WIN, Config, game_dtype, make_config

ILLEGAL = -1
"""The status of a refused action (the hand is unchanged)."""
FULL_LOG = -2
"""The status of a call that found no room in the hand's log for the action (nothing changed): grow the log and
call again."""
LOG_ROOM = 1024
"""The first size of a hand's log of actions (it doubles when full)."""
OVER = 8
"""Statuses from ``OVER`` on: the hand is over, ``status - OVER`` its outcome code (``layout.WIN`` ...);
below it the status is the seat to act."""
NO_HAND = OVER + RUNNING
"""The status before the first deal."""

_OFFSETS = observe.offsets()


@jit
def hand_row(games):
    """0, the row of the hand in its batch of one, as a plain int64 (like a ``VectorGame``'s rows, so that the
    kernels it is passed to are the ones ``VectorGame`` compiled: a literal 0 would compile them again)."""
    return games.shape[0] - 1


@jit
def rules_config(values):
    """:func:`~skipbo_env.vector.layout.make_config`'s tuple from its values as int64 (the same numba type)."""
    return Config(values[0], values[1], values[2], values[3], values[4], values[5], values[6] != 0, values[7] != 0,
                  values[8] != 0, values[9] != 0, values[10], values[11], values[12], values[13])


@jit
def hand_status(r, cfg, scale, obs, g):
    """The seat to act, its vector written into ``obs[g]`` (``g``: the hand's row); or ``OVER`` + the outcome."""
    if r.outcome != RUNNING:
        return OVER + r.outcome
    observe.encode_observation(r, cfg, _OFFSETS, scale, r.seat, obs, g)
    return r.seat


_STEP, _DEAL, _REFRESH, _ENCODE = range(4)
"""What a call of :func:`_play` does (one kernel for all four: each compiled kernel costs seconds to build)."""


@jit
def _play(games, legal, config, scale, what, value, obs, log, logged):
    """``_STEP``: take action ``value`` and write it into ``log[logged]``; ``_DEAL``: deal with seed ``value``;
    ``_REFRESH``: the mask of a loaded record; each returns the status. ``_ENCODE``: seat ``value``'s vector
    into ``obs[1]``."""
    cfg = rules_config(config)
    g = hand_row(games)
    r = games[g]
    if what == _ENCODE:
        observe.encode_observation(r, cfg, _OFFSETS, scale, value, obs, g + 1)
        return 0
    if what == _STEP:
        if logged >= log.shape[0]:
            return FULL_LOG
        if not step_game(r, legal, cfg, g, value):
            return ILLEGAL
        log[logged] = value
    elif what == _DEAL:
        deal_game(r, legal, cfg, g, value)
    else:
        compute_legal(r, legal, cfg, g)
    return hand_status(r, cfg, scale, obs, g)


def compiled_entry(kernel, *args):
    """``kernel``'s machine code for the numba types of ``args`` (compiled, or loaded from numba's cache,
    now): a callable that skips the dispatcher's type matching, so it must only ever get arguments of
    exactly those types (a hand's own arrays, and ints it has checked)."""
    return kernel.compile(tuple(numba.typeof(arg) for arg in args))


class CompiledHand:
    """One hand of Skip-Bo stepped by the batched engine's kernels, one call per action.

    :meth:`deal` and :meth:`load` start a hand and return its status (the seat to act, or
    ``OVER`` + the outcome code); :meth:`step` takes an action and returns the new status, or raises
    :class:`IllegalActionError` (the hand unchanged) with the rules engine's reason. The position is
    read through :meth:`observe` (the dict every policy's ``act`` receives), :meth:`encode`, the
    result attributes (``outcome``, ``winners``, :meth:`points`), or :meth:`game`, a rules-engine
    copy built when asked.
    """

    __slots__ = ("rules", "num_players", "status", "_cfg", "_config", "_games", "_legal", "_obs", "_mask",
                 "_legal_row", "_to_act", "_seed", "_start", "log", "logged", "_game", "_stock_of_seat", "_play",
                 "_points")
    _DERIVED = ("_mask", "_legal_row", "_to_act", "_play")
    """What :meth:`__setstate__` makes again (views and compiled entry points, which do not pickle)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.num_players = rules.num_players
        self._cfg = make_config(rules)
        self._config = np.array(self._cfg, dtype=np.int64)
        self._games = np.zeros(1, dtype=game_dtype(rules.decks))
        self._legal = np.zeros((1, NUM_ACTIONS), dtype=np.bool_)
        self._obs = np.zeros((2, OBS_SIZE), dtype=np.float32)  # the seat to act's vector, another's (absent seats: 0)
        self._stock_of_seat = [rules.team_of(seat) if rules.team_stock == "shared" else seat
                               for seat in range(rules.num_players)]
        self.log = np.zeros(LOG_ROOM, dtype=np.int64)  # the ids taken, log[:logged] (kernels write them)
        self.logged = 0
        self._views()
        self.status = NO_HAND
        self._seed: int | None = None
        self._start: dict | None = None
        self._game: Game | None = None
        self._points: tuple | None = None  # (the status they were worked out at, the points)

    def _views(self) -> None:
        """The mask (as int8 and as bool) and the seat to act's vector, views of the kernels' arrays; the kernel's
        entry point."""
        self._mask = self._legal.view(np.int8)[0]
        self._legal_row = self._legal[0]
        self._to_act = self._obs[0]
        self._play = compiled_entry(_play, self._games, self._legal, self._config, SCALE, _STEP, 0, self._obs, self.log,
                                    0)

    def __getstate__(self) -> dict:
        return {name: getattr(self, name) for name in self.__slots__ if name not in self._DERIVED}

    def __setstate__(self, state: dict) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self._views()

    # ------------------------------------------------------------------ starting a hand
    def deal(self, seed: int) -> int:
        """``Game.new(rules, seed=seed)``, dealt by the kernels; returns the status."""
        self._seed, self._start, self.logged, self._game, self._points = seed, None, 0, None, None
        self.status = self._play(self._games, self._legal, self._config, SCALE, _DEAL, seed, self._obs, self.log, 0)
        return self.status

    def load(self, game: Game) -> int:
        """A copy of the rules-engine hand ``game`` (its record and generator included); returns the status."""
        write_game(self._games[0], self.rules, self._cfg, game)
        record = game.record()
        self._seed, self._start, actions = record["seed"], record.get("start"), record["actions"]
        while len(actions) >= len(self.log):
            self.grow_log()
        self.log[:len(actions)] = actions
        self.logged = len(actions)
        self._game = self._points = None
        self.status = self._play(self._games, self._legal, self._config, SCALE, _REFRESH, 0, self._obs, self.log, 0)
        return self.status

    # ------------------------------------------------------------------ playing
    def step(self, action) -> int:
        """Take ``action`` for the seat to act; returns the new status. Raises :class:`IllegalActionError`
        (the hand unchanged) for an id that is not legal or not an id (:func:`~skipbo_env.encoding.as_action_id`)."""
        if type(action) is not int:
            action = as_action_id(action)
        status = self._play(self._games, self._legal, self._config, SCALE, _STEP,
                            action if 0 <= action < NUM_ACTIONS else ILLEGAL, self._obs, self.log, self.logged)
        if status < 0:
            if status == ILLEGAL:
                raise IllegalActionError(why_illegal(self.game(), action))
            self.grow_log()
            return self.step(action)
        self.logged += 1
        self.status = status
        return status

    def kernel_arguments(self) -> tuple:
        """``(games, legal, config, scale, obs, log)``: the arrays a kernel that plays this hand takes (the batch
        of one, the mask, the rules as :func:`rules_config` reads them, the observation's scales, the
        observations, the log of ids). It writes the ids it takes into ``log`` from ``logged`` on (never past its
        end), must end as :func:`hand_status` does, and its caller reports what it did with :meth:`took`. The
        log is a new array after :meth:`grow_log`, :meth:`load` or unpickling: ask again then."""
        return self._games, self._legal, self._config, SCALE, self._obs, self.log

    def took(self, count: int, status: int) -> int:
        """Record that a kernel took ``count`` legal actions in this hand (written into the log) and the status
        it returned."""
        self.logged += count
        self.status = status
        return status

    def grow_log(self) -> None:
        """Twice the room in the log (a new array: see :meth:`kernel_arguments`)."""
        self.log = np.concatenate([self.log, np.zeros_like(self.log)])

    @property
    def actions_taken(self) -> int:
        """``Game.actions_taken``: how many actions this hand has taken, every seat's."""
        return self.logged

    def observe(self, seat: int) -> dict:
        """``skipbo_env.observe(game, seat)``: the vector as ``seat`` sees it and its mask (new arrays)."""
        if seat == self.status:
            return {"observation": self._to_act.copy(), "action_mask": self._mask.copy()}
        return {"observation": self.encode(seat), "action_mask": np.zeros(NUM_ACTIONS, dtype=np.int8)}

    def seat_to_act(self) -> tuple[np.ndarray, np.ndarray]:
        """The seat to act's vector and mask (int8) while the hand is in play: new arrays (:meth:`encode` and
        :meth:`mask` of ``status``, in one call)."""
        return self._to_act.copy(), self._mask.copy()

    def mask(self, seat: int) -> np.ndarray:
        """``skipbo_env.encoding.action_mask(game, seat)``: int8[145], the legal ids when ``seat`` is to act
        (all zero for any other seat, or ``-1``)."""
        if seat == self.status:
            return self._mask.copy()
        return np.zeros(NUM_ACTIONS, dtype=np.int8)

    def legal(self, seat: int) -> np.ndarray:
        """:meth:`mask` as bool[145] (a new array)."""
        if seat == self.status:
            return self._legal_row.copy()
        return np.zeros(NUM_ACTIONS, dtype=np.bool_)

    def encode(self, seat: int) -> np.ndarray:
        """``encode_observation(game, seat)``: a new float32 vector."""
        if seat == self.status:
            return self._to_act.copy()
        if self.status == NO_HAND:
            raise RuntimeError("no hand has been dealt yet: call reset() first")
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < self.num_players:
            raise ValueError(f"seat={seat!r} is not a seat of this game: use 0 to {self.num_players - 1}")
        self._play(self._games, self._legal, self._config, SCALE, _ENCODE, int(seat), self._obs, self.log, 0)
        return self._obs[1].copy()

    # ------------------------------------------------------------------ the position
    @property
    def dealt(self) -> bool:
        """Whether a hand has been dealt or loaded."""
        return self.status != NO_HAND

    @property
    def is_over(self) -> bool:
        return self.status >= OVER

    @property
    def outcome(self) -> str | None:
        """``Game.outcome``: ``None`` while the hand is in play, then ``"win"``, ``"draw"`` or ``"truncated"``."""
        return OUTCOME_NAMES[self.status - OVER] if self.status >= OVER else None

    @property
    def winners(self) -> tuple[int, ...]:
        """``Game.winners``: the seats of the winning side, ascending (empty unless the hand was won)."""
        if self.status != OVER + WIN:
            return ()
        return tuple(np.flatnonzero(self._games["winners"][0, :self.num_players]).tolist())

    def points(self) -> tuple[int, ...]:
        """``Game.points()``: this hand's points per seat; only the winners score (worked out once per hand)."""
        if self._points is None or self._points[0] != self.status:
            winners = self.winners
            score = np.zeros(1, dtype=np.int64)
            if winners:
                points_of_rows(self._games, self._cfg, np.zeros(1, dtype=np.int64), score)
            points = tuple(int(score[0]) if seat in winners else 0 for seat in range(self.num_players))
            self._points = self.status, points
        return self._points[1]

    def stock_left(self) -> list[int]:
        """``len(game.stocks[seat])`` for every seat: the cards left in the stockpile it plays from."""
        lengths = self._games["stock_len"][0]
        return [int(lengths[pile]) for pile in self._stock_of_seat]

    def to_dict(self) -> dict:
        """``Game.to_dict()``: the position in the state format of RULES.md, its generator included."""
        return record_state(self._games[0], self.rules, self._cfg)

    def game(self) -> Game:
        """The hand as a rules-engine :class:`Game`: the same position, generator and record (seed, deal,
        actions). Built when asked and kept until the next action; stepping it leaves this hand as it is."""
        game = self._game
        if game is None or game.actions_taken != self.logged or game.outcome != self.outcome:
            record = {"seed": self._seed, "actions": self.log[:self.logged].tolist()}
            if self._start is not None:
                record["start"] = self._start
            game = self._game = Game.at_state(self.to_dict(), record)
        return game
