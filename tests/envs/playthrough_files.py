"""OpenSpiel-style playthroughs: whole games pinned action by action.

Each file in ``tests/envs/playthroughs/`` holds the rules and seeds of one game (the environment's
and the hand's), then one entry per
action of the PettingZoo environment (``raw_env``, ``reward="score"``): the agent to act, the
observation it sees (as ``[index, value]`` pairs of its nonzero entries), its legal ids, the
action taken, and the rewards, terminations and truncations that follow; and, last, the final
state (``Game.to_dict`` without the generator state). A seeded generator picks each action
among the legal ones, so nothing outside the environment decides the game.

A change in deal, draws, rules, observation, mask or rewards shows up as a difference in one of
these files. Regenerate them only for an intended change of behaviour, say so in the change,
and review the diff::

    python -m tests.envs.playthrough_files          # rewrite every file
    python -m tests.envs.playthrough_files --check  # exit 1 if any file would change
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from skipbo_env.actions import FIRST_DISCARD

FOLDER = Path(__file__).parent / "playthroughs"

GAMES = {
    "two_players": ({"num_players": 2, "stock_size": 4}, 11),
    "three_players_two_decks": ({"num_players": 3, "stock_size": 5, "decks": 2}, 3),
    "four_players_partners_shared": ({"num_players": 4, "stock_size": 3, "partners": True,
                                      "team_stock": "shared"}, 5),
    "four_players_partners_either": ({"num_players": 4, "stock_size": 3, "partners": True,
                                      "team_win": "either"}, 8),
    "six_players_exhausted_draw": ({"num_players": 6, "exhausted_draw": "draw"}, 0),
    "two_players_truncated": ({"num_players": 2, "stock_size": 6, "max_turns": 6}, 1),
    "two_players_turn_limit": ({"num_players": 2, "stock_size": 4, "max_turn_plays": 2, "max_turns": 40}, 4),
}
"""name -> (rule settings, seed). Small stockpiles keep the files short."""


def sparse(vector) -> list[list]:
    """The nonzero entries of an observation as ``[index, value]`` pairs (each float32 in its shortest
    exact decimal form)."""
    vector = np.asarray(vector, dtype=np.float32)
    return [[int(i), float(str(vector[i]))] for i in np.flatnonzero(vector)]


def choose(chooser: np.random.Generator, legal: list[int]) -> int:
    """A seeded pick that plays to a building pile four times in five when it can (so hands end)."""
    plays = [action for action in legal if action < FIRST_DISCARD]
    if plays and chooser.random() < 0.8:
        return int(chooser.choice(plays))
    return int(chooser.choice(legal))


def play(settings: dict, seed: int) -> dict:
    """The playthrough of one game (see the module docstring)."""
    from skipbo_env import raw_env

    env = raw_env(reward="score", **settings)
    env.reset(seed=seed)
    chooser = np.random.default_rng(seed)
    steps = []
    while not any(env.terminations.values()) and not any(env.truncations.values()):
        agent = env.agent_selection
        seen = env.observe(agent)
        legal = np.flatnonzero(seen["action_mask"]).tolist()
        action = choose(chooser, legal)
        env.step(action)
        steps.append({
            "agent": agent, "observation": sparse(seen["observation"]), "legal": legal, "action": action,
            "rewards": {a: float(r) for a, r in env.rewards.items() if r},
            "terminated": sorted(a for a, done in env.terminations.items() if done),
            "truncated": sorted(a for a, done in env.truncations.items() if done),
        })
    game = env.unwrapped.game
    final = game.to_dict()
    final.pop("rng")
    env.close()
    return {"settings": settings, "seed": seed, "hand_seed": game.seed, "steps": steps, "final_state": final}


def write_all(check_only: bool = False) -> list[str]:
    """Regenerate every file (or, with ``check_only``, only list those that would change)."""
    FOLDER.mkdir(exist_ok=True)
    changed = []
    for name, (settings, seed) in GAMES.items():
        path = FOLDER / f"{name}.json"
        text = json.dumps(play(settings, seed), separators=(",", ":")) + "\n"
        if not path.exists() or path.read_text() != text:
            changed.append(path.name)
            if not check_only:
                path.write_text(text)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="only report files that would change")
    args = parser.parse_args(argv)
    changed = write_all(check_only=args.check)
    verb = "would change" if args.check else "rewritten"
    print(f"{len(changed)} of {len(GAMES)} playthroughs {verb}: {', '.join(changed) or 'none'}")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
