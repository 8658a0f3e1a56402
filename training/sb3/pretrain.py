"""Behaviour cloning: warm-start the PPO policy from a teacher bot's decisions (``pretrain:``).

Reinforcement learning from scratch needs tens of millions of Skip-Bo decisions before it
beats a simple heuristic. Imitating a strong bot first gets there in minutes:

1. :func:`collect_teacher_games` plays games in which the teacher (``pretrain.teacher``,
   ``planner`` by default) holds every seat, and records each decision as
   ``(observation, action mask, action)`` with the deciding seat's final result. A kernel bot
   teacher (``random``, ``greedy``, ``planner[:options]``, ``expert[:options]``,
   :mod:`agents.batched.bots`) plays :data:`BATCH_GAMES` games at once on the batched engine, the
   kernel labelling every position (:func:`collect_batched_games`); any other teacher plays game
   by game on the rules engine.
2. :func:`clone_teacher` fits the masked actor-critic policy to those decisions: cross-entropy
   of the teacher's action under the masked policy, plus (``pretrain.value``) a squared error
   pulling the value head to the discounted game result ``±gamma ** (decisions left)``, the
   return PPO will see, so PPO starts with a critic that already knows who is winning (with
   ``env.shaping: stockpile`` the shaped return, that minus the position's potential). The
   value network costs as much to fit as the policy and needs far fewer passes, so over a fit
   of ``E`` epochs it is fitted on every ``E``-th batch (each decision about once in all). The
   step size falls linearly to a tenth of ``pretrain.learning_rate`` over the epochs, or over
   the time left before the deadline (``pretrain.max_minutes``) when that comes first.
3. DAgger (``pretrain.dagger_rounds``): the cloned policy plays one seat against the teacher,
   the teacher labels the positions the policy reached, and the policy is refit on all data.
   With a kernel bot teacher these games are batched too: one forward pass of the learner per
   round of moves for all the games in which it is to act.
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

from agents.batched import bots
from agents.batched.policies import LogitsPolicy, checked_actions
from agents.loading import load_policy
from agents.policy import reset_policy
from skipbo_env.encoding import OBS_SIZE, SCALE, observe
from skipbo_env.envs.common import check_shaping, game_potential
from skipbo_env.game import Game
from skipbo_env.rules import Rules
from skipbo_env.vector.layout import WIN
from skipbo_env.vector.engine import VectorGame

BATCH_GAMES = 256
"""Games the batched engine plays at once while collecting (as many as are asked for, at most this)."""


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
                          on_game: Callable[[int], None] | None = None, deadline: float | None = None,
                          shaping: str = "none") -> TeacherData:
    """Play ``games`` games and record every decision with the teacher's choice as its label.

    Without ``student`` the teacher holds every seat. With a ``student`` policy (DAgger), the
    student plays one seat of each game (drawn at random) and the teacher the others; the
    student's decisions are labelled with what the teacher would have played there, so the
    data covers the positions the student's own mistakes lead to. Past ``deadline`` (a
    ``time.perf_counter()`` value) no new game starts; the data holds the games finished. With
    ``shaping="stockpile"`` the value targets are the shaped returns (the deciding seat's stockpile
    potential subtracted, :mod:`skipbo_env.envs.common`).
    """
    check_shaping(shaping, gamma)
    code = bots.kernel_bot_code(teacher)
    if code is not None:
        return collect_batched_games(code, rules, games, seed, gamma, student, on_game, deadline, shaping)
    rng = np.random.default_rng(seed)
    teachers = [load_policy(teacher) for _ in range(rules.num_players)]
    raw, masks, actions, returns = [], [], [], []
    for index in range(games):
        if deadline is not None and time.perf_counter() > deadline:
            games = index
            break
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
            returns.append(-game_potential(game, seat) if shaping != "none" else 0.0)
            game.step(student.act(observation) if seat == student_seat else label)
        for seat, rows in enumerate(decisions):
            result = _result(game, seat)
            for left, row in enumerate(reversed(rows)):
                returns[row] += result * gamma ** left
        if on_game is not None:
            on_game(index + 1)
    return TeacherData(np.array(raw, dtype=np.int16).reshape(-1, OBS_SIZE), np.array(masks, dtype=bool),
                       np.array(actions, dtype=np.int64), np.array(returns, dtype=np.float32), games)


def collect_batched_games(code: int, rules: Rules, games: int, seed: int, gamma: float, student=None,
                          on_game: Callable[[int], None] | None = None, deadline: float | None = None,
                          shaping: str = "none") -> TeacherData:
    """:func:`collect_teacher_games` for the kernel bot ``code`` (``bots.kernel_bot_code``) on the batched engine.

    Game ``i`` is dealt with the ``i``-th seed drawn from ``default_rng(seed)``; the bot in each seat
    draws from a generator seeded from that deal (``bots.streams_for``); the student (a policy with
    ``logits``, e.g. ``NetworkPolicy``, playing its argmax) takes a seat drawn from the same generator.
    """
    rng = np.random.default_rng(seed)
    hand_seeds = rng.integers(0, bots.MAX_SEED, size=games)
    student_seats = rng.integers(rules.num_players, size=games) if student is not None else np.full(games, -1)
    learner = LogitsPolicy(student) if student is not None else None
    engine = VectorGame(rules, min(games, BATCH_GAMES), 0, auto_reset=False, observations=True)
    streams = bots.new_streams(engine.batch_size)
    game_of_row = np.arange(engine.batch_size)
    started = 0

    def deal(rows: np.ndarray) -> None:
        nonlocal started
        rows = rows[:games - started]
        if not len(rows):
            return
        game_of_row[rows] = np.arange(started, started + len(rows))
        engine.deal(rows, hand_seeds[started:started + len(rows)])
        bots.seed_rows(streams, rows, bots.streams_for(engine.seeds[rows]))
        started += len(rows)

    active = np.arange(engine.batch_size)
    deal(active)
    raw, masks, labels, game_ids, seats, potentials = [], [], [], [], [], []
    stockpile = np.array([s % rules.num_teams if rules.team_stock == "shared" else s for s in range(rules.num_players)])
    teams = np.array([rules.team_of(s) if rules.partners else s for s in range(rules.num_players)])
    others = (teams[:, None] != teams[None, :]).astype(np.float64)
    results = np.zeros((games, rules.num_players), dtype=np.float32)
    finished = 0
    while len(active):
        seat = engine.games["seat"][active].astype(np.int64)
        label = _kernel_labels(engine, code, active, streams)
        actions = label.copy()
        if learner is not None:
            own = student_seats[game_of_row[active]] == seat
            if own.any():
                rows = active[own]
                actions[own] = checked_actions(learner.act_batch(engine.obs[rows], engine.action_mask[rows]),
                                               len(rows), student)
        raw.append(np.rint(engine.obs[active] / SCALE).astype(np.int16))
        masks.append(engine.action_mask[active].copy())
        labels.append(label)
        game_ids.append(game_of_row[active].copy())
        seats.append(seat)
        if shaping != "none":
            left = engine.games["stock_len"][active][:, stockpile].astype(np.float64)
            own = left[np.arange(len(active)), seat]
            potentials.append(((left * others[seat]).sum(1) / others[seat].sum(1) - own) / rules.stock_size)
        engine.step_rows(active, actions)
        over = engine.over[active]
        if over.any():
            done = active[over]
            ended = engine.finished()
            now = np.isin(ended.rows, done)  # rows left over after the last game are not dealt again
            for row, outcome, winners in zip(ended.rows[now].tolist(), ended.outcome[now], ended.winners[now]):
                if outcome == WIN:
                    results[game_of_row[row]] = np.where(winners, 1.0, -1.0)
            finished += len(done)
            if on_game is not None:
                on_game(finished)
            if deadline is not None and time.perf_counter() > deadline:
                games = started
            deal(done)
            active = active[~engine.over[active]]
    game_ids, seats = np.concatenate(game_ids), np.concatenate(seats)
    returns = results[game_ids, seats] * gamma ** _decisions_left(game_ids * rules.num_players + seats)
    if shaping != "none":
        returns -= np.concatenate(potentials)
    return TeacherData(np.concatenate(raw), np.concatenate(masks), np.concatenate(labels).astype(np.int64),
                       returns.astype(np.float32), finished)


def _kernel_labels(engine, code: int, rows: np.ndarray, streams: np.ndarray) -> np.ndarray:
    """The kernel bot ``code``'s action for the seat to act in each game of ``rows`` (nothing is stepped)."""
    out = np.empty(len(rows), dtype=np.int64)
    bots.bot_actions(engine.games, engine.action_mask, engine.cfg, rows, streams, code, out)
    return out


