"""``backend: snes``'s config: its section (``snes``: population, deals, the tables of the pool and of the curve)
and its checks. It reads ``rules``, ``seed``, ``budget.max_minutes``, ``checkpoint.keep`` and ``ray`` of the
shared keys (:mod:`training.sections`); its resume state is checked by its trainer (:mod:`training.snes.trainer`,
``STATE_FIELDS``), which refuses a spent budget itself."""

from __future__ import annotations

import dataclasses
from typing import Optional

from agents.registry import KERNEL_SPECS
from training.schema import (
    GENERATIONS, PAST, PLAYED_GAMES, POPULATION, SELF, SPREAD, Backend, ConfigError, is_kernel_bot, setting,
)
from training.state_checks import MAX_STATE_BYTES
from agents.learned_parameters import NUM_PARAMETERS, read_parameters


@dataclasses.dataclass
class SNESConfig:
    population: int = setting(16, "candidate weight vectors per generation (even: mirrored pairs)",
                              POPULATION)
    deals: int = setting(32, "duplicate deals each candidate plays at each table of snes.tables, once in every "
                              "seat", PLAYED_GAMES)
    sigma: float = setting(0.5, "initial spread of every free weight (stock_cards is the unit, held at 1)",
                            SPREAD)
    start: Optional[str] = setting(None, "a learned weights file (JSON, e.g. agents/pretrained/learned-2p.json) "
                                          "the search starts from; null: stock_cards 1, every other weight 0")
    tables: list[list[str]] = setting(
        [["greedy"], ["planner"], [SELF], [PAST]],
        "the pool: each table lists who sits in the other seats (rules.num_players - 1 of them): a kernel bot "
        f"({KERNEL_SPECS}), {SELF!r} (the current mean) or "
        f"{PAST!r} (an earlier generation's mean); fitness is the mean win rate over the tables")
    curve_every: int = setting(5, "generations between two points of the training curve",
                               GENERATIONS)
    curve_deals: int = setting(200, "held-out duplicate deals of each curve point, per curve table",
                                  PLAYED_GAMES)
    curve_tables: list[list[str]] = setting([["planner"], ["greedy"]], "the tables of the training curve and the "
                                                                         "final evaluation (kernel bots only)")
    final_deals: int = setting(1000, "held-out duplicate deals of the final evaluation, per curve table (each "
                                      "played once in every seat)", PLAYED_GAMES)
    generations: Optional[int] = setting(None, "stop once the run has this many generations (null: when "
                                                "budget.max_minutes is spent, or at the most generations allowed)",
                                          GENERATIONS)



WEIGHT_CHARS = 25
"""The most characters compact JSON spends on one float of a mean or spread (``repr`` of a float64, a comma)."""
ENTRY_BYTES = 2048
"""The most characters of a generation's log entry beside its tables' names (fitness at their widest, the Ray nodes
its games were played on)."""
POINT_BYTES = 256
"""The most characters of a curve point beside its tables' stats (the generation, the games, the clock)."""
TABLE_STATS_BYTES = 512
"""The most characters of one curve table's stats (games, wins, draws, losses, win rate, interval) beside the names
of its seats (each other seat's win rate is listed under its name)."""


def generation_limit(settings) -> int:
    """The generations a run of ``settings`` (the ``snes`` section) stops at: ``snes.generations``, or when only
    ``budget.max_minutes`` is set, the most the schema allows (each generation grows ``state.json``)."""
    return GENERATIONS.max if settings.generations is None else settings.generations


def state_bytes(settings) -> int:
    """The most bytes a checkpoint's ``state.json`` of a run of ``settings`` may take: the archive of every
    generation's mean (and the mean and spread), each generation's log entry, a curve point every
    ``snes.curve_every`` generations (and one at each end) and the final evaluation."""
    generations = int(generation_limit(settings))
    names = sum(len(table_name) + 40 for table_name in map("+".join, settings.tables))
    point = POINT_BYTES + sum(TABLE_STATS_BYTES + 2 * len("+".join(table)) + sum(len(spec) + 40 for spec in table)
                              for table in settings.curve_tables)
    means = (generations + 3) * NUM_PARAMETERS * WEIGHT_CHARS
    return means + generations * (ENTRY_BYTES + names) + (generations // settings.curve_every + 3) * point


def check_state_fits(settings) -> None:
    """Refuse a config whose checkpoints' ``state.json`` a resume could not read back (at most
    ``training.state_checks.MAX_STATE_BYTES``, :func:`state_bytes`)."""
    state = state_bytes(settings)
    if state > MAX_STATE_BYTES:
        generations = "the most generations allowed" if settings.generations is None else \
            f"snes.generations={settings.generations}"
        raise ConfigError(f"snes.tables and snes.curve_tables ({len(settings.tables)} and {len(settings.curve_tables)}"
                          f" tables) with snes.curve_every={settings.curve_every} and {generations} are not allowed: "
                          f"a checkpoint's state.json would take up to {state / 2**20:.1f} MiB (at most "
                          f"{MAX_STATE_BYTES / 2**20:g} MiB): use fewer tables, fewer generations or a larger "
                          "snes.curve_every")


def check(config) -> None:
    """A whole config with ``backend: snes``: mirrored pairs, a budget, a readable start, tables of the table's
    size whose seats it can play."""
    settings, seats = config.snes, config.make_rules().num_players - 1
    if settings.population % 2:
        raise ConfigError(f"snes.population={settings.population} is not allowed: use an even number (mirrored pairs)")
    if config.budget.max_minutes is None and settings.generations is None:
        raise ConfigError("backend: snes needs budget.max_minutes or snes.generations: give one, e.g. "
                          "budget.max_minutes=60")
    if settings.start is not None:
        try:
            read_parameters(settings.start)
        except ValueError as error:
            raise ConfigError(f"snes.start: {error}") from None
    for key, tables, allowed in (("snes.tables", settings.tables, (SELF, PAST)), ("snes.curve_tables",
                                                                                  settings.curve_tables, ())):
        if not tables:
            raise ConfigError(f"{key} is empty: give at least one table, e.g. [[planner]]")
        for index, table in enumerate(tables):
            if len(table) != seats:
                raise ConfigError(f"{key}[{index}]={table!r} is not allowed: a table of rules.num_players="
                                  f"{seats + 1} lists the {seats} other seat(s)")
            for spec in table:
                if spec not in allowed and not is_kernel_bot(spec):
                    extra = f", {SELF!r} or {PAST!r}" if allowed else ""
                    raise ConfigError(f"{key}[{index}]: {spec!r} is not allowed: use a kernel bot "
                                      f"({KERNEL_SPECS}){extra}")
    check_state_fits(settings)




BACKEND = Backend(
    name="snes", summary="the learned bot's weights by an evolution strategy (see the snes section)", section="snes",
    settings=SNESConfig, check=check, trainer="training.snes.trainer:SNESTrainer", reads_ray=True)
