"""Train sb3-contrib's MaskablePPO on Skip-Bo through Gymnasium's registry, then play the result.

    python examples/sb3_maskable_ppo.py --timesteps 50000 --save runs/sb3-example.zip

``import skipbo_env`` registers "skipbo/SkipBo-v1"; SB3's ``make_vec_env`` builds the environments
with its defaults, and MaskablePPO reads the legal moves through ``action_masks()``. The archive
it saves converts to a safe skipbo model with ``skipbo import-sb3 SAVED.zip OUT.zip``.
"""

from __future__ import annotations

import argparse

import numpy as np
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_util import make_vec_env

import skipbo_env  # noqa: F401 - registers "skipbo/SkipBo-v1" with Gymnasium


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=20_000, help="learner actions to train on")
    parser.add_argument("--envs", type=int, default=4, help="environments stepped together")
    parser.add_argument("--opponent", default="greedy", help="agents.load_policy spec of the other seat")
    parser.add_argument("--stock-size", type=int, default=10, help="cards in each stockpile (short hands learn faster)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save", help="where to save the SB3 archive (.zip)")
    args = parser.parse_args()

    env_kwargs = {"opponents": args.opponent, "stock_size": args.stock_size}
    vec = make_vec_env("skipbo/SkipBo-v1", n_envs=args.envs, seed=args.seed, env_kwargs=env_kwargs)
    n_steps = max(min(256, args.timesteps // args.envs), 8)
    model = MaskablePPO("MlpPolicy", vec, n_steps=n_steps, batch_size=n_steps * args.envs // 4 or 1,
                        policy_kwargs={"net_arch": [256, 256]}, seed=args.seed, device="cpu", verbose=0)
    model.learn(total_timesteps=args.timesteps)
    if args.save:
        model.save(args.save)
        print(f"saved {args.save}; convert it with: skipbo import-sb3 {args.save} OUT.zip")

    # Play a few hands with the masked, deterministic policy and count the wins.
    observations, wins, hands = vec.reset(), 0, 0
    while hands < 8:
        actions, _ = model.predict(observations, action_masks=get_action_masks(vec), deterministic=True)
        observations, rewards, dones, _ = vec.step(actions)
        wins += int(np.sum(rewards[dones] > 0))
        hands += int(np.sum(dones))
    print(f"after {args.timesteps:,} timesteps: won {wins} of {hands} hands against {args.opponent}")


if __name__ == "__main__":
    main()
