"""The environments fit the tools users already have: Gymnasium's registry, SB3's make_vec_env,
sb3-contrib's action masks, pictures for video recorders (issue 15)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import skipbo_env
from skipbo_env.envs.registration import ENV_ID, MAX_EPISODE_STEPS


def run_python(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_import_skipbo_env_registers_the_gymnasium_id_without_loading_gymnasium():
    out = run_python("import sys, skipbo_env\nprint('gymnasium' in sys.modules)\n"
                     "import gymnasium\nprint(gymnasium.spec('skipbo/SkipBo-v0').entry_point)")
    assert out.splitlines() == ["False", "agents.environments:single_agent_env"]


def test_gymnasium_imported_first_still_gets_the_id():
    out = run_python("import gymnasium, skipbo_env\nprint(gymnasium.spec('skipbo/SkipBo-v0').max_episode_steps)")
    assert out == str(MAX_EPISODE_STEPS)


def test_module_prefixed_id_needs_no_import_of_skipbo_env():
    out = run_python("import gymnasium\nenv = gymnasium.make('skipbo_env:skipbo/SkipBo-v0', opponents='greedy')\n"
                     "print(env.reset(seed=1)[0].shape)")
    assert out == f"({skipbo_env.OBS_SIZE},)"


def test_make_vec_env_with_its_defaults_builds_masked_environments():
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env(ENV_ID, n_envs=2, seed=3, env_kwargs={"opponents": "greedy", "num_players": 3})
    observations = vec.reset()
    assert observations.shape == (2, skipbo_env.OBS_SIZE)
    assert is_masking_supported(vec)
    masks = get_action_masks(vec)
    assert masks.shape == (2, skipbo_env.NUM_ACTIONS) and masks.dtype == bool
    assert masks.any(axis=1).all()
    assert vec.render_mode == "rgb_array"
    vec.close()


def test_maskable_ppo_learns_a_few_steps_on_make_vec_env():
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env(ENV_ID, n_envs=2, seed=0, env_kwargs={"opponents": "random", "stock_size": 5})
    model = MaskablePPO("MlpPolicy", vec, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=32)
    assert model.num_timesteps >= 32
    observation = vec.reset()
    from sb3_contrib.common.maskable.utils import get_action_masks

    masks = get_action_masks(vec)
    actions, _ = model.predict(observation, action_masks=masks, deterministic=True)
    assert all(masks[i, action] for i, action in enumerate(actions))


@pytest.mark.parametrize("make", ["aec", "single"])
def test_both_environments_render_a_picture_of_the_table(make):
    if make == "aec":
        environment = skipbo_env.env(render_mode="rgb_array", num_players=4)
        environment.reset(seed=2)
    else:
        from agents import load_policy

        environment = skipbo_env.SingleAgentEnv(opponents=load_policy("random"), render_mode="rgb_array",
                                                num_players=4)
        environment.reset(seed=2)
    picture = environment.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    assert picture.shape[0] > 600 and picture.shape[1] > 800
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) > 20  # cards and text, not a blank canvas


def test_more_seats_make_a_taller_picture():
    from skipbo_env.envs.picture import render_picture

    two = render_picture(skipbo_env.Game.new(skipbo_env.Rules(num_players=2), seed=1))
    six = render_picture(skipbo_env.Game.new(skipbo_env.Rules(num_players=6), seed=1))
    assert six.shape[0] > two.shape[0] and six.shape[1] == two.shape[1]


def test_an_unknown_render_mode_names_the_allowed_ones():
    with pytest.raises(ValueError, match="'ansi', 'human', 'rgb_array'"):
        skipbo_env.raw_env(render_mode="video")
