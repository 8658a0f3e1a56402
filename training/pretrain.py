"""Behaviour cloning: warm-start the PPO policy from a teacher bot's decisions (``pretrain:``).

Reinforcement learning from scratch needs tens of millions of Skip-Bo decisions before it
beats a simple heuristic. Imitating a strong bot first gets there in minutes:

1. :func:`collect_teacher_games` plays games in which the teacher (``pretrain.teacher``,
   ``planner`` by default) holds every seat, and records each decision as
   ``(observation, action mask, action)`` with the deciding seat's final result.
2. :func:`clone_teacher` fits the masked actor-critic policy to those decisions: cross-entropy
   of the teacher's action under the masked policy, plus (``pretrain.value``) a squared error
   pulling the value head to the discounted game result ``±gamma ** (decisions left)``, the
   return PPO will see, so PPO starts with a critic that already knows who is winning. The
   step size falls linearly to a tenth of ``pretrain.learning_rate`` over the epochs.
3. DAgger (``pretrain.dagger_rounds``): the cloned policy plays one seat against the teacher,
   the teacher labels the positions the policy reached, and the policy is refit on all data.
   A clone makes mistakes a teacher never makes and then meets positions the teacher never
   showed it; these rounds teach it to recover from them.

Observations are stored as their raw integers (``int16``; ``raw * SCALE`` is the vector), which
keeps a few hundred thousand decisions in a few hundred MB.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Callable

import numpy as np

from agents.loading import load_policy
from agents.policy import reset_policy
from skipbo_env.encoding import OBS_SIZE, SCALE, observe
from skipbo_env.game import Game
from skipbo_env.rules import Rules


@dataclasses.dataclass
class TeacherData:
    """Decisions of the teacher: raw observations, masks, actions and value targets."""

    raw_observations: np.ndarray  # int16 [n, OBS_SIZE]
    masks: np.ndarray             # bool [n, 145]
    actions: np.ndarray           # int64 [n]
    returns: np.ndarray           # float32 [n]: result * gamma ** (the seat's decisions left)
    games: int

    def __len__(self) -> int:
        return len(self.actions)

    def observations(self, index: np.ndarray) -> np.ndarray:
        return self.raw_observations[index].astype(np.float32) * SCALE


def collect_teacher_games(teacher: str, rules: Rules, games: int, seed: int, gamma: float, student=None,
                          on_game: Callable[[int], None] | None = None) -> TeacherData:
    """Play ``games`` games and record every decision with the teacher's choice as its label.

    Without ``student`` the teacher holds every seat. With a ``student`` policy (DAgger), the
    student plays one seat of each game (drawn at random) and the teacher the others; the
    student's decisions are labelled with what the teacher would have played there, so the
    data covers the positions the student's own mistakes lead to.
    """
    rng = np.random.default_rng(seed)
    teachers = [load_policy(teacher) for _ in range(rules.num_players)]
    raw, masks, actions, returns = [], [], [], []
    for index in range(games):
        game = Game.new(rules, seed=int(rng.integers(2**63)))
        for policy in teachers:
            reset_policy(policy, int(rng.integers(2**63)))
        student_seat = int(rng.integers(rules.num_players)) if student is not None else -1
        decisions: list[list[int]] = [[] for _ in range(rules.num_players)]
        while not game.is_over:
            seat = game.current_seat
            observation = observe(game, seat)
            label = teachers[seat].act(observation)
            decisions[seat].append(len(actions))
            raw.append(np.rint(observation["observation"] / SCALE).astype(np.int16))
            masks.append(observation["action_mask"].astype(bool))
            actions.append(label)
            returns.append(0.0)
            game.step(student.act(observation) if seat == student_seat else label)
        for seat, rows in enumerate(decisions):
            result = _result(game, seat)
            for left, row in enumerate(reversed(rows)):
                returns[row] = result * gamma ** left
        if on_game is not None:
            on_game(index + 1)
    return TeacherData(np.array(raw, dtype=np.int16).reshape(-1, OBS_SIZE), np.array(masks, dtype=bool),
                       np.array(actions, dtype=np.int64), np.array(returns, dtype=np.float32), games)


def concatenate(parts: list[TeacherData]) -> TeacherData:
    """One data set holding every decision of ``parts``."""
    return TeacherData(np.concatenate([p.raw_observations for p in parts]), np.concatenate([p.masks for p in parts]),
                       np.concatenate([p.actions for p in parts]), np.concatenate([p.returns for p in parts]),
                       sum(p.games for p in parts))


def _result(game: Game, seat: int) -> float:
    """+1 for a win of the seat (or its team), -1 when another won, 0 for a draw or truncation."""
    if game.outcome != "win":
        return 0.0
    return 1.0 if seat in game.winners else -1.0


@dataclasses.dataclass
class CloneReport:
    decisions: int
    games: int
    epochs: int
    agreement: float       # held-out share of decisions where the policy's argmax is the teacher's
    value_error: float     # held-out mean squared error of the value head
    seconds: float


def clone_teacher(policy, data: TeacherData, epochs: int, batch_size: int, learning_rate: float,
                  fit_value: bool, seed: int, on_epoch: Callable[[int, float], None] | None = None) -> CloneReport:
    """Fit an SB3 ``MaskableActorCriticPolicy`` to the teacher's decisions (see the module docstring)."""
    import torch

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(data))
    held_out = order[:max(1, len(order) // 20)]
    train = order[len(held_out):]
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    batches = epochs * -(-len(train) // batch_size)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda done: 1.0 - 0.9 * done / batches)
    policy.set_training_mode(True)
    for epoch in range(epochs):
        rng.shuffle(train)
        for begin in range(0, len(train), batch_size):
            batch = train[begin:begin + batch_size]
            loss = _loss(policy, data, batch, fit_value)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            schedule.step()
        if on_epoch is not None:
            on_epoch(epoch + 1, _agreement(policy, data, held_out))
    policy.set_training_mode(False)
    agreement = _agreement(policy, data, held_out)
    with torch.no_grad():
        values = policy.predict_values(torch.as_tensor(data.observations(held_out))).squeeze(-1).numpy()
    value_error = float(np.mean((values - data.returns[held_out]) ** 2))
    return CloneReport(len(data), data.games, epochs, agreement, value_error, time.perf_counter() - start)


def _loss(policy, data: TeacherData, batch: np.ndarray, fit_value: bool):
    import torch

    observations = torch.as_tensor(data.observations(batch))
    actions = torch.as_tensor(data.actions[batch])
    values, log_prob, _ = policy.evaluate_actions(observations, actions, action_masks=data.masks[batch])
    loss = -log_prob.mean()
    if fit_value:
        loss = loss + torch.nn.functional.mse_loss(values.squeeze(-1), torch.as_tensor(data.returns[batch]))
    return loss


def _agreement(policy, data: TeacherData, index: np.ndarray) -> float:
    import torch

    agree = 0
    with torch.no_grad():
        for begin in range(0, len(index), 4096):
            batch = index[begin:begin + 4096]
            distribution = policy.get_distribution(torch.as_tensor(data.observations(batch)),
                                                   action_masks=data.masks[batch])
            chosen = distribution.distribution.probs.argmax(dim=-1).numpy()
            agree += int((chosen == data.actions[batch]).sum())
    return agree / len(index)
