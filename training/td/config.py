"""``backend: td``'s config: its section (``td``: the network's size, the start, hands per iteration, λ, exploring,
the optimiser, who sits in the other seats and the pool of past networks, the budget in hands, how often the state is saved and the curve
measured, the curve's and the final evaluation's games and opponents) and its checks. It reads ``rules``, ``seed``,
``threads``, ``ray`` (the parts of ``chunk`` as Ray tasks) and ``checkpoint.keep`` of the shared keys
(:mod:`training.sections`); its resume state is :mod:`training.td.state`, and its trainer refuses a spent budget
itself."""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

from agents.neural import MAX_WIDTH
from agents.registry import KERNEL_SPECS
from agents.residual import MAX_SEARCH_TOP
from skipbo_env.rules import Rules
from training.schema import (
    KEPT, LEARNING_RATE, PLAYED_GAMES, SELF, SNAPSHOTS, Backend, ConfigError, is_kernel_bot, setting,
)
from agents.batched.neural import input_indices
from training.neural.config import WEIGHT_CHARS
from agents.learned_parameters import NUM_FEATURES
from agents.neural import MAX_MODEL_BYTES

HANDS = dict(min=1, max=10**10)
"""Bounds of a count of hands: at least one; at most ten billion (centuries of CPU at today's speed)."""
MAX_STOCK = 50
"""The largest stockpile a learner's hand may have (the rules engine's own limit for one deck is larger; a 50-card
stockpile already leaves few cards to draw at two seats)."""
MAX_LEARNER_BYTES = 64 * 2**20
"""The largest checkpoint ``learner.npz`` a resume reads back (:mod:`training.td.state`)."""
NETWORK_ARRAYS_ROOM = 16 * 2**10
"""What the config check keeps in ``learner.npz`` beside one copy of the network's floats (the weights, a snapshot's,
each of Adam's moments): its arrays' headers in the ``.npz``, about 275 bytes each for 13 arrays at the teacher
start, and Adam's step counts. Torch's generator (5 KB) fits in the same room once more."""


@dataclasses.dataclass
class TDConfig:
    hidden: list[int] = setting([128, 32], "the value network's two hidden layers (ReLU), the neural bot's format",
                                min=1, max=MAX_WIDTH, why_max="the widest layer a model file may hold")
    start: Literal["scratch", "teacher"] = setting(
        "scratch", "scratch: random weights and the observation encoding only (no teacher, no hand-made features); "
                   "teacher (two players): pretrained-2p's value a * v + b plus a correction r(inputs, its 16 "
                   "features) whose last layer starts at zero, so the first moves are pretrained-2p's")
    turn_baseline: bool = setting(False, "scratch: value a position as f(position) - f(turn start) + a baseline "
                                         "of the turn start, so the network the search ranks by learns what a "
                                         "turn changed, the baseline who is ahead (the teacher start always does)")
    search_top: int = setting(0, "teacher: the correction ranks only the teacher's best stops of a decision by its "
                                 "value, this many (the rest are not chosen; the correction is trusted only "
                                 "near the teacher's own choice); 0: every stop", min=0, max=MAX_SEARCH_TOP)
    rank_share: float = setting(0.0, "teacher, with td.search_top: the share of the learner's decisions whose move "
                                     "is drawn uniformly among the kept stops; the correction then learns from "
                                     "those draws alone (how the result differs with the stop drawn), not from "
                                     "the regression on the stops played", min=0.0, max=1.0)
    drawn_lam: float = setting(1.0, "teacher, with td.rank_share: λ of a drawn move's target, the λ-return of the "
                                    "first position its seat reaches after it: 1 the hand's result, below 1 more "
                                    "of the network's values of the positions that follow (less of the rest of "
                                    "the hand's luck)", min=0.0, max=1.0)
    correction_bound: float = setting(0.0, "teacher: the most the correction may add to or take from the teacher's "
                                           "value of a position, in the teacher's units (r enters as B tanh(r / B)): "
                                           "the search then differs from the teacher only among stops whose values "
                                           "are within 2 B; 0: no bound", min=0.0, max=1e6)
    hands: int = setting(64, "hands played per iteration (one batch of the engine), then fitted", min=1, max=4096)
    chunk: int = setting(0, "hands of a part of an iteration: the parts are played at once on `threads` threads, "
                            "or as Ray tasks with ray.address (each draws from its own generator seeded from the "
                            "run's, so the hands and weights are the same wherever they are played); 0: the "
                            "iteration in one part, the engine's kernels splitting its searches among the threads",
                     min=0, max=4096)
    lam: float = setting(1.0, "λ of the returns: 1 the hand's result (Monte Carlo), 0 the network's value of the "
                              "next position", min=0.0, max=1.0)
    explore: float = setting(0.02, "share of the learner's decisions taken uniformly at random", min=0.0, max=1.0)
    learning_rate: float = setting(1e-3, "Adam's step size (one Adam for the whole run, saved with it)",
                                   LEARNING_RATE)
    learning_rate_after: dict[int, float] = setting(
        {}, "a step schedule: Adam's step from that many hands played on, e.g. {512000: 1.0e-4} "
            "(td.learning_rate before the first)")
    epochs: int = setting(1, "passes over an iteration's positions", min=1, max=100)
    minibatch: int = setting(1024, "positions per gradient step", min=1, max=1_000_000)
    opponents: dict[str, float] = setting(
        {SELF: 1.0}, f"share of each iteration's hands by who sits in the other seats: {SELF!r} (the network in "
                     f"every seat, every seat learned from), {SNAPSHOTS!r} (a past copy of the network drawn from "
                     f"the pool; played as self while the pool is empty) or a kernel bot ({KERNEL_SPECS}, "
                     "pretrained-2p, ...); against a snapshot or a bot the network sits in one seat, in turn, the "
                     "only one learned from", min=0.0, max=1.0)
    snapshot_every: int = setting(8192, f"hands between two snapshots: a copy of the network's float weights joins "
                                        f"the pool that td.opponents' {SNAPSHOTS!r} share plays against", **HANDS)
    max_snapshots: int = setting(8, "snapshots the pool keeps, the newest (each is saved with the run's state: "
                                    "about 190 kB for a 128x32 network at two seats)", KEPT)
    stock_sizes: list[int] = setting([], "stockpile sizes of the learner's hands, iteration by iteration in turn "
                                         "(a curriculum: short stockpiles end in a win more often, so their results "
                                         "teach from the first hands); empty: the rules' stock_size. The curve and "
                                         "the final evaluation play the rules' size", min=1, max=MAX_STOCK)
    budget_hands: int = setting(1_000_000, "hands to train for: the run's budget (work, not time); a --resume with "
                                           "a larger one trains on", **HANDS)
    checkpoint_every: int = setting(2048, "hands between two saves of the run's state", **HANDS)
    curve_every: int = setting(4096, "hands between two points of the learning curve", **HANDS)
    curve_games: int = setting(200, "held-out duplicate games against each curve opponent per point", PLAYED_GAMES,
                               min=2)
    curve_opponents: list[str] = setting(["greedy", "planner", "pretrained-2p"],
                                         "the learning curve's opponents (kernel bots)")
    final_games: int = setting(4000, "held-out duplicate games against each curve opponent at the end of the budget",
                               PLAYED_GAMES, min=2)


