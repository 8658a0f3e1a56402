"""``td.start: teacher``'s model in PyTorch: the teacher's value plus a correction that starts at zero.

A recorded position is one float64 row: the *stop block* of the position (the neural bot's integer inputs, then the
teacher's features as integers, ``agents.batched.residual.FEATURE_UNIT``), the teacher's value ``v`` of the stop
and the score ``s`` of the discard made from it (0 at a stop), then the stop block of the turn's start (the root of
the seat's first decision of the turn). Its logit is

    a * v + b + a_d * s + c * (r(position) - r(turn start)) + baseline(turn start)

``r`` a two-layer ReLU network like the neural bot's whose output layer starts at zero (with a bound ``B`` > 0,
``td.correction_bound``, its output ``o`` enters as ``B tanh(o / B)``), ``baseline`` another, ``a = exp(log_a)``,
``a_d = exp(log_a_discard)`` and ``c = a * CORRECTION_UNIT`` (so all stay > 0). The kernels
(:mod:`agents.batched.residual`) rank a decision's stops by ``v + r * CORRECTION_UNIT`` (the logit over ``a``,
less what the stops share: all of a decision's stops have one turn start). :func:`kernel_model` rounds the model to
what the kernels play.

**Why the turn start, and why a fixed unit.** The teacher's ``v`` ranks the stops of one decision, but its whole
spread is worth little of the result (:data:`INITIAL_SCALE`): choosing well means telling apart stops a few
hundredths of a logit apart, while what a hand's result mostly says is who is ahead. A correction free to fit that
outweighs the teacher in the search: the first teacher-start run's ``r / a`` did, and its play collapsed within
8,192 hands; a second model, ``c * r(position)`` with a baseline of the opponents' side, lost less but still fell
to 15% against ``pretrained-2p`` at 8,192 hands, its ``r`` spreading twice as wide as ``v`` in the search's units.
So who is ahead when the turn starts is the baseline's, a network the search never reads, and ``r`` enters only
as the change from the turn's start to the position: it learns what the turn's plays and discard did to the
result, which is what the search compares. And a unit of ``r`` is worth a fixed amount of the teacher's units,
however the calibration moves, so its weight in the search grows only as its weights do, at Adam's step.

**Why a bound.** Every teacher-start run whose correction spread past about one of the teacher's units in the
search lost play, whatever fitted it and at whatever step (docs/research-log.md). With ``td.correction_bound`` ``B``
(the teacher's units) a position's correction stays within ``±B``, so the search's choice can differ from the
teacher's only among stops whose values are within ``2 B`` of each other: a wrong correction reorders near-ties
and no more.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from agents.batched.neural import INPUT_SCALE, input_indices
from agents.batched.residual import FEATURE_UNIT, candidate_rows, drawn_actions, turn_records, turn_start_rows
from agents.learned_parameters import NUM_FEATURES
from agents.neural import Network
from agents.residual import ResidualBot, residual_dict
from training.neural.value_net import quantize
from training.td.turn_change import turn_baseline

INITIAL_SCALE = 0.0003
"""The first ``a``: the logistic regression of the hands' results on the teacher's value ``v`` of the stops the
seats discarded from (64 self-play hands of the teacher at 30 cards, 6,135 stops, seed 2) gave ``a`` = 0.00026 a
unit and ``b`` = 0.02 (a loss of 0.6930 nats against 0.6931 for ``a`` = 0): ``v`` values the turn's plays from
where the turn began, not the position, so across positions it says little of who wins; it ranks a decision's
stops."""
INITIAL_DISCARD_SCALE = 0.01
"""The first ``a_d``: the teacher's discard scores of the turn ends it chose spread with a standard deviation of
1.0 (5-95%: 1.3 to 4.4, the same hands); its discard is worth little more than another (+0.004 of the win rate,
issue 38), so a unit of score starts at a hundredth of a logit."""
CORRECTION_UNIT = 10.0
"""What a unit of ``r`` is worth in the teacher's units (``c / a``): a tenth of the spread of ``v`` over the stops
seats discard from (standard deviation 116 in 32 self-play hands of the teacher at 30 cards, seed 0)."""
CALIBRATION_PARAMETERS = ("log_a", "b", "log_a_discard")
"""The model's numbers outside ``r`` and the baseline (fitted, with the baseline, at a step size of their own:
neither changes the play; ``training.td.learner``)."""


class ResidualNet(nn.Module):
    """The residual model of a ``num_players`` table, ``r``'s hidden layers ``hidden``, played with ``r`` ranking the
    teacher's ``search_top`` best stops of a decision (0: every stop; ``agents.batched.residual``); a position's
    correction within ``±correction_bound`` of the teacher's units (0: no bound)."""

    def __init__(self, num_players: int, hidden: tuple[int, int], search_top: int = 0,
                 correction_bound: float = 0.0) -> None:
        super().__init__()
        self.num_players, self.search_top = num_players, search_top
        self.bound = correction_bound / CORRECTION_UNIT
        """The bound of ``r`` in its own units (0: none)."""
        self.inputs = input_indices(num_players)
        self.first_scale = np.concatenate([INPUT_SCALE[self.inputs], np.full(NUM_FEATURES, 1.0 / FEATURE_UNIT)])
        """What one integer step of each first-layer row is worth (the inputs', then the features')."""
        self.block = len(self.first_scale)
        """The width of a stop block (inputs, then features)."""
        self.row_width = 2 * self.block + 2
        self.register_buffer("scale", torch.as_tensor(self.first_scale, dtype=torch.float32), persistent=False)
        self.baseline = turn_baseline(self.block)
        self.first = nn.Linear(len(self.first_scale), hidden[0])
        self.second = nn.Linear(hidden[0], hidden[1])
        self.output = nn.Linear(hidden[1], 1)
        nn.init.zeros_(self.output.weight)
        nn.init.zeros_(self.output.bias)
        self.log_a = nn.Parameter(torch.tensor(math.log(INITIAL_SCALE)))
        self.b = nn.Parameter(torch.tensor(0.0))
        self.log_a_discard = nn.Parameter(torch.tensor(math.log(INITIAL_DISCARD_SCALE)))

    def correction(self, blocks: torch.Tensor) -> torch.Tensor:
        """``r`` of stop blocks (inputs then features, as integers)."""
        x = blocks.to(torch.float32) * self.scale
        x = torch.relu(self.first(x))
        x = torch.relu(self.second(x))
        r = self.output(x).squeeze(-1)
        return self.bound * torch.tanh(r / self.bound) if self.bound > 0 else r

    def turn_start_value(self, rows: torch.Tensor) -> torch.Tensor:
        """The baseline of recorded positions: a network of their turn start's stop block."""
        return self.baseline(self.turn_starts(rows).to(torch.float32) * self.scale).squeeze(-1)

    def turn_starts(self, rows: torch.Tensor) -> torch.Tensor:
        """The stop blocks of recorded positions' turn starts."""
        return rows[:, self.block + 2:]

    def forward(self, rows: torch.Tensor, fit_correction: bool = True) -> torch.Tensor:
        """The logits of recorded positions (float64 rows: the stop block, ``v``, ``s``, the turn start's block);
        ``fit_correction`` False: ``r`` as a constant (no gradient reaches it)."""
        values, scores = rows[:, self.block].to(torch.float32), rows[:, self.block + 1].to(torch.float32)
        a = self.log_a.exp()
        change = self.correction(rows[:, :self.block]) - self.correction(self.turn_starts(rows))
        if not fit_correction:
            change = change.detach()
        return (a * values + self.b + self.log_a_discard.exp() * scores + a * CORRECTION_UNIT * change
                + self.turn_start_value(rows))

    def drawn_logits(self, decisions) -> torch.Tensor:
        """The logits of decisions whose stop was drawn among those kept (``training.td.learner.DrawnDecision``):
        each the model's logit of the stop drawn, whose gradient flows only through ``c (r(drawn) - mean r(kept))``
        (to ``r``; ``c`` held fixed)."""
        rows = torch.as_tensor(np.stack([np.concatenate([d.blocks[d.pick], [d.values[d.pick], 0.0], d.turn_start])
                                         for d in decisions]))
        kept = torch.as_tensor(np.concatenate([d.blocks for d in decisions]))
        owners = torch.as_tensor(np.repeat(np.arange(len(decisions)), [len(d.blocks) for d in decisions]))
        counts = torch.as_tensor([float(len(d.blocks)) for d in decisions])
        mean = torch.zeros(len(decisions)).index_add(0, owners, self.correction(kept)) / counts
        drawn = self.correction(rows[:, :self.block])
        centred = self.log_a.exp().detach() * CORRECTION_UNIT * (drawn - mean)
        with torch.no_grad():
            logits = self(rows)
        return logits + centred - centred.detach()

    def scales(self) -> np.ndarray:
        """``[a, b, a_d, c, bound]`` as the kernels read them (float64; ``bound`` in ``r``'s units)."""
        with torch.no_grad():
            a = float(self.log_a.exp())
            return np.array([a, float(self.b), float(self.log_a_discard.exp()), a * CORRECTION_UNIT, self.bound])

    def calibration(self) -> list[nn.Parameter]:
        """The numbers fitted at the calibration's step: :data:`CALIBRATION_PARAMETERS` and the baseline's."""
        return [getattr(self, name) for name in CALIBRATION_PARAMETERS] + list(self.baseline.parameters())


