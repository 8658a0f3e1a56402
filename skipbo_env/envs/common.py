"""What the AEC and the single-agent environments share: the table's rules, the deal, the rewards.

The rules come from one ``rules=Rules(...)`` or from every setting as a keyword. The rewards
are paid at the end of a hand, ``reward="win"`` or ``reward="score"``:

- ``"win"``: +1 to the winner (both partners in a team game), -1 to every other seat.
- ``"score"``: ``+p / T`` to the winners and ``-p / T`` to every other seat, where ``p`` is the
  hand's points (``Game.points()``: ``win_points`` plus ``stock_card_points`` per card left in
  the other teams' stockpiles) and ``T`` the match target (``match_end={"target": T}``; 500
  when the match is played by rounds or as a single hand).

A drawn or truncated hand pays 0 to every seat in both modes.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_HIGH, OBS_LOW
from skipbo_env.game import Game
from skipbo_env.envs.render import render_table
from skipbo_env.rules import Rules

REWARD_MODES = ("win", "score")
DEFAULT_SCORE_TARGET = 500
ENV_MAX_TURNS = 1000
"""The environments' default ``max_turns`` (RULES.md: so that no episode can run for ever; bots
finish two-player hands in under 170 turns). ``max_turns=None`` must be asked for explicitly."""


NOT_OVER = ""
"""``info["outcome"]`` while the hand is in play (then ``"win"``, ``"draw"`` or ``"truncated"``)."""


def observation_space() -> spaces.Dict:
    """The dict observation space every agent of every table shares: the vector and the mask."""
    return spaces.Dict({
        "observation": spaces.Box(low=OBS_LOW, high=OBS_HIGH, dtype=np.float32),
        "action_mask": spaces.Box(low=0, high=1, shape=(NUM_ACTIONS,), dtype=np.int8),
    })


def hand_info(game, seat: int, names: list) -> dict:
    """The info keys both environments give at every step, with the same types before and after the end.

    ``outcome``: :data:`NOT_OVER` (``""``) while the hand is in play; ``won``: whether ``seat`` (its
    team) won; ``points``: its points for the hand (0 until it ends); ``winners``: the winners'
    names (``names[s]``), empty until the end. Fixed keys and types let replay buffers that
    allocate from the first step (Tianshou's) store them.
    """
    if game.outcome is None:
        return {"outcome": NOT_OVER, "won": False, "points": 0, "winners": []}
    return {"outcome": game.outcome, "won": seat in game.winners, "points": game.points()[seat],
            "winners": [names[s] for s in game.winners]}


def check_reward_mode(reward: str) -> str:
    if reward not in REWARD_MODES:
        raise ValueError(f"reward={reward!r} is not allowed: use one of {', '.join(map(repr, REWARD_MODES))}")
    return reward


def hand_rewards(game, reward: str) -> list[float]:
    """Each seat's reward for a finished hand."""
    if game.outcome != "win":
        return [0.0] * game.num_players
    if reward == "win":
        size = 1.0
    else:
        target = game.rules.match_end.get("target", DEFAULT_SCORE_TARGET)
        size = game.points()[game.winners[0]] / target
    return [size if seat in game.winners else -size for seat in range(game.num_players)]


def table_rules(rules: Rules | None, settings: dict) -> Rules:
    """The table's rules: a ``Rules`` object or the settings as keywords (not both).

    Settings without ``max_turns`` get :data:`ENV_MAX_TURNS` (``max_turns=None`` lifts the limit);
    a ``Rules`` object is used as it is. Unknown settings raise ``ValueError`` listing the
    allowed names (``Rules.from_dict``).
    """
    if rules is None:
        return Rules.from_dict({"max_turns": ENV_MAX_TURNS, **settings})
    if not isinstance(rules, Rules):
        raise ValueError(f"rules={rules!r} is not a skipbo_env.Rules; or give the settings as keywords")
    if settings:
        raise ValueError(f"give either rules=Rules(...) or settings as keywords, not both (got {', '.join(settings)})")
    return rules


def deal_hand(rules: Rules, options: dict, hand_seed: int) -> Game:
    """The hand an episode starts with: a new deal, or ``options["state"]``.

    ``options["dealer"]`` fixes the dealer of a new deal. A state must have the table's number of
    seats and a hand in play; it plays by the rules saved in it, and a state saved with its
    generator (``"rng"``, as ``Game.to_dict`` writes) resumes exactly, later shuffles included;
    otherwise later shuffles draw from ``hand_seed``.
    """
    if "state" not in options:
        return Game.new(rules, seed=hand_seed, dealer=options.get("dealer"))
    state = options["state"]
    game = Game.from_dict(state, seed=None if isinstance(state, dict) and "rng" in state else hand_seed)
    if game.num_players != rules.num_players:
        raise ValueError(f"the state has {game.num_players} seats; this environment has {rules.num_players}")
    if game.is_over:
        raise ValueError(f"the state is a finished hand ({game.outcome}): an episode needs a hand in play")
    return game


RENDER_MODES = ("ansi", "human", "rgb_array")


def check_render_mode(render_mode: str | None) -> str | None:
    if render_mode is not None and render_mode not in RENDER_MODES:
        raise ValueError(f"render_mode={render_mode!r} is not allowed: use None, {', '.join(map(repr, RENDER_MODES))}")
    return render_mode


def render_in_mode(render_mode: str | None, game: Game | None, **view):
    """``render()`` of both environments: ``"ansi"`` returns the table as text, ``"human"`` prints
    it, ``"rgb_array"`` returns a picture of it (:mod:`skipbo_env.envs.picture`, uint8 H x W x 3)."""
    if render_mode is None:
        gymnasium.logger.warn("You are calling render method without specifying any render mode.")
        return None
    if game is None:
        raise RuntimeError("render() needs a hand: call reset() first")
    if render_mode == "rgb_array":
        from skipbo_env.envs.picture import render_picture  # matplotlib, loaded only for pictures

        return render_picture(game, **view)
    text = render_table(game, **view)
    if render_mode == "human":
        print(text)
        return None
    return text
