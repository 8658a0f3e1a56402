"""``backend: neural``'s config: its section (``neural``: the network's size, the teacher of generation 0, hands
per generation, the tables, the window of lists fitted, the optimiser, the budget in generations, the evolution,
the curve and the final evaluation) and its checks. It reads ``rules``, ``seed``, ``threads``, ``budget.max_minutes``
(a guard), ``checkpoint.keep`` and ``ray`` of the shared keys (:mod:`training.sections`); its resume state is
:mod:`training.neural.state`, and its trainer refuses a spent budget itself."""

from __future__ import annotations

import dataclasses
from typing import Optional

from agents.neural import MAX_WIDTH
from agents.registry import KERNEL_SPECS
from training.schema import (
    BATCH, GENERATIONS, KEPT, LEARNING_RATE, LOSS_WEIGHT, PASSES, PAST, PLAYED_GAMES, POPULATION, RECORDED_HANDS, SELF,
    TEMPERATURE, Backend, ConfigError, is_kernel_bot, setting,
)
from agents.batched.neural import input_indices
from training.state_checks import MAX_STATE_BYTES
from agents.learned_parameters import NAME as LEARNED, PRETRAINED_WEIGHTS
from agents.spec_names import unaliased
from agents.neural import MAX_MODEL_BYTES, model_path, read_model
from evaluation.schedule import SEAT_ORDERS

TABLE_JOIN = "+"
"""Joins the bots of one table in ``neural.curve_opponents`` (``planner+greedy+greedy``: the other three seats)."""


def table_seats(opponent: str) -> list[str]:
    """The other seats' bots of a ``neural`` curve or final opponent: ``planner`` (one bot, in every other seat in
    turn) or a table, ``planner+greedy+greedy`` (the other seats in turn order)."""
    return opponent.split(TABLE_JOIN)


MAX_TABLES = 64
"""The most tables of ``neural.tables`` (each generation's log names them)."""
MAX_OPPONENTS = 16
"""The most opponents of a curve, the final evaluation or the evolution (each curve point records each one)."""


