"""Imitation on the batched engine: the kernel planner labels every decision as agents.planner would."""

from __future__ import annotations

import time

import numpy as np
import pytest

from agents.loading import load_policy
from skipbo_env import Rules
from skipbo_env.encoding import OBS_SIZE, SCALE
from training.sb3.pretrain import BATCH_GAMES, collect_teacher_games

RULES = Rules(stock_size=5, max_turns=1000)
GAMMA = 0.9


def as_observation(data, index):
    return {"observation": data.raw_observations[index].astype(np.float32) * SCALE,
            "action_mask": data.masks[index].astype(np.int8)}


class FirstLegal:
    """A student whose logits prefer the lowest legal id."""

    def logits(self, observations):
        return -np.tile(np.arange(145, dtype=np.float64), (len(observations), 1))


@pytest.fixture(scope="module")
def teacher_data():
    return collect_teacher_games("planner", RULES, 40, seed=3, gamma=GAMMA)


def test_batched_teacher_games_hold_the_same_kind_of_data_as_the_rules_engine_ones(teacher_data):
    python = collect_teacher_games("agents.planner:PlannerBot", RULES, 3, seed=3, gamma=GAMMA)
    for data in (teacher_data, python):
        assert data.raw_observations.dtype == np.int16 and data.raw_observations.shape[1] == OBS_SIZE
        assert data.masks.dtype == bool and data.actions.dtype == np.int64 and data.returns.dtype == np.float32
        assert data.masks[np.arange(len(data)), data.actions].all()        # every label is legal
    assert teacher_data.games == 40 and len(teacher_data) > 40 * 20


def test_every_batched_label_is_the_decision_of_agents_planner_in_that_position(teacher_data):
    planner = load_policy("planner")
    sample = np.random.default_rng(0).choice(len(teacher_data), 200, replace=False)
    assert all(planner.act(as_observation(teacher_data, i)) == teacher_data.actions[i] for i in sample)


def test_the_kernel_expert_teaches_on_the_batched_engine_with_the_decisions_of_agents_expert():
    data = collect_teacher_games("expert:plan_discards=false", RULES, 10, seed=6, gamma=GAMMA)
    expert = load_policy("expert:plan_discards=false")
    assert data.games == 10 and len(data) > 10 * 20
    assert all(expert.act(as_observation(data, i)) == data.actions[i] for i in range(len(data)))


def test_batched_value_targets_are_the_discounted_result_of_the_deciding_seat(teacher_data):
    exponents = np.log(np.abs(teacher_data.returns[teacher_data.returns != 0])) / np.log(GAMMA)
    assert np.allclose(exponents, np.rint(exponents), atol=1e-3)           # +-gamma ** decisions left
    assert (teacher_data.returns == 1.0).sum() == (teacher_data.returns == -1.0).sum() == 40  # one win, one loss


def test_batched_dagger_games_are_played_by_the_student_and_labelled_by_the_teacher():
    data = collect_teacher_games("planner", RULES, 20, seed=4, gamma=GAMMA, student=FirstLegal())
    planner = load_policy("planner")
    student_moves = np.array([int(np.flatnonzero(data.masks[i])[0]) for i in range(len(data))])
    labels = np.array([planner.act(as_observation(data, i)) for i in range(len(data))])
    assert np.array_equal(labels, data.actions)
    assert (student_moves != data.actions).sum() > 20   # the student's mistakes were labelled, not copied
    assert data.games == 20


def test_no_new_game_starts_past_the_deadline():
    data = collect_teacher_games("greedy", RULES, BATCH_GAMES + 50, seed=5, gamma=GAMMA, deadline=time.perf_counter())
    assert data.games == BATCH_GAMES


def test_with_shaping_the_value_targets_are_the_shaped_returns(teacher_data):
    shaped = collect_teacher_games("planner", RULES, 40, seed=3, gamma=GAMMA, shaping="stockpile")
    assert np.array_equal(shaped.actions, teacher_data.actions)
    potential = teacher_data.returns - shaped.returns
    python = collect_teacher_games("agents.planner:PlannerBot", RULES, 3, seed=3, gamma=GAMMA)
    python_shaped = collect_teacher_games("agents.planner:PlannerBot", RULES, 3, seed=3, gamma=GAMMA,
                                          shaping="stockpile")
    for difference in (potential, python.returns - python_shaped.returns):
        assert np.all(np.abs(difference) <= 1.0 + 1e-6) and np.any(np.abs(difference) > 0.1)
        steps = np.abs(difference * RULES.stock_size - np.rint(difference * RULES.stock_size))
        assert np.all(steps < 1e-3)                                 # whole stockpile cards over stock_size
