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
                     "import gymnasium\nprint(gymnasium.spec('skipbo/SkipBo-v1').entry_point)")
    assert out.splitlines() == ["False", "agents.environments:single_agent_env"]


def test_gymnasium_imported_first_still_gets_the_id():
    out = run_python("import gymnasium, skipbo_env\nprint(gymnasium.spec('skipbo/SkipBo-v1').max_episode_steps)")
    assert out == str(MAX_EPISODE_STEPS)


def test_module_prefixed_id_needs_no_import_of_skipbo_env():
    out = run_python("import gymnasium\nenv = gymnasium.make('skipbo_env:skipbo/SkipBo-v1', opponents='greedy')\n"
                     "print(env.reset(seed=1)[0].shape)")
    assert out == f"({skipbo_env.OBS_SIZE},)"


def test_the_retired_v0_id_is_refused_with_a_line_naming_v1():
    import gymnasium

    assert ENV_ID == "skipbo/SkipBo-v1"
    with pytest.raises(gymnasium.error.DeprecatedEnv, match=r"v0 .* deprecated. Please use `skipbo/SkipBo-v1`"):
        gymnasium.make("skipbo/SkipBo-v0", opponents="greedy")


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


def test_maskable_ppo_trains_on_one_gymnasium_make_env_whose_mask_the_wrappers_reach():
    import gymnasium
    from sb3_contrib import MaskablePPO

    environment = gymnasium.make(ENV_ID, opponents="random", stock_size=4)
    _, info = environment.reset(seed=1)
    mask = environment.get_wrapper_attr("action_masks")()
    assert np.array_equal(mask, info["action_mask"].astype(bool)) and mask.any()
    model = MaskablePPO("MlpPolicy", environment, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=16)
    assert model.num_timesteps >= 16


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


def single_agent_infos(seed: int, **kwargs) -> list[dict]:
    from agents import load_policy

    environment = skipbo_env.SingleAgentEnv(opponents=load_policy("random"), stock_size=5, **kwargs)
    rng = np.random.default_rng(seed)
    observation, info = environment.reset(seed=seed)
    infos = [info]
    done = False
    while not done:
        legal = np.flatnonzero(environment.action_masks())
        observation, _, terminated, truncated, info = environment.step(int(rng.choice(legal)))
        infos.append(info)
        done = terminated or truncated
    return infos


def test_single_agent_infos_have_the_same_keys_and_types_at_every_step():
    infos = single_agent_infos(seed=4)
    assert len(infos) > 2
    assert {tuple(sorted(info)) for info in infos} == {tuple(sorted(infos[-1]))}
    assert all(type(info[key]) is type(infos[-1][key]) for info in infos for key in info)
    assert [info["outcome"] for info in infos[:-1]] == [""] * (len(infos) - 1)
    assert infos[-1]["outcome"] in ("win", "draw", "truncated")
    assert infos[-1]["won"] == infos[-1]["winners"][infos[-1]["seat"]]


def test_aec_infos_have_the_same_keys_before_and_after_the_hand_ends():
    environment = skipbo_env.env(num_players=3, stock_size=4)
    environment.reset(seed=1)
    rng = np.random.default_rng(1)
    first = {agent: dict(info) for agent, info in environment.infos.items()}
    assert all(info == {"outcome": "", "won": False, "points": 0, "winners": (False,) * 3} for info in first.values())
    final = {}
    for agent in environment.agent_iter():
        observation, _, terminated, truncated, info = environment.last()
        assert set(info) == {"outcome", "won", "points", "winners"}
        if terminated or truncated:
            final[agent] = info
            environment.step(None)
        else:
            assert info["outcome"] == ""
            environment.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    game = environment.unwrapped.game
    assert {info["outcome"] for info in final.values()} == {game.outcome}
    assert [agent for agent, info in sorted(final.items()) if info["won"]] == [f"player_{s}" for s in game.winners]


def stacked_infos(infos: list[dict]) -> dict:
    """Each info key stacked over the steps as a buffer does: one array per key, never of objects."""
    assert {tuple(sorted(info)) for info in infos} == {tuple(sorted(infos[0]))}
    stacked = {key: np.stack([np.asarray(info[key]) for info in infos]) for key in infos[0]}
    assert all(array.dtype != object and len(array) == len(infos) for array in stacked.values())
    return stacked


def aec_infos(seed: int, **settings) -> tuple[list[dict], object]:
    """Every info ``last()`` gives in one hand of random legal play, and the finished game."""
    environment = skipbo_env.env(**settings)
    environment.reset(seed=seed)
    rng = np.random.default_rng(seed)
    infos = []
    for _agent in environment.agent_iter():
        observation, _, terminated, truncated, info = environment.last()
        infos.append(info)
        legal = np.flatnonzero(observation["action_mask"])
        environment.step(None if terminated or truncated else int(rng.choice(legal)))
    return infos, environment.unwrapped.game


def test_single_agent_infos_stack_over_a_whole_hand_with_the_winners_per_seat():
    infos = single_agent_infos(seed=6, num_players=3)
    stacked = stacked_infos(infos)
    assert stacked["winners"].shape == (len(infos), 3) and stacked["winners"].dtype == bool
    assert not stacked["winners"][:-1].any()
    assert stacked["action_mask"].shape == (len(infos), skipbo_env.NUM_ACTIONS)
    assert stacked["won"][-1] == stacked["winners"][-1][stacked["seat"][-1]]


@pytest.mark.parametrize("settings", [{"num_players": 2, "stock_size": 4},
                                      {"num_players": 4, "partners": True, "stock_size": 3}])
