"""Masked PPO in one file, CleanRL style, on the batched engine (SkipBoVecEnv).

    python examples/cleanrl_masked_ppo.py --total-timesteps 200000 --save runs/cleanrl.zip

Read it top to bottom: the arguments, seeding, the environments (thousands of hands stepped in
numba kernels, greedy in the other seat), the network, the rollout with the legal-move mask
applied to the logits, generalised advantage estimation, the clipped PPO update, the logging.
The actor is laid out as ``agents.network`` expects, so ``--save`` writes a model file that
``skipbo evaluate --agents runs/cleanrl.zip greedy`` plays.
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np
import torch
from torch import nn

from agents.batched.seating import batch_opponents
from agents.saved_model import save_model
from skipbo_env import Rules
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_SIZE
from skipbo_env.envs.vec_env import SkipBoVecEnv


@dataclasses.dataclass
class Args:
    seed: int = 1
    """seed of the deals, the network and the sampling"""
    total_timesteps: int = 100_000
    """learner actions over the whole run"""
    num_envs: int = 256
    """hands played at once"""
    num_steps: int = 64
    """actions per hand between two updates (the rollout is num_envs x num_steps)"""
    stock_size: int = 10
    """cards in each stockpile: short hands give rewards sooner"""
    opponent: str = "greedy"
    """the other seat: random, greedy or planner (played inside the kernels)"""
    hidden: int = 256
    """width of the two hidden layers"""
    learning_rate: float = 3e-4
    gamma: float = 0.995
    gae_lambda: float = 0.95
    num_minibatches: int = 4
    update_epochs: int = 4
    clip_coef: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    save: str = ""
    """where to write the trained actor as a skipbo model file (.zip), empty for nowhere"""


def parse_args() -> Args:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field in dataclasses.fields(Args):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=type(field.default), default=field.default)
    return Args(**vars(parser.parse_args()))


class Agent(nn.Module):
    """An actor (``policy_net`` + ``action_net``, the layout of agents.network) and a critic."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.policy_net = nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.action_net = nn.Linear(hidden, NUM_ACTIONS)
        self.critic = nn.Sequential(nn.Linear(OBS_SIZE, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                                    nn.Linear(hidden, 1))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        return self.critic(obs).squeeze(-1)

    def act(self, obs: torch.Tensor, mask: torch.Tensor, action: torch.Tensor | None = None):
        """(action, log-probability, entropy, value); illegal ids get no probability."""
        logits = self.action_net(self.policy_net(obs)).masked_fill(~mask, -1e9)
        dist = torch.distributions.Categorical(logits=logits)
        if action is None:
            action = dist.sample()
        return action, dist.log_prob(action), dist.entropy(), self.value(obs)


def main() -> None:
    args = parse_args()
    torch.manual_seed(args.seed)  # the network and the sampling; the deals come from the env's seed

    env = SkipBoVecEnv(Rules(stock_size=args.stock_size, max_turns=1000), args.num_envs,
                       opponents=batch_opponents(args.opponent), seed=args.seed)
    agent = Agent(args.hidden)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)

    shape = (args.num_steps, args.num_envs)
    obs_buf = torch.zeros(shape + (OBS_SIZE,))
    mask_buf = torch.zeros(shape + (NUM_ACTIONS,), dtype=torch.bool)
    actions, logprobs, rewards, dones, values = (torch.zeros(shape) for _ in range(5))

    obs = torch.as_tensor(env.reset())
    mask = torch.as_tensor(env.action_masks())
    done = torch.zeros(args.num_envs)
    batch_size = args.num_envs * args.num_steps
    minibatch = batch_size // args.num_minibatches
    updates = max(args.total_timesteps // batch_size, 1)
    results, start = [], time.time()
    for update in range(1, updates + 1):
        for step in range(args.num_steps):
            obs_buf[step], mask_buf[step], dones[step] = obs, mask, done
            with torch.no_grad():
                action, logprob, _, value = agent.act(obs, mask)
            actions[step], logprobs[step], values[step] = action, logprob, value
            next_obs, reward, next_done, infos = env.step(action.numpy())
            rewards[step] = torch.as_tensor(reward)
            obs, mask = torch.as_tensor(next_obs), torch.as_tensor(env.action_masks())
            done = torch.as_tensor(next_done, dtype=torch.float32)
            results += [info["episode"]["r"] for info in infos if "episode" in info]

        with torch.no_grad():  # generalised advantage estimation, bootstrapped from the last value
            advantages = torch.zeros(shape)
            last_gae, next_value = 0.0, agent.value(obs)
            for t in reversed(range(args.num_steps)):
                not_done = 1.0 - (done if t == args.num_steps - 1 else dones[t + 1])
                following = next_value if t == args.num_steps - 1 else values[t + 1]
                delta = rewards[t] + args.gamma * following * not_done - values[t]
                advantages[t] = last_gae = delta + args.gamma * args.gae_lambda * not_done * last_gae
            returns = advantages + values

        flat = lambda x: x.reshape((batch_size,) + x.shape[2:])  # noqa: E731
        b_obs, b_mask, b_actions, b_logprobs = flat(obs_buf), flat(mask_buf), flat(actions), flat(logprobs)
        b_adv, b_returns = flat(advantages), flat(returns)
        for _ in range(args.update_epochs):
            for index in torch.randperm(batch_size).split(minibatch):
                _, new_logprob, entropy, new_value = agent.act(b_obs[index], b_mask[index], b_actions[index].long())
                ratio = (new_logprob - b_logprobs[index]).exp()
                adv = b_adv[index]
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                value_loss = 0.5 * ((new_value - b_returns[index]) ** 2).mean()
                loss = policy_loss + args.vf_coef * value_loss - args.ent_coef * entropy.mean()
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()

        recent = results[-500:]
        win_rate = f"{np.mean(np.array(recent) > 0):.1%} of the last {len(recent)} hands" if recent else "no hand over yet"
        print(f"update {update}/{updates}: {update * batch_size:,} steps, {time.time() - start:.0f} s, "
              f"won {win_rate} against {args.opponent}")

    if args.save:
        state = {f"policy_net.{k}": v for k, v in agent.policy_net.state_dict().items()}
        state.update({f"action_net.{k}": v for k, v in agent.action_net.state_dict().items()})
        save_model(args.save, {k: v.detach().numpy() for k, v in state.items()},
                   {"obs_size": OBS_SIZE, "hidden": [args.hidden, args.hidden], "activation": "relu",
                    "made_by": "examples/cleanrl_masked_ppo.py", "config": dataclasses.asdict(args)})
        print(f"saved {args.save}: skipbo evaluate --agents {args.save} {args.opponent}")


if __name__ == "__main__":
    main()