@dataclasses.dataclass
class NeuralConfig:
    hidden: list[int] = setting([128, 32], "the value network's two hidden layers (ReLU)", min=1,
                                 max=MAX_WIDTH, why_max="the widest layer a model file may hold")
    teacher: str = setting("pretrained-2p", "the learned bot (learned, pretrained-2p, pretrained-4p) that lists and "
                                             "values where each recorded decision's turn could stop, and which discard "
                                             "it would make: what the network is fitted to")
    teacher_games: int = setting(1000, "hands of generation 0: the teacher against itself",
                                   RECORDED_HANDS)
    teacher_epochs: int = setting(8, "passes over generation 0's lists", PASSES)
    list_size: int = setting(16, "stops listed per decision: the teacher's best and a uniform sample of the others",
                              min=2, max=256)
    temperature: float = setting(10.0, "the teacher's values are divided by it before their softmax over a list (a "
                                        "stockpile card is worth 100)", TEMPERATURE)
    games: int = setting(500, "hands of each later generation: the network plays, the teacher lists its decisions",
                          RECORDED_HANDS)
    tables: list[list[str]] = setting(
        [[SELF], [SELF], ["planner"], ["pretrained-2p"]],
        "who sits in the other seats, hand by hand in turn (the network takes every seat in turn): "
        f"{SELF!r} (the current network, its positions recorded too), {PAST!r} (an earlier generation's) or a "
        f"kernel bot ({KERNEL_SPECS}, pretrained-2p, ...)",
        max_items=MAX_TABLES)
    explore: float = setting(0.03, "share of a recorded seat's decisions taken at random (the lists then cover "
                                    "positions its own choices avoid, such as stopping before a stockpile play)",
                              min=0.0, max=1.0)
    window: int = setting(4, "generations of lists the network is fitted to (the latest ones)",
                          GENERATIONS)
    epochs: int = setting(2, "passes over the window's lists per later generation", PASSES)
    batch_size: int = setting(256, "lists per gradient step", BATCH)
    learning_rate: float = setting(1e-3, "Adam's step size (a fresh Adam each generation)", LEARNING_RATE)
    weight_decay: float = setting(0.0, "Adam's weight decay", LOSS_WEIGHT)
    outcome_weight: float = setting(0.0, "weight of the hands' results in the fit: each decision's position is also "
                                          "fitted to the result of its hand for the seat that decided (a Monte-Carlo "
                                          "return, beside the teacher's lists); 0: the lists alone",
                                   LOSS_WEIGHT)
    generations: int = setting(8, "generations after generation 0: the run's budget (work, not time)",
                               GENERATIONS, min=0)
    start: Optional[str] = setting(None, "a neural model the network starts from instead of generation 0's teacher "
                                          "lists (a run's model.json, or a shipped one: neural-2p): later "
                                          "generations and the evolution go on from it")
    es_generations: int = setting(0, "generations of an evolution strategy (sNES) on the network's output layer after "
                                      "the fitted generations: candidates play neural.es_games duplicate games against "
                                      "each of neural.es_opponents, the mean moves toward the winners (0: none)",
                                   GENERATIONS, min=0)
    es_population: int = setting(12, "candidate output layers per sNES generation (even: mirrored pairs)",
                                POPULATION)
    es_games: int = setting(300, "duplicate games of each candidate against each of neural.es_opponents (the same "
                                  "deals for every candidate of a generation, new deals every generation)",
                            PLAYED_GAMES, min=2)
    es_opponents: list[str] = setting(["pretrained-2p", "planner"], "the sNES fitness: the mean win rate against "
                                       "these kernel bots (or tables joined by '+', as curve_opponents)",
                                      max_items=MAX_OPPONENTS)
    es_sigma: float = setting(0.1, "the first spread of each output weight, as a share of their root mean square",
                               min_exclusive=0.0, max=10.0, why_max="a wider search than ten times the weights is "
                               "a random one")
    past_networks: int = setting(5, "earlier generations kept for 'past' seats", KEPT)
    chunk: int = setting(250, "hands per work item (a thread's or a Ray task's share)",
                          RECORDED_HANDS)
    curve_every: int = setting(1, "generations between two points of the learning curve",
                              GENERATIONS)
    curve_games: int = setting(400, "held-out duplicate games against each curve opponent per curve point",
                                PLAYED_GAMES, min=2)
    curve_opponents: list[str] = setting(["greedy", "planner", "pretrained-2p"],
                                          "opponents of the learning curve: kernel bots (one bot takes every other "
                                          "seat in turn), or tables of the other seats' bots joined by '+' "
                                          "(planner+greedy+greedy at four seats)", max_items=MAX_OPPONENTS)
    final_opponents: Optional[list[str]] = setting(None, "opponents of the final evaluation, as curve_opponents "
                                                          "(null: the curve opponents)", max_items=MAX_OPPONENTS)
    final_games: int = setting(4000, "held-out duplicate games against each final opponent at the end",
                                PLAYED_GAMES, min=2)
    seat_orders: str = setting("rotations", "how the curve's and the final evaluation's tables are seated: "
                                             "'rotations' (each in its rotations, the order around the table kept) or "
                                             "'all' (every distinct order: who sits after whom evens out too)")

    @property
    def final_bots(self) -> list[str]:
        """The final evaluation's opponents."""
        return self.curve_opponents if self.final_opponents is None else self.final_opponents



WEIGHT_CHARS = 15
"""The most characters a model file's compact JSON spends on one weight (``-`` and 13 digits of
``agents.neural.MAX_WEIGHT``, and a comma)."""
ENTRY_BYTES = 6144
"""The most characters of a generation's log entry and curve point beside the names they repeat (their numbers at
their widest, and the Ray nodes a generation's hands were played on)."""
STATS_BYTES = 512
"""The most characters of one opponent's stats in a curve point (games, wins, draws, losses, win rate, interval)
beside the names of the other seats."""


def network_weights(hidden: list[int], players: int) -> int:
    """The weights of a value network of layers ``hidden`` at ``players`` seats."""
    first, second = hidden
    return len(input_indices(players)) * first + first + first * second + second + second + 1


def state_bytes(settings, players: int) -> int:
    """The most bytes a checkpoint's ``state.json`` of a run of ``settings`` (the ``neural`` section) may take: the
    archive of ``neural.past_networks`` networks, each weight at its widest, and for every generation (fitted and
    evolved) its log entry and curve point, each naming the tables and opponents; the teacher's reference and the
    final evaluation once more."""
    names = sum(len(name) + 4 for table in settings.tables for name in table)
    opponents = [*settings.curve_opponents, *settings.final_bots]
    point = sum(STATS_BYTES + 3 * (len(name) + 4) for name in opponents)
    es = sum(len(name) + 32 for name in settings.es_opponents)
    generations = settings.generations + settings.es_generations + 2
    archive = network_weights(settings.hidden, players) * WEIGHT_CHARS * settings.past_networks
    return archive + generations * (ENTRY_BYTES + names + es + point) + 2 * point


