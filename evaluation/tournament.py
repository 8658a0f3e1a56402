"""Tournaments that measure strength honestly: :func:`run_tournament`, the front door of :mod:`evaluation`.

A tournament is a seeded schedule of duplicate deals (:mod:`evaluation.schedule`: who sits
where, with which cards and seeds), played on the rules engine (:mod:`evaluation.python_runner`,
any policy, here, in worker processes, or as Ray tasks: :mod:`evaluation.ray_runner`) or on the
batched engine (:mod:`evaluation.vector_runner`, which also chooses between the two), game for
game the same result. Every game lands in a :class:`~evaluation.results.TournamentResult`, which
draws the figures (win rates with Wilson intervals, pairwise, ratings; :mod:`evaluation.results`);
:mod:`evaluation.report` prints them, plots them and writes them as JSON. ``skipbo evaluate``
(:mod:`skipbo_cli.evaluate`) is the command line.
"""

from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path
from typing import Sequence

from skipbo_env.rules import Rules
from agents.loading import load_policy, short_name
from evaluation.errors import AgentError, EngineError
from evaluation.python_runner import PolicyTable, run_here, run_in_workers
from evaluation.ray_runner import run_on_ray
from evaluation.results import TournamentResult
from evaluation.schedule import schedule, seatings
from evaluation.vector_runner import choose_engine, is_batch_player, run_vector

GAME_FILE = re.compile(r"game-\d{6,}\.json")
"""The name of a saved game's record (``game-000001.json``)."""

__all__ = ["AgentError", "EngineError", "agent_names", "run_tournament"]


def agent_names(agents: Sequence) -> list[str]:
    """Display names: the spec's short name or text (or the policy's ``name``/class), made unique with ``#2``, ``#3``."""
    names = []
    for agent in agents:
        base = short_name(agent) if isinstance(agent, str) else getattr(agent, "name", None) or type(agent).__name__
        name, copy = base, 1
        while name in names:
            copy += 1
            name = f"{base}#{copy}"
        names.append(name)
    return names


def run_tournament(
    agents: Sequence,
    rules: Rules | None = None,
    games: int = 200,
    seed: int = 0,
    *,
    duplicate: bool = True,
    seat_orders: str = "rotations",
    workers: int = 1,
    progress: bool = False,
    save_dir: str | None = None,
    names: Sequence[str] | None = None,
    engine: str = "python",
    ray_address: str | None = None,
    overwrite: bool = False,
) -> TournamentResult:
    """Play a tournament and return every game; importable without torch.

    ``agents`` are policy specs (see ``agents.load_policy``), policy objects, or batch players
    (vector engine only, see :mod:`evaluation.vector_runner`). With ``workers > 1`` games run in
    that many processes (see :func:`evaluation.python_runner.start_method`; policy objects
    must pickle); on the vector engine they are the threads of its deal and step kernels.
    ``seat_orders``: ``"rotations"`` (each lineup in its rotations) or ``"all"`` (in every distinct order of its
    agents: who sits beside whom evens out too; :mod:`evaluation.schedule`). ``engine``: ``"python"`` (the default here: the reference, and the results seeded calls had
    before), ``"vector"`` or ``"auto"`` (see :mod:`evaluation.vector_runner`; ``skipbo evaluate`` defaults to
    ``auto``); :class:`EngineError` when ``vector`` cannot play the agents. An agent
    that raises or returns an illegal action stops the tournament: the result keeps every
    finished game, ``complete`` is false and ``error`` names the agent, seat and game seed.
    A bad spec raises :class:`agents.loading.PolicySpecError` before any game is played.
    ``ray_address`` (``"local"``, ``"auto"`` or ``HOST:PORT``) plays the games as Ray tasks on
    the python engine (:mod:`evaluation.ray_runner`), game for game the same result.
    ``save_dir`` that already holds game files (``game-NNNNNN.json``) is refused (``ValueError``) before any
    game is played, unless ``overwrite``: then those files are removed first, so the folder holds exactly
    this tournament's games.
    """
    rules = rules if rules is not None else Rules()
    names = _checked_names(agents, workers, names)
    policies = [agent if is_batch_player(agent) else load_policy(agent) for agent in agents]  # a bad spec fails here
    check_table_size(policies, rules.num_players)
    engine, engine_reason = _engine_for(engine, names, agents, policies, save_dir, ray_address)
    specs = schedule(len(agents), rules, games, seed, duplicate, seat_orders)
    if save_dir is not None:
        clear_game_files(save_dir, overwrite)
        os.makedirs(save_dir, exist_ok=True)
    result = TournamentResult(
        names=names, specs=[a if isinstance(a, str) else repr(a) for a in agents], rules=rules, seed=seed,
        duplicate=duplicate, games_requested=games, games_scheduled=len(specs),
        seatings=seatings(len(agents), rules, seat_orders), seat_orders=seat_orders, games=[], workers=workers, engine=engine,
        engine_reason=engine_reason,
    )
    start = time.perf_counter()
    bar = progress_bar(len(specs), progress, f"{' vs '.join(names)} ({engine} engine)")
    try:
        _play(specs, names, agents, policies, rules, seed, save_dir, ray_address, result, bar)
    except KeyboardInterrupt:
        result.interrupted = True
    finally:
        bar.close()
        result.elapsed_s = time.perf_counter() - start
    result.games.sort(key=lambda g: g.index)
    return result