def test_aec_infos_stack_over_a_whole_hand_with_the_winners_per_seat(settings):
    infos, game = aec_infos(seed=3, **settings)
    stacked = stacked_infos(infos)
    players = settings["num_players"]
    assert stacked["winners"].shape == (len(infos), players) and stacked["winners"].dtype == bool
    final = stacked["winners"][-players:]
    assert (final == [seat in game.winners for seat in range(players)]).all()
    assert not stacked["winners"][:-players].any()


def test_tianshou_buffer_stores_every_step_info_of_an_episode():
    tianshou_data = pytest.importorskip("tianshou.data")
    infos = single_agent_infos(seed=2)
    buffer = tianshou_data.ReplayBuffer(len(infos))
    for info in infos:
        buffer.add(tianshou_data.Batch(obs=np.zeros(2), act=0, rew=0.0, terminated=False, truncated=False,
                                       obs_next=np.zeros(2), info=info))
    assert list(buffer.info.outcome[:len(infos)]) == [info["outcome"] for info in infos]
    assert list(buffer.info.won[:len(infos)]) == [info["won"] for info in infos]
    assert np.array_equal(buffer.info.winners[:len(infos)], np.stack([info["winners"] for info in infos]))


def test_dict_observation_gives_the_vector_and_the_mask_as_the_aec_env_does():
    from agents import load_policy

    environment = skipbo_env.SingleAgentEnv(opponents=load_policy("greedy"), observation="dict", num_players=3)
    observation, info = environment.reset(seed=7)
    assert set(observation) == {"observation", "action_mask"}
    assert environment.observation_space.contains(observation)
    assert np.array_equal(observation["action_mask"], info["action_mask"])
    assert np.array_equal(observation["observation"], skipbo_env.encode_observation(environment.game, environment.seat))
    aec = skipbo_env.env(num_players=3)
    assert environment.observation_space == aec.observation_space("player_0")
    with pytest.raises(ValueError, match="observation='image' is not allowed: use 'flat' or 'dict'"):
        skipbo_env.SingleAgentEnv(opponents=load_policy("greedy"), observation="image")


def test_state_holds_every_hand_and_stockpile_by_value():
    from skipbo_env.encoding import OBS_SIZE, STATE_SIZE
    from skipbo_env.cards import NUM_VALUES

    environment = skipbo_env.env(num_players=3, stock_size=6)
    environment.reset(seed=5)
    game = environment.unwrapped.game
    state = environment.state()
    assert state.shape == (STATE_SIZE,) and environment.unwrapped.state_space.contains(state)
    assert np.array_equal(state[:OBS_SIZE], skipbo_env.encode_observation(game, 0))
    for seat in range(3):
        start = OBS_SIZE + 2 * NUM_VALUES * seat
        assert np.allclose(state[start:start + NUM_VALUES] * 5, game.hand_counts[seat][1:])
        stock = np.rint(state[start + NUM_VALUES:start + 2 * NUM_VALUES] * 30)
        assert stock.sum() == len(game.stocks[seat]) == 6
        assert stock[game.stocks[seat][-1] - 1] >= 1
    absent = state[OBS_SIZE + 2 * NUM_VALUES * 3:STATE_SIZE - NUM_VALUES]
    assert not absent.any()
    draw = state[-NUM_VALUES:] / skipbo_env.encoding.SCALE[skipbo_env.encoding.GLOBAL_OFFSETS["unseen"]:][:NUM_VALUES]
    assert np.rint(draw).sum() == len(game.draw_pile)


def test_tianshou_collects_whole_hands_of_the_pettingzoo_env_and_trains_a_masked_dqn_on_them():
    pytest.importorskip("tianshou")
    import torch
    from tianshou.algorithm import DQN, MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, CollectStats, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.env.pettingzoo_env import PettingZooEnv
    from tianshou.utils.net.common import Net
    from tianshou.utils.torch_utils import policy_within_training_step

    def make_table():
        return PettingZooEnv(skipbo_env.env(stock_size=3))

    torch.manual_seed(0)
    np.random.seed(0)
    table = make_table()
    net = Net(state_shape=(skipbo_env.OBS_SIZE,), action_shape=skipbo_env.NUM_ACTIONS, hidden_sizes=[32])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=table.action_space, eps_training=0.2),
                  optim=AdamOptimizerFactory(lr=1e-3), n_step_return_horizon=4)
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[learner, MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=table.action_space)], env=table)
    tables = DummyVectorEnv([make_table, make_table])
    tables.seed(0)
    buffer = VectorReplayBuffer(8192, 2)
    collector = Collector[CollectStats](algorithm, tables, buffer, exploration_noise=True)
    collector.reset()
    collected = collector.collect(n_episode=2)

    steps = buffer[buffer.sample_indices(0)]  # every stored step, both tables
    assert collected.n_collected_episodes == 2 and len(buffer) == collected.n_collected_steps
    assert np.isfinite(steps.rew).all() and steps.rew.shape == (len(buffer), 2)
    ends = steps.terminated | steps.truncated
    assert ends.sum() == 2 and set(steps.info.outcome[~ends]) == {""}
    assert set(steps.info.outcome[ends]) <= {"win", "draw", "truncated"}
    assert steps.info.winners.shape == (len(buffer), 2) and not steps.info.winners[~ends].any()
    assert steps.obs.mask[np.arange(len(buffer)), steps.act].all()  # every move was legal
    before = [parameter.detach().clone() for parameter in net.parameters()]
    with policy_within_training_step(algorithm.policy):
        algorithm.update(buffer=buffer, sample_size=64)
    assert any(not torch.equal(old, new) for old, new in zip(before, net.parameters()))