def kernel_model(net: ResidualNet) -> tuple[Network, np.ndarray]:
    """``r`` rounded to the neural bot's integer format (its first layer: a row per input, then per feature) and
    ``[a, b, a_d, c, bound]``."""
    return quantize(net, net.first_scale), net.scales()


def residual_document(net: ResidualNet) -> dict:
    """The model file's numbers of ``net`` (``agents.residual.residual_dict``)."""
    return residual_dict(*kernel_model(net), net.search_top)


class ResidualPlayer:
    """The teacher start's player: the residual bot (``agents.residual.ResidualBot``) with ``net``'s current
    weights, and what learning records of its turns."""

    def __init__(self, net: ResidualNet) -> None:
        self.bot = ResidualBot.of(*kernel_model(net), label="the run's model", search_top=net.search_top)

    def decide(self, engine, rows, observations, masks, out) -> None:
        """``out`` := the bot's actions in the games ``rows`` of ``engine`` (their observations and masks)."""
        out[:] = self.bot.act_rows(engine, rows, observations, masks)

    def candidates(self, engine, rows, observations) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The stops the teacher's search keeps at the decisions in the games ``rows`` (``search_top`` of them):
        their blocks ``[len(rows), search_top, width]`` (float64), ``v``, the first play toward each (-1: stopping
        now) and how many each decision has (0: no choice among stops; ``agents.batched.residual.candidate_rows``)."""
        arrays, top = self.bot.network.arrays, self.bot.search_top
        count = len(rows)
        blocks = np.zeros((count, top, arrays[0].shape[0]), dtype=np.int64)
        values, firsts = np.zeros((count, top)), np.zeros((count, top), dtype=np.int64)
        counts = np.zeros(count, dtype=np.int64)
        rows, observations = np.asarray(rows, dtype=np.int64), np.ascontiguousarray(observations)
        engine.run_parts(lambda a, b: candidate_rows(engine.games, engine.action_mask, engine.cfg, rows[a:b],
                                                     self.bot.parameters, observations[a:b], arrays, top, blocks[a:b],
                                                     values[a:b], firsts[a:b], counts[a:b]), count)
        return blocks.astype(np.float64), values, firsts, counts

    def decide_drawn(self, engine, rows, observations, picks, out) -> None:
        """``out`` := the moves toward the ``picks[i]``-th kept stop of the decision in game ``rows[i]`` (where that
        stop is the turn's start, the discard the corrected value chooses)."""
        bot = self.bot
        drawn_actions(engine.games, engine.action_mask, engine.cfg, np.asarray(rows, dtype=np.int64), bot.parameters,
                      np.ascontiguousarray(observations, dtype=np.float32), bot.network.arrays, bot.scales,
                      bot.search_top, np.asarray(picks, dtype=np.int64), out)

    def turn_starts(self, engine, rows, observations) -> np.ndarray:
        """The stop blocks of the decisions in the games ``rows``, each the first of its seat's turn."""
        arrays = self.bot.network.arrays
        out = np.zeros((len(rows), arrays[0].shape[0]), dtype=np.int64)
        turn_start_rows(engine.games, engine.cfg, np.asarray(rows, dtype=np.int64), self.bot.parameters,
                        np.ascontiguousarray(observations), arrays, out)
        return out.astype(np.float64)

    def positions(self, engine, rows, observations, actions, turn_starts) -> np.ndarray:
        """For each game of ``rows`` whose seat discards ``actions[i]`` in the turn that started at block
        ``turn_starts[i]``: the rows (:class:`ResidualNet`'s layout) of the stop it discards from and of the turn
        end, ``[len(rows), 2, row width]``."""
        arrays = self.bot.network.arrays
        count, width = len(rows), arrays[0].shape[0]
        inputs = np.zeros((count, 2, width), dtype=np.int64)
        values = np.zeros((count, 2), dtype=np.float64)
        turn_records(engine.games, engine.action_mask, engine.cfg, np.asarray(rows, dtype=np.int64),
                     self.bot.parameters, np.ascontiguousarray(observations), arrays,
                     np.asarray(actions, dtype=np.int64), inputs, values)
        out = np.zeros((count, 2, 2 * width + 2), dtype=np.float64)
        out[:, :, :width] = inputs
        out[:, :, width] = values[:, :1]
        out[:, 1, width + 1] = values[:, 1]
        out[:, :, width + 2:] = np.asarray(turn_starts)[:, None, :]
        return out
