"""What the AEC and the single-agent environments share: the table's rules, the deal, the rewards.

The rules come from one ``rules=Rules(...)`` or from every setting as a keyword. The rewards
are paid at the end of a hand, ``reward="win"`` or ``reward="score"``:

- ``"win"``: +1 to the winner (both partners in a team game), -1 to every other seat.
- ``"score"``: ``+p / T`` to the winners and ``-p / T`` to every other seat, where ``p`` is the
  hand's points (``Game.points()``: ``win_points`` plus ``stock_card_points`` per card left in
  the other teams' stockpiles) and ``T`` the match target (``match_end={"target": T}``; 500
  when the match is played by rounds or as a single hand).

A drawn or truncated hand pays 0 to every seat in both modes.

Shaping (``shaping="stockpile"``, the learner's environments: ``SingleAgentEnv`` and the batched
``SkipBoVecEnv``) adds potential-based shaping (Ng, Harada and Russell 1999) to those rewards so
that a learner sees a signal from its first hand, before it ever wins one. With the potential

    Phi(s) = (mean stockpile left of the other sides' seats - own stockpile left) / stock_size

of the learner's position ``s`` (own: the learner's seat; with ``team_stock="shared"`` the team's
pile), each of the learner's steps from ``s`` to its next decision ``s'`` pays
``r + gamma * Phi(s') - Phi(s)``, and the step that ends the hand ``r - Phi(s)`` (the end of a
hand has potential 0). Over a hand the discounted shaped return is the unshaped one minus
``Phi`` of the first position, a constant of the deal: which policy is best does not change.
Give ``gamma`` the learner's discount factor.
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
from skipbo_env.vector.single import CompiledHand

REWARD_MODES = ("win", "score")
SHAPING_MODES = ("none", "stockpile")
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


def hand_info(game, seat: int) -> dict:
    """The info keys both environments give at every step, each with the same type and shape before
    and after the end, so that replay buffers which stack infos (Tianshou's, RLlib's) can store them.
    ``game`` is a rules-engine ``Game`` or a ``CompiledHand`` (both have ``outcome``, ``winners``,
    ``num_players`` and ``points()``; so does :func:`hand_rewards` take either).

    ``outcome``: :data:`NOT_OVER` (``""``) while the hand is in play; ``won``: whether ``seat`` (its
    team) won; ``points``: its points for the hand (0 until it ends); ``winners``: a tuple of
    ``num_players`` bools, ``winners[s]`` whether seat ``s`` won (in the AEC environment seat ``s``
    is agent ``possible_agents[s]``), all False until the end.
    """
    if game.outcome is None:
        return {"outcome": NOT_OVER, "won": False, "points": 0, "winners": (False,) * game.num_players}
    winners = tuple(s in game.winners for s in range(game.num_players))
    return {"outcome": game.outcome, "won": winners[seat], "points": int(game.points()[seat]), "winners": winners}


def check_reward_mode(reward: str) -> str:
    if reward not in REWARD_MODES:
        raise ValueError(f"reward={reward!r} is not allowed: use one of {', '.join(map(repr, REWARD_MODES))}")
    return reward


def check_shaping(shaping: str, gamma: float) -> str:
    """``shaping`` checked against :data:`SHAPING_MODES` and ``gamma`` against [0, 1]."""
    if shaping not in SHAPING_MODES:
        raise ValueError(f"shaping={shaping!r} is not allowed: use one of {', '.join(map(repr, SHAPING_MODES))}")
    if isinstance(gamma, bool) or not isinstance(gamma, (int, float)) or not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma={gamma!r} is not allowed: use a number from 0 to 1 (the learner's discount)")
    return shaping


def stockpile_potential(stock_left, seat: int, teams, stock_size: int) -> float:
    """``Phi`` of the module docstring for ``seat``: ``stock_left[s]`` is the stockpile seat ``s`` plays
    from (its team's when shared), ``teams[s]`` the side of seat ``s``."""
    others = [left for other, left in enumerate(stock_left) if teams[other] != teams[seat]]
    return (sum(others) / len(others) - stock_left[seat]) / stock_size


def game_potential(game, seat: int) -> float:
    """``Phi`` of the learner at ``seat`` in a rules-engine ``Game`` (0 once the hand is over)."""
    if game.is_over:
        return 0.0
    return stockpile_potential([len(stock) for stock in game.stocks], seat, _sides(game.rules), game.rules.stock_size)


def hand_potential(hand, seat: int) -> float:
    """``Phi`` of the learner at ``seat`` in a :class:`skipbo_env.vector.single.CompiledHand` (0 once it is over)."""
    if hand.is_over:
        return 0.0
    return stockpile_potential(hand.stock_left(), seat, _sides(hand.rules), hand.rules.stock_size)


def _sides(rules: Rules) -> list[int]:
    """The side of every seat: its team in a partners game, itself otherwise."""
    return [rules.team_of(s) if rules.partners else s for s in range(rules.num_players)]


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


def start_hand(hand: CompiledHand, rules: Rules, options: dict, hand_seed: int) -> CompiledHand:
    """The compiled hand an episode starts with: :func:`deal_hand`'s hand, in ``hand`` when it plays by the
    same rules (a state plays by its own), else in a new one. Without options the kernels deal it."""
    if options:
        game = deal_hand(rules, options, hand_seed)
        hand = hand if hand.rules == game.rules else CompiledHand(game.rules)
        hand.load(game)
    else:
        hand = hand if hand.rules is rules or hand.rules == rules else CompiledHand(rules)
        hand.deal(hand_seed)
    return hand


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