def file_sizes(hidden: list[int], players: int, snapshots: int, start: str = "scratch",
               turn_baseline: bool = False) -> tuple[int, int]:
    """Bounds of the bytes of a network's model file (each weight at its widest) and of a checkpoint's
    ``learner.npz`` (the weights, a turn baseline's among them, Adam's two moments and ``snapshots`` past copies of
    the weights, float32, with :data:`NETWORK_ARRAYS_ROOM` a copy for the headers)."""
    from training.td.turn_change import BASELINE_HIDDEN

    first, second = hidden
    rows = len(input_indices(players)) + (NUM_FEATURES if start == "teacher" else 0)  # the residual reads features
    weights = rows * first + first + first * second + second + second + 1 + (3 if start == "teacher" else 0)
    baseline = (rows + 2) * BASELINE_HIDDEN + 1 if start == "teacher" or turn_baseline else 0
    copies = 3 + snapshots  # the weights, Adam's two moments, the snapshots
    return weights * WEIGHT_CHARS, (weights + baseline) * 4 * copies + NETWORK_ARRAYS_ROOM * (copies + 1)


def check_files_fit(hidden: list[int], players: int, snapshots: int, start: str = "scratch",
                    turn_baseline: bool = False) -> None:
    """Refuse layers whose files (:func:`file_sizes`) a resume could not read back: the model file at most
    ``agents.neural.MAX_MODEL_BYTES``, a checkpoint's ``learner.npz`` at most :data:`MAX_LEARNER_BYTES`."""
    model, learner = file_sizes(hidden, players, snapshots, start, turn_baseline)
    if model > MAX_MODEL_BYTES or learner > MAX_LEARNER_BYTES:
        raise ConfigError(f"td.hidden={hidden!r} is not allowed at {players} seats: its model file takes up to "
                          f"{model / 2**20:.1f} MiB (at most {MAX_MODEL_BYTES / 2**20:g} MiB) and a checkpoint "
                          f"{learner / 2**20:.1f} MiB (at most {MAX_LEARNER_BYTES / 2**20:g} MiB, with "
                          f"td.max_snapshots={snapshots}): use smaller layers or fewer snapshots")