def check_table_size(policies: Sequence, num_players: int) -> None:
    """Refuse (``ValueError``, one line) a policy declared for another table size (one with
    ``check_num_players``, as ``agents.neural.NeuralBot``), before any game is played."""
    for policy in policies:
        check = getattr(policy, "check_num_players", None)
        if callable(check):
            check(num_players)


def clear_game_files(folder: str, overwrite: bool) -> None:
    """Refuse (``ValueError``) a folder that holds game files (``game-NNNNNN.json``), or with ``overwrite``
    remove them."""
    found = sorted(path for path in Path(folder).iterdir() if GAME_FILE.fullmatch(path.name)) \
        if os.path.isdir(folder) else []
    if not found:
        return
    if not overwrite:
        raise ValueError(f"the folder {folder!r} already holds {len(found):,} game files ({found[0].name}, ...): "
                         "save into a new or empty folder, or replace them with --overwrite "
                         "(run_tournament(..., overwrite=True))")
    for path in found:
        path.unlink()


def _checked_names(agents: Sequence, workers: int, names: Sequence[str] | None) -> list[str]:
    """The agents' display names; ``ValueError`` for no agents, a bad ``workers`` or bad ``names``."""
    if not agents:
        raise ValueError("a tournament needs at least one agent")
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers={workers!r} is not allowed: use an integer >= 1")
    names = list(names) if names is not None else agent_names(agents)
    if len(names) != len(agents) or len(set(names)) != len(names):
        raise ValueError(f"names={names!r} must give {len(agents)} distinct names, one per agent")
    return names


def _engine_for(engine: str, names, agents, policies, save_dir: str | None,
                ray_address: str | None) -> tuple[str, str]:
    """``(engine, why)`` for the tournament; Ray tasks play on the python engine."""
    if ray_address is None:
        return choose_engine(engine, names, agents, policies, save_dir)
    engine, _ = choose_engine(_ray_engine(engine, save_dir), names, agents, policies, save_dir)
    return engine, f"games as Ray tasks ({ray_address})"


def _play(specs, names, agents, policies, rules: Rules, seed: int, save_dir: str | None, ray_address: str | None,
          result: TournamentResult, bar) -> None:
    """Play ``specs`` with the runner of ``result.engine`` (and ``ray_address``), into ``result``."""
    workers = result.workers
    if result.engine == "vector":
        run_vector(specs, names, agents, policies, rules, workers, seed, result, bar)
    elif ray_address is not None:
        run_on_ray(specs, names, agents, rules, ray_address, workers, result, bar)
    elif workers == 1:
        run_here(specs, PolicyTable(names, agents), rules, save_dir, result, bar)
    else:
        run_in_workers(specs, names, agents, rules, save_dir, workers, result, bar)


def _ray_engine(engine: str, save_dir: str | None) -> str:
    """Ray tasks play on the python engine; ``vector`` or saved game records cannot go with them."""
    if engine == "vector":
        raise EngineError("--ray plays every game on the python engine in Ray tasks: drop --engine vector")
    if save_dir is not None:
        raise EngineError("--ray cannot save game records (each would land on the machine that played it): "
                          "drop --save-games or --ray")
    return "python"


PROGRESS_LINES = 10
"""Progress lines a tournament prints when its progress goes to a file or a pipe, not a terminal."""
PROGRESS_SECONDS = 60.0
"""... or one line at least this often, when the games are slow."""


def progress_bar(total: int, enabled: bool, label: str, stream=None):
    """Progress on ``stream`` (stderr): a labelled tqdm bar in a terminal, else :class:`ProgressLines`."""
    stream = sys.stderr if stream is None else stream
    if enabled and not stream.isatty():
        return ProgressLines(total, label, stream)
    from tqdm import tqdm

    return tqdm(total=total, unit="game", desc=label, disable=not enabled, file=stream, dynamic_ncols=True)


class ProgressLines:
    """Progress as plain lines (for logs and CI): one per tenth of the games, or every minute."""

    def __init__(self, total: int, label: str, stream) -> None:
        self.total, self.label, self.stream = total, label, stream
        self.done = 0
        self.start = self.last_line = time.perf_counter()
        self.step = max(total // PROGRESS_LINES, 1)

    def update(self, count: int = 1) -> None:
        before, self.done = self.done, self.done + count
        now = time.perf_counter()
        if self.done // self.step > before // self.step or now - self.last_line >= PROGRESS_SECONDS:
            self.last_line = now
            print(f"{self.label}: {self.done:,}/{self.total:,} games ({self.done / self.total:.0%}), "
                  f"{now - self.start:.1f} s", file=self.stream, flush=True)

    def close(self) -> None:
        """Nothing to clear: every line is already written."""