def check_files_fit(settings, players: int) -> None:
    """Refuse a config whose files a resume could not read back: the model file (``model.json``, at most
    ``agents.neural.MAX_MODEL_BYTES``) and a checkpoint's ``state.json`` (at most
    ``training.state_checks.MAX_STATE_BYTES``, :func:`state_bytes`)."""
    weights = network_weights(settings.hidden, players)
    model, state = weights * WEIGHT_CHARS, state_bytes(settings, players)
    if model > MAX_MODEL_BYTES:
        raise ConfigError(f"neural.hidden={settings.hidden!r} is not allowed at {players} seats: a network of "
                          f"{weights:,} weights takes up to {model / 2**20:.1f} MiB in a model file (at most "
                          f"{MAX_MODEL_BYTES / 2**20:g} MiB): use smaller layers")
    if state > MAX_STATE_BYTES:
        raise ConfigError(f"neural.hidden={settings.hidden!r} with neural.past_networks={settings.past_networks} and "
                          f"{settings.generations} + {settings.es_generations} generations (neural.generations, "
                          f"neural.es_generations) is not allowed at {players} seats: a checkpoint's state.json would "
                          f"take up to {state / 2**20:.1f} MiB (at most {MAX_STATE_BYTES / 2**20:g} MiB): use smaller "
                          "layers, fewer past networks or fewer generations")


def check(config) -> None:
    """A whole config with ``backend: neural``: a network the kernels play, a learned teacher, tables of the table's
    size, a start that fits, mirrored pairs, opponents the batched engine plays."""
    settings, seats = config.neural, config.make_rules().num_players - 1
    if len(settings.hidden) != 2:
        raise ConfigError(f"neural.hidden={settings.hidden!r} is not allowed: give two layer widths from 1 to 1024, "
                          "e.g. [128, 32]")
    check_files_fit(settings, seats + 1)
    teachers = [LEARNED, *PRETRAINED_WEIGHTS]
    if unaliased(settings.teacher) not in teachers:
        raise ConfigError(f"neural.teacher: {settings.teacher!r} is not allowed: use a learned bot "
                          f"({', '.join(teachers)})")
    if not settings.tables:
        raise ConfigError("neural.tables is empty: give at least one table, e.g. [[self]]")
    for index, table in enumerate(settings.tables):
        if len(table) != seats:
            raise ConfigError(f"neural.tables[{index}]={table!r} is not allowed: a table of rules.num_players="
                              f"{seats + 1} lists the {seats} other seat(s)")
        for spec in table:
            if spec not in (SELF, PAST) and not is_kernel_bot(spec):
                raise ConfigError(f"neural.tables[{index}]: {spec!r} is not allowed: use {SELF!r}, {PAST!r} or a "
                                  f"kernel bot ({KERNEL_SPECS}, pretrained-2p, ...)")
    if settings.start is not None:
        try:
            network = read_model(model_path(settings.start))
        except (OSError, ValueError) as error:
            raise ConfigError(f"neural.start: {error}") from None
        if network.num_players != seats + 1 or list(network.hidden) != list(settings.hidden):
            raise ConfigError(f"neural.start {settings.start!r} is a {network.num_players}-seat network of layers "
                              f"{list(network.hidden)}: the run needs {seats + 1} seats and neural.hidden="
                              f"{list(settings.hidden)}")
    if settings.es_population % 2:
        raise ConfigError(f"neural.es_population={settings.es_population} is not allowed: use an even number "
                          "(mirrored pairs)")
    if settings.seat_orders not in SEAT_ORDERS:
        raise ConfigError(f"neural.seat_orders={settings.seat_orders!r} is not allowed: use one of "
                          f"{', '.join(SEAT_ORDERS)}")
    for key in ("curve_opponents", "final_opponents", "es_opponents"):
        specs = getattr(settings, key)
        if specs is None and key == "final_opponents":
            continue
        if not specs:
            raise ConfigError(f"neural.{key} is empty: give at least one kernel bot, e.g. [planner]")
        for spec in specs:
            bots = table_seats(spec)
            if not all(is_kernel_bot(bot) for bot in bots):
                raise ConfigError(f"neural.{key}: {spec!r} is not allowed: use kernel bots ({KERNEL_SPECS}, "
                                  "pretrained-2p, ...), or a table "
                                  f"of the {seats} other seats' bots joined by {TABLE_JOIN!r} (planner+greedy+greedy)")
            if len(bots) > 1 and len(bots) != seats:
                raise ConfigError(f"neural.{key}: the table {spec!r} is not allowed: a table of rules.num_players="
                                  f"{seats + 1} lists the {seats} other seat(s), joined by {TABLE_JOIN!r}")


BACKEND = Backend(
    name="neural", summary="the neural bot's value network by self-play (see the neural section)", section="neural",
    settings=NeuralConfig, check=check, trainer="training.neural.trainer:NeuralTrainer", reads_ray=True)