def check(config) -> None:
    """A whole config with ``backend: td``: a network the kernels play, opponents the batched engine plays,
    shares that add up."""
    settings = config.td
    if len(settings.hidden) != 2 or not all(1 <= width <= 1024 for width in settings.hidden):
        raise ConfigError(f"td.hidden={settings.hidden!r} is not allowed: give two layer widths from 1 to 1024, "
                          "e.g. [128, 32]")
    players = config.make_rules().num_players
    if settings.start == "teacher" and players != 2:
        raise ConfigError(f"td.start=teacher is not allowed at {players} seats: its teacher, pretrained-2p, plays two "
                          "players; use rules.num_players: 2 or td.start: scratch")
    if settings.search_top and settings.start != "teacher":
        raise ConfigError(f"td.search_top={settings.search_top} is not allowed with td.start={settings.start}: it "
                          "names the teacher's best stops; use td.start: teacher or td.search_top: 0")
    if settings.rank_share and not (settings.start == "teacher" and settings.search_top):
        raise ConfigError(f"td.rank_share={settings.rank_share} is not allowed without td.start: teacher and "
                          "td.search_top > 0: its moves are drawn among the teacher's kept stops")
    if settings.drawn_lam != 1.0 and not settings.rank_share:
        raise ConfigError(f"td.drawn_lam={settings.drawn_lam} is not allowed without td.rank_share > 0: it is the "
                          "target of the drawn moves; use td.rank_share or leave td.drawn_lam at 1")
    if settings.correction_bound and settings.start != "teacher":
        raise ConfigError(f"td.correction_bound={settings.correction_bound} is not allowed with "
                          f"td.start={settings.start}: it bounds the teacher start's correction; use td.start: "
                          "teacher or td.correction_bound: 0")
    check_files_fit(settings.hidden, players, settings.max_snapshots, settings.start, settings.turn_baseline)
    if config.ray.address is not None and not 0 < settings.chunk < settings.hands:
        raise ConfigError(f"ray.address={config.ray.address!r} plays the parts of an iteration (td.chunk hands each) "
                          f"as Ray tasks, but td.chunk={settings.chunk} makes one part of td.hands={settings.hands}: "
                          f"set td.chunk from 1 to {settings.hands - 1} (e.g. {max(1, settings.hands // 4)}), or "
                          "drop ray.address")
    for hands, rate in settings.learning_rate_after.items():
        if not (HANDS["min"] <= hands <= HANDS["max"] and 0.0 < rate <= LEARNING_RATE.max):
            raise ConfigError(f"td.learning_rate_after: {hands!r}: {rate!r} is not allowed: give hands from "
                              f"{HANDS['min']} to {HANDS['max']:,} and a step size > 0 and <= {LEARNING_RATE.max:g}, "
                              "e.g. {512000: 1.0e-4}")
    for size in settings.stock_sizes:  # each from 1 to MAX_STOCK (its setting's bounds); the rules judge the rest
        try:
            Rules(**{**config.make_rules().to_dict(), "stock_size": size})
        except ValueError as error:
            raise ConfigError(f"td.stock_sizes: {size!r} is not allowed: {error}") from None
    if not all(math.isfinite(share) and share >= 0 for share in settings.opponents.values()):  # NaN passes `< 0`
        raise ConfigError(f"td.opponents={settings.opponents!r} is not allowed: every share must be a finite "
                          "number >= 0")
    if not settings.opponents or abs(sum(settings.opponents.values()) - 1.0) > 1e-6:
        raise ConfigError(f"td.opponents={settings.opponents!r} is not allowed: give shares that add up to 1, "
                          f"e.g. {{{SELF}: 0.8, pretrained-2p: 0.2}}")
    for spec in settings.opponents:
        if spec not in (SELF, SNAPSHOTS) and not is_kernel_bot(spec):
            raise ConfigError(f"td.opponents: {spec!r} is not allowed: use {SELF!r}, {SNAPSHOTS!r} or a kernel bot "
                              f"({KERNEL_SPECS}, pretrained-2p, ...)")
    if not settings.curve_opponents:
        raise ConfigError("td.curve_opponents is empty: give at least one kernel bot, e.g. [planner]")
    for spec in settings.curve_opponents:
        if not is_kernel_bot(spec):
            raise ConfigError(f"td.curve_opponents: {spec!r} is not allowed: use kernel bots ({KERNEL_SPECS}, "
                              "pretrained-2p, ...)")


BACKEND = Backend(name="td", summary="the neural bot's value network by TD(λ) from self-play results (see the td "
                                     "section)", section="td", settings=TDConfig, check=check,
                  trainer="training.td.trainer:TDTrainer", reads_ray=True)