def _decisions_left(keys: np.ndarray) -> np.ndarray:
    """For decision ``i`` (in time order) of group ``keys[i]``: how many decisions of its group follow it."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.flatnonzero(np.r_[True, sorted_keys[1:] != sorted_keys[:-1]])
    sizes = np.diff(np.r_[starts, len(keys)])
    position = np.arange(len(keys)) - np.repeat(starts, sizes)
    left = np.empty(len(keys), dtype=np.int64)
    left[order] = np.repeat(sizes, sizes) - 1 - position
    return left


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
                  fit_value: bool, seed: int, on_epoch: Callable[[int, float], None] | None = None,
                  deadline: float | None = None) -> CloneReport:
    """Fit an SB3 ``MaskableActorCriticPolicy`` to the teacher's decisions (see the module docstring).

    Past ``deadline`` (a ``time.perf_counter()`` value) the fit stops after the batch in progress."""
    import torch

    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(data))
    held_out = order[:max(1, len(order) // 20)]
    train = order[len(held_out):]
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    batches = epochs * -(-len(train) // batch_size)

    def progress(done: int) -> float:
        """How far the fit is: the share of its batches done, or of its time spent if that is more."""
        share = done / batches
        if deadline is not None:
            share = max(share, (time.perf_counter() - start) / max(deadline - start, 1e-9))
        return min(share, 1.0)

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda done: 1.0 - 0.9 * progress(done))
    policy.set_training_mode(True)
    done = 0
    for epoch in range(epochs):
        rng.shuffle(train)
        for begin in range(0, len(train), batch_size):
            batch = train[begin:begin + batch_size]
            loss = cloning_loss(policy, data, batch, fit_value and done % epochs == 0)
            done += 1
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            if deadline is not None and time.perf_counter() > deadline:
                break
        if on_epoch is not None:
            on_epoch(epoch + 1, _agreement(policy, data, held_out))
        if deadline is not None and time.perf_counter() > deadline:
            epochs = epoch + 1
            break
    policy.set_training_mode(False)
    agreement = _agreement(policy, data, held_out)
    with torch.no_grad():
        values = policy.predict_values(torch.as_tensor(data.observations(held_out))).squeeze(-1).numpy()
    value_error = float(np.mean((values - data.returns[held_out]) ** 2))
    return CloneReport(len(data), data.games, epochs, agreement, value_error, time.perf_counter() - start)


def cloning_loss(policy, data: TeacherData, batch: np.ndarray, fit_value: bool):
    """Masked cross-entropy of the teacher's actions, plus the value error when ``fit_value``
    (the value network is run only then: it costs as much as the policy's)."""
    import torch

    features = policy.extract_features(torch.as_tensor(data.observations(batch)), policy.pi_features_extractor)
    logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
    logits = logits.masked_fill(~torch.as_tensor(data.masks[batch]), -torch.inf)
    actions = torch.as_tensor(data.actions[batch])
    loss = -torch.log_softmax(logits, dim=-1).gather(1, actions[:, None]).mean()
    if fit_value:
        values = policy.value_net(policy.mlp_extractor.forward_critic(features)).squeeze(-1)
        loss = loss + torch.nn.functional.mse_loss(values, torch.as_tensor(data.returns[batch]))
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
