"""env()'s wrappers answer as PettingZoo's own stack does on the calls their direct paths do not take."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.utils import wrappers

import skipbo_env
from skipbo_env.actions import NUM_ACTIONS

pytestmark = pytest.mark.filterwarnings("ignore:.*illegal move", "ignore:.*Illegal move")


def pettingzoo_wrapped(**table):
    """raw_env in PettingZoo's own wrapper classes, stacked as ``env()`` stacks them."""
    environment = wrappers.TerminateIllegalWrapper(skipbo_env.raw_env(**table), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(environment))


def after_step(environment) -> tuple:
    observation, reward, terminated, truncated, info = environment.last()
    return (environment.agent_selection, list(environment.agents), dict(environment._cumulative_rewards),
            dict(environment.terminations), dict(environment.truncations), observation["observation"].tobytes(),
            observation["action_mask"].tobytes(), reward, terminated, truncated, info)


@pytest.mark.parametrize("kind", [np.int64, np.uint8, np.array], ids=["int64", "uint8", "0-d array"])
def test_numpy_ids_and_a_step_without_observing_first_go_as_through_pettingzoos_wrappers(kind):
    """numpy ids take PettingZoo's own paths; every other step comes without a ``last()`` before it,
    so TerminateIllegalWrapper observes for itself; one hand ends on an illegal id."""
    for seed in range(3):
        ours, theirs = skipbo_env.env(num_players=3), pettingzoo_wrapped(num_players=3)
        ours.reset(seed=seed)
        theirs.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for step, agent in enumerate(ours.agent_iter()):
            if step % 2:
                assert after_step(ours) == after_step(theirs)
            mask = theirs.unwrapped.observe(agent)["action_mask"]
            if ours.terminations[agent] or ours.truncations[agent]:
                action = None
            elif seed == 2 and step == 11:
                action = kind(int(np.flatnonzero(mask == 0)[0]))
            else:
                legal = np.flatnonzero(mask)
                action = kind(int(legal[rng.integers(len(legal))])) if step % 3 else int(legal[0])
            ours.step(action)
            theirs.step(action)
        assert ours.agents == theirs.agents == [] and ours.rewards == theirs.rewards
        assert (ours.unwrapped.game.outcome is None) == (seed == 2)  # that hand ended on the illegal id


def test_step_and_observe_before_reset_fail_as_pettingzoos_wrappers_do():
    for method, argument in (("step", 0), ("observe", "player_0")):
        errors = []
        for environment in (skipbo_env.env(), pettingzoo_wrapped()):
            with pytest.raises(Exception) as error:
                getattr(environment, method)(argument)
            errors.append((type(error.value), str(error.value)))
        assert errors[0] == errors[1]


def test_an_id_outside_the_action_space_is_refused_as_pettingzoos_wrappers_do():
    for action in (NUM_ACTIONS, -1, 3.0):
        errors = []
        for environment in (skipbo_env.env(), pettingzoo_wrapped()):
            environment.reset(seed=0)
            with pytest.raises(AssertionError) as error:
                environment.step(action)
            errors.append(str(error.value))
        assert errors[0] == errors[1] == "action is not in action space"
