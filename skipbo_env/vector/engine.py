"""``VectorGame``: a batch of hands stepped together by the numba kernels, dealt again as they end."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

import numpy as np

from skipbo_env.actions import NUM_ACTIONS, describe_action
from skipbo_env.cards import NUM_BUILDING_PILES, NUM_DISCARD_PILES, NUM_VALUES
from skipbo_env.encoding import OBS_SIZE
from skipbo_env.game import Game, IllegalActionError
from skipbo_env.rules import Rules
from skipbo_env.state_io import STATE_FORMAT
from skipbo_env.vector import kernels, observe, pcg
from skipbo_env.vector.layout import (
    OUTCOME_NAMES,
    PHASE_DRAW,
    PHASE_NAMES,
    PHASE_PLAY,
    RUNNING,
    game_dtype,
    make_config,
)

MAX_SEED = 2**63
MIN_ROWS_PER_THREAD = 256
"""Below this many games per thread a call of the engine's own kernels (a deal, a step: cheap per game) runs
on the calling thread alone."""
SEARCH_ROWS_PER_THREAD = 8
"""The same for a call that searches in every game (a bot's move: hundreds of positions per game)."""


class Finished(NamedTuple):
    """The hands that ended, reported before their rows are dealt again (arrays of equal length).

    ``outcome`` holds codes: 1 win, 2 draw, 3 truncated (``OUTCOME_NAMES[code]`` is the name);
    ``winners[i, seat]`` is True for each seat of the winning side; ``points[i, seat]`` is what
    the seat scored (RULES.md, "Scoring": the winners' points, 0 for everyone else).
    """

    rows: np.ndarray
    seeds: np.ndarray
    outcome: np.ndarray
    winners: np.ndarray
    points: np.ndarray
    turns: np.ndarray
    actions: np.ndarray

    @property
    def num_hands(self) -> int:
        return len(self.rows)


class VectorGame:
    """``batch_size`` hands of Skip-Bo under one set of :class:`Rules`, stepped as one.

    Hand ``i`` of a :meth:`reset` with ``seed=s`` is ``Game.new(rules, seed=s + i)``, and each
    hand that ends is dealt again with the next unused seed (in row order), so every hand the
    batch plays is a rules-engine hand with a known seed: the same deal, dealer and later
    shuffles, state for state (``to_dict(row) == game.to_dict()``).

    Live arrays (read them; change them only through the methods):

    - ``action_mask``: bool ``[batch, 145]``, the legal ids of the seat to act in each game;
    - ``obs``: float32 ``[batch, OBS_SIZE]``, ``encode_observation(game, seat to act)`` of each
      game (``None`` when built with ``observations=False``, e.g. for bot-only tournaments);
    - ``current_seat``: int ``[batch]``; ``seeds``: int64 ``[batch]``; ``games``: the records
      of :mod:`skipbo_env.vector.layout`.

    Example::

        batch = VectorGame(Rules(num_players=3), batch_size=1024, seed=0)
        finished = batch.step(actions)        # one legal id per game
        finished.rows, finished.points        # hands that ended (already dealt again)
    """

    def __init__(self, rules: Rules | None = None, batch_size: int = 1024, seed: int = 0, *,
                 auto_reset: bool = True, observations: bool = True, threads: int | None = None) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise ValueError(f"batch_size={batch_size!r} is not allowed: use an integer >= 1")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads={threads!r} is not allowed: use an integer >= 1, or None for the CPU count")
        self.rules = rules if rules is not None else Rules()
        self.cfg = make_config(self.rules)
        self.batch_size = b = int(batch_size)
        self.auto_reset = auto_reset
        self.games = np.zeros(b, dtype=game_dtype(self.rules.decks))
        self.action_mask = np.zeros((b, NUM_ACTIONS), dtype=np.bool_)
        self.obs = np.zeros((b, OBS_SIZE), dtype=np.float32) if observations else None
        self._no_obs = np.zeros((0, OBS_SIZE), dtype=np.float32)
        self.seeds = np.zeros(b, dtype=np.int64)
        self._next_seed = 0
        self._all_rows = np.arange(b, dtype=np.int64)
        self._illegal = np.zeros(b, dtype=np.bool_)
        self._over = np.zeros(b, dtype=np.int64)  # room for the rows finished() reports
        self._offsets = observe.offsets()
        self.threads = min(threads or os.cpu_count() or 1, max(1, b // SEARCH_ROWS_PER_THREAD))
        self._pool = ThreadPoolExecutor(self.threads) if self.threads > 1 else None
        self.reset(seed)

    @property
    def current_seat(self) -> np.ndarray:
        return self.games["seat"]

    def close(self) -> None:
        """Stop the kernel threads (the batch can still be read, and stepped on one thread)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    @property
    def over(self) -> np.ndarray:
        """bool[batch]: which hands have ended (only without ``auto_reset``, or inside a step)."""
        return self.games["outcome"] != RUNNING

    # ------------------------------------------------------------------ dealing
    def reset(self, seed: int = 0) -> None:
        """Deal every row afresh: row ``i`` gets ``Game.new(rules, seed=seed + i)``."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= seed < MAX_SEED - self.batch_size:
            raise ValueError(f"seed={seed!r} is not allowed: use an integer from 0 to {MAX_SEED - self.batch_size - 1}")
        self._next_seed = int(seed)
        self.deal(self._all_rows)

    def deal(self, rows: np.ndarray, seeds: np.ndarray | None = None) -> None:
        """Deal new hands into ``rows``: the given seeds, or the next unused ones in row order."""
        rows = np.asarray(rows, dtype=np.int64)
        if seeds is None:
            seeds = np.arange(self._next_seed, self._next_seed + len(rows), dtype=np.int64)
            self._next_seed += len(rows)
        seeds = np.asarray(seeds, dtype=np.int64)
        if seeds.shape != rows.shape or (seeds < 0).any():
            raise ValueError(f"seeds must be non-negative integers, one per row; got {seeds!r}")
        self.seeds[rows] = seeds
        self.run_rows(observe.deal_and_observe, rows, (self.games, self.action_mask, self.cfg, self._offsets, observe.SCALE),
                  (seeds,), (self._obs_out(),))

    def _obs_out(self) -> np.ndarray:
        return self.obs if self.obs is not None else self._no_obs

    def finished(self) -> Finished:
        """The hands that are over (their rows are not dealt again)."""
        rows = self._over[:kernels.over_rows(self.games, self._over)].copy()
        count, n = len(rows), self.cfg.num_players
        finished = Finished(rows=rows, seeds=self.seeds[rows], outcome=np.empty(count, dtype=np.int64),
                            winners=np.empty((count, n), dtype=bool), points=np.empty((count, n), dtype=np.int64),
                            turns=np.empty(count, dtype=np.int64), actions=np.empty(count, dtype=np.int64))
        kernels.report_rows(self.games, self.cfg, rows, finished.outcome, finished.winners, finished.points,
                            finished.turns, finished.actions)
        return finished

    def reset_finished(self) -> Finished:
        """Report the hands that are over and deal each of their rows the next seed."""
        finished = self.finished()
        if finished.num_hands:
            self.deal(finished.rows)
        return finished

    # ------------------------------------------------------------------ playing
    def step(self, actions: np.ndarray) -> Finished:
        """Take one action in every game; returns the hands that ended (dealt again if ``auto_reset``).

        ``obs`` and ``action_mask`` then describe the new positions. Raises
        :class:`IllegalActionError` naming the first game whose action is not legal (the other
        games have taken theirs; that game is unchanged).
        """
        actions = np.asarray(actions)
        if actions.shape != (self.batch_size,):
            raise ValueError(f"actions must have shape ({self.batch_size},), one id per game; got {actions.shape}")
        self._step(self._all_rows, actions)
        return self.reset_finished() if self.auto_reset else self.finished()

    def step_rows(self, rows: np.ndarray, actions: np.ndarray) -> None:
        """Take ``actions[i]`` in game ``rows[i]`` only; no report, no reset (see :meth:`reset_finished`)."""
        rows = np.asarray(rows, dtype=np.int64)
        actions = np.asarray(actions)
        if actions.shape != rows.shape:
            raise ValueError(f"rows and actions must have the same shape; got {rows.shape} and {actions.shape}")
        self._step(rows, actions)

    def _step(self, rows: np.ndarray, actions: np.ndarray) -> None:
        if not np.issubdtype(actions.dtype, np.integer):
            bad = actions.ravel()[0] if actions.size else actions
            raise IllegalActionError(f"{bad!r} is not an action id: use integers from 0 to {NUM_ACTIONS - 1}")
        actions = actions.astype(np.int64, copy=False)
        illegal = self._illegal[:len(rows)]
        self.run_rows(observe.step_and_observe, rows, (self.games, self.action_mask, self.cfg, self._offsets, observe.SCALE),
                  (actions, illegal), (self._obs_out(),))
        if illegal.any():
            self._raise_illegal(rows[illegal], actions[illegal])

    def run_rows(self, kernel, rows: np.ndarray, before: tuple, per_row: tuple, after: tuple = (),
             min_rows: int = MIN_ROWS_PER_THREAD) -> None:
        """``kernel(*before, rows, *per_row, *after)``, the rows split among the threads (at least ``min_rows``
        in each part)."""
        self.run_parts(lambda a, b: kernel(*before, rows[a:b], *(array[a:b] for array in per_row), *after),
                       len(rows), min_rows)

    def run_parts(self, function, count: int, min_rows: int = SEARCH_ROWS_PER_THREAD) -> list:
        """``function(a, b)`` for consecutive parts ``[a, b)`` of ``range(count)``, one per kernel thread, each
        of at least ``min_rows`` (one part, on this thread, when there are too few); the results in order. The
        function must be safe to run on several threads at once (a numba kernel without the GIL is)."""
        parts = 1 if self._pool is None else max(1, min(self.threads, count // min_rows))
        if parts == 1:
            return [function(0, count)]
        bounds = np.linspace(0, count, parts + 1).astype(int)
        futures = [self._pool.submit(function, a, b) for a, b in zip(bounds[:-1], bounds[1:])]
        return [future.result() for future in futures]

    def _raise_illegal(self, rows: np.ndarray, actions: np.ndarray) -> None:
        row, action = int(rows[0]), int(actions[0])
        if 0 <= action < NUM_ACTIONS:
            what = f"action {action} ({describe_action(action)})"
        else:
            what = f"{action}, which is not an action id (use 0 to {NUM_ACTIONS - 1}),"
        raise IllegalActionError(
            f"{what} is not legal in game {row} (seed {int(self.seeds[row])}, seat {int(self.games['seat'][row])} "
            f"to act); {len(rows)} game(s) of the batch got an illegal action"
        )

    def observe(self, rows: np.ndarray | None = None, seats: np.ndarray | None = None) -> np.ndarray:
        """float32[len(rows), OBS_SIZE]: ``encode_observation`` of each game in ``rows`` (all by default)
        as ``seats[i]`` sees it (by default the seat to act); a new array."""
        rows = self._all_rows if rows is None else np.asarray(rows, dtype=np.int64)
        seats = np.full(len(rows), -1, dtype=np.int64) if seats is None else np.asarray(seats, dtype=np.int64)
        if seats.shape != rows.shape:
            raise ValueError(f"rows and seats must have the same shape; got {rows.shape} and {seats.shape}")
        out = np.zeros((len(rows), OBS_SIZE), dtype=np.float32)  # absent seats' entries are left as they are
        observe.observe_rows(self.games, self.cfg, self._offsets, observe.SCALE, rows, seats, out)
        return out

    # ------------------------------------------------------------------ conversion
    def to_dict(self, row: int) -> dict:
        """Game ``row`` in the state format of RULES.md, equal to ``Game.to_dict()`` of the same hand."""
        return record_state(self.games[int(row)], self.rules, self.cfg)

    def generator_state(self, row: int) -> dict:
        """The state game ``row``'s generator has, in numpy's ``PCG64().state`` form."""
        return record_generator_state(self.games[int(row)])

    def to_game(self, row: int) -> Game:
        """Game ``row`` as a rules-engine :class:`Game` that goes on with the same shuffles."""
        return Game.from_dict(self.to_dict(row))

    def set_game(self, row: int, game: Game) -> None:
        """Copy a rules-engine hand into ``row``; its later shuffles continue the game's generator."""
        row = int(row)
        write_game(self.games[row], self.rules, self.cfg, game)
        self.seeds[row] = game.seed if game.seed is not None else -1
        rows = np.array([row])
        observe.refresh_rows(self.games, self.action_mask, self.cfg, self._offsets, observe.SCALE, rows, self._obs_out())


def record_generator_state(r) -> dict:
    """The state record ``r``'s generator has, in numpy's ``PCG64().state`` form."""
    return pcg.to_numpy_state(r["rng"], r["rng_has_uint32"], r["rng_uinteger"])


def record_state(r, rules: Rules, cfg) -> dict:
    """The hand in record ``r`` (a row of a batch under ``rules``, ``cfg`` their ``make_config``) in the
    state format of RULES.md, its generator included: ``Game.to_dict()`` of the same hand."""
    seats = []
    for seat in range(cfg.num_players):
        counts = r["hand"][seat]
        hand = [value for value in range(1, NUM_VALUES + 1) for _ in range(int(counts[value]))]
        owns_a_pile = not cfg.shared_stock or rules.team_of(seat) == seat
        start = seat * cfg.stock_size
        stock = r["stock"][start:start + r["stock_len"][seat]].tolist() if owns_a_pile else []
        discards = [r["discard"][seat, slot, :r["discard_len"][seat, slot]].tolist() for slot in range(NUM_DISCARD_PILES)]
        seats.append({"hand": hand, "stock": stock, "discards": discards})
    state = {
        "format": STATE_FORMAT,
        "rules": rules.to_dict(),
        "seats": seats,
        "building": [r["building"][slot, :r["building_len"][slot]].tolist() for slot in range(NUM_BUILDING_PILES)],
        "completed": r["completed"][:r["completed_len"]].tolist(),
        "draw_pile": r["draw"][:r["draw_len"]].tolist(),
        "current_seat": int(r["seat"]),
        "phase": PHASE_NAMES[r["phase"]],
        "dealer": int(r["dealer"]),
        "turn": int(r["turn"]),
        "plays_this_turn": int(r["plays"]),
        "quiet_turns": int(r["quiet"]),
        "rng": record_generator_state(r),
    }
    if r["outcome"] != RUNNING:
        state["outcome"] = OUTCOME_NAMES[r["outcome"]]
        state["winners"] = np.flatnonzero(r["winners"][:cfg.num_players]).tolist()
    return state


def write_game(r, rules: Rules, cfg, game: Game) -> None:
    """Copy a rules-engine hand into record ``r`` (its mask and observation are not computed here)."""
    if game.rules != rules:
        raise ValueError(f"the game's rules {game.rules} differ from the batch's rules {rules}")
    state = game.to_dict()
    r["hand"] = 0
    r["stock_len"] = 0
    public = np.zeros(NUM_VALUES + 1, dtype=np.int64)
    for seat, seat_state in enumerate(state["seats"]):
        r["hand"][seat] = np.bincount(seat_state["hand"], minlength=NUM_VALUES + 1)
        r["hand_size"][seat] = len(seat_state["hand"])
        if not cfg.shared_stock or rules.team_of(seat) == seat:
            stock = seat_state["stock"]
            r["stock"][seat * cfg.stock_size:seat * cfg.stock_size + len(stock)] = stock
            r["stock_len"][seat] = len(stock)
        for slot, pile in enumerate(seat_state["discards"]):
            r["discard"][seat, slot, :len(pile)] = pile
            r["discard_len"][seat, slot] = len(pile)
            public += np.bincount(pile, minlength=NUM_VALUES + 1)
    for slot, pile in enumerate(state["building"]):
        r["building"][slot, :len(pile)] = pile
        r["building_len"][slot] = len(pile)
        public += np.bincount(pile, minlength=NUM_VALUES + 1)
    for name, pile in (("completed", state["completed"]), ("draw", state["draw_pile"])):
        r[name][:len(pile)] = pile
        r[f"{name}_len"] = len(pile)
    public += np.bincount(state["completed"], minlength=NUM_VALUES + 1)
    r["public"] = public
    for field, key in (("seat", "current_seat"), ("dealer", "dealer"), ("turn", "turn"),
                       ("plays", "plays_this_turn"), ("quiet", "quiet_turns")):
        r[field] = state[key]
    r["phase"] = PHASE_DRAW if state["phase"] == "draw" else PHASE_PLAY
    r["outcome"] = OUTCOME_NAMES.index(state.get("outcome"))
    r["winners"] = 0
    r["winners"][state.get("winners", [])] = 1
    r["actions"] = game.actions_taken
    r["rng"] = pcg.from_numpy_state(state["rng"])
    r["rng_has_uint32"] = state["rng"]["has_uint32"]
    r["rng_uinteger"] = state["rng"]["uinteger"]
