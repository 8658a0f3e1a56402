"""Train a masked Tianshou DQN against a fixed bot on the PettingZoo environment, then count its wins.

    python examples/tianshou_dqn.py --steps 20000 --opponent random
    python examples/tianshou_dqn.py --steps 20000 --table gymnasium

``--table pettingzoo`` (the default) wraps ``skipbo_env.env()`` in Tianshou's ``PettingZooEnv``,
which hands the DQN ``obs`` and ``mask`` from the AEC env's ``{"observation", "action_mask"}``;
``MultiAgentOffPolicyAlgorithm`` gives player_0's moves to the learner and player_1's to a bot of
``agents.load_policy`` wrapped as a Tianshou algorithm that learns nothing. Tianshou's
multi-agent algorithms read the buffer in the order the table plays: a Skip-Bo turn is several
moves of one player, so most of the learner's transitions lead to its own next decision, but the
discard that ends its turn leads to the opponent's observation, and a hand the opponent wins pays
the learner's -1 on the opponent's move (the learner sees it through its n-step returns).
Training pays the environments' potential-based stockpile shaping (``--shaping``, the same best
policy, a signal before the first win); the hands counted at the end are played without it.
Measured (seed 0, the defaults, 20,000 steps, 100 hands): the pettingzoo table won 38 against
random (1 without training, 0 after training without shaping), the gymnasium table 75.

``--table gymnasium`` is the exact alternative: ``gymnasium.make("skipbo/SkipBo-v1",
observation="dict")`` plays the bot inside the environment, so every transition is the learner's;
its ``{"observation", "action_mask"}`` is renamed to the ``{"obs", "mask"}`` Tianshou's DQN reads.
Every info value has one type and shape at every step, so Tianshou's buffer stores them as they are.
"""

from __future__ import annotations

import argparse
import logging

import gymnasium
import numpy as np
import torch
from tianshou.algorithm import DQN, MultiAgentOffPolicyAlgorithm
from tianshou.algorithm.algorithm_base import OffPolicyAlgorithm, Policy, TrainingStats
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy
from tianshou.algorithm.optim import AdamOptimizerFactory
from tianshou.data import Batch, Collector, CollectStats, VectorReplayBuffer
from tianshou.env import DummyVectorEnv
from tianshou.env.pettingzoo_env import PettingZooEnv
from tianshou.trainer import OffPolicyTrainerParams
from tianshou.utils.net.common import Net

import skipbo_env
from agents import load_policy

LEARNER = 0
"""The learner's seat (player_0); the bot plays player_1."""


class FixedBot(OffPolicyAlgorithm):
    """A skipbo policy (``act(observation_dict) -> id``) as a Tianshou algorithm that learns nothing."""

    class Policy(Policy):
        def __init__(self, bot, action_space) -> None:
            super().__init__(action_space=action_space)
            self.bot = bot

        def forward(self, batch, state=None, **kwargs) -> Batch:
            views = zip(batch.obs.obs, batch.obs.mask)
            return Batch(act=np.array([self.bot.act({"observation": obs, "action_mask": mask.astype(np.int8)})
                                       for obs, mask in views]))

    def __init__(self, bot, action_space) -> None:
        super().__init__(policy=self.Policy(bot, action_space))

    def _update_with_batch(self, batch) -> TrainingStats:
        return TrainingStats()


def learner_returns(returns: np.ndarray) -> np.ndarray:
    """The learner's column of the per-seat episode returns Tianshou gives for a multi-agent table."""
    return returns[:, LEARNER]


def pettingzoo_table(settings: dict) -> PettingZooEnv:
    return PettingZooEnv(skipbo_env.env(**settings))


def gymnasium_table(settings: dict, opponent: str) -> gymnasium.Env:
    env = gymnasium.make("skipbo/SkipBo-v1", opponents=opponent, observation="dict", **settings)
    space = env.observation_space
    renamed = gymnasium.spaces.Dict({"obs": space["observation"], "mask": space["action_mask"]})
    return gymnasium.wrappers.TransformObservation(
        env, lambda seen: {"obs": seen["observation"], "mask": seen["action_mask"]}, renamed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", choices=["pettingzoo", "gymnasium"], default="pettingzoo")
    parser.add_argument("--steps", type=int, default=20_000, help="environment steps to train on")
    parser.add_argument("--envs", type=int, default=4, help="tables stepped together")
    parser.add_argument("--opponent", default="random", help="agents.load_policy spec of the other seat")
    parser.add_argument("--stock-size", type=int, default=5, help="cards in each stockpile (short hands learn faster)")
    parser.add_argument("--shaping", choices=["stockpile", "none"], default="stockpile",
                        help="stockpile: potential-based shaping on the stockpiles (a signal before the first win)")
    parser.add_argument("--hidden", type=int, default=256, help="width of the two hidden layers")
    parser.add_argument("--test-hands", type=int, default=20, help="hands played greedily at the end")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    np.random.seed(args.seed)  # Tianshou draws exploration from numpy's global generator
    torch.set_num_threads(1)  # small networks: one thread is faster than many fighting for cores
    logging.getLogger("tianshou.data.stats").setLevel(logging.ERROR)  # multi-agent returns are 2-D, on purpose

    gamma = 0.99

    def make_table(shaping: str = args.shaping):
        settings = {"stock_size": args.stock_size, "shaping": shaping, "gamma": gamma}
        return pettingzoo_table(settings) if args.table == "pettingzoo" else gymnasium_table(settings, args.opponent)

    table = make_table()
    net = Net(state_shape=table.observation_space["obs" if args.table == "gymnasium" else "observation"].shape,
              action_shape=table.action_space.n, hidden_sizes=[args.hidden, args.hidden])
    learner = DQN(policy=DiscreteQLearningPolicy(model=net, action_space=table.action_space, eps_training=0.2,
                                                 eps_inference=0.0),
                  optim=AdamOptimizerFactory(lr=1e-3), gamma=gamma, n_step_return_horizon=8, target_update_freq=500)
    if args.table == "pettingzoo":
        bot = FixedBot(load_policy(args.opponent, seed=args.seed), table.action_space)
        algorithm, reduction = MultiAgentOffPolicyAlgorithm(algorithms=[learner, bot], env=table), learner_returns
    else:
        algorithm, reduction = learner, None

    training = DummyVectorEnv([make_table for _ in range(args.envs)])
    testing = DummyVectorEnv([lambda: make_table("none") for _ in range(args.envs)])  # returns: +1 win, -1 loss
    training.seed(args.seed)
    testing.seed(args.seed + 1_000)
    collector = Collector[CollectStats](algorithm, training, VectorReplayBuffer(50_000, args.envs),
                                        exploration_noise=True)
    collector.reset()
    collector.collect(n_step=64 * args.envs)  # a first batch to sample from
    trained = algorithm.run_training(OffPolicyTrainerParams(
        training_collector=collector, max_epochs=1, epoch_num_steps=args.steps,
        collection_step_num_env_steps=16 * args.envs, update_step_num_gradient_steps_per_sample=0.25,
        batch_size=64, test_collector=None, multi_agent_return_reduction=reduction, show_progress=False))

    # Play hands with the greedy (eps 0), masked learner, without shaping, and count its wins.
    results = Collector[CollectStats](algorithm, testing).collect(n_episode=args.test_hands, reset_before_collect=True)
    returns = results.returns if reduction is None else reduction(results.returns)
    print(f"after {args.steps:,} steps ({trained.update_step:,} update steps) on the {args.table} table: "
          f"won {int(np.sum(returns > 0))} of {len(returns)} hands against {args.opponent}")


if __name__ == "__main__":
    main()
