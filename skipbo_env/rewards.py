"""What the environments pay at the end of a hand (``reward="win"`` or ``reward="score"``).

- ``"win"``: +1 to the winner (both partners in a team game), -1 to every other seat.
- ``"score"``: ``+p / T`` to the winners and ``-p / T`` to every other seat, where ``p`` is the
  hand's points (``Game.points()``: ``win_points`` plus ``stock_card_points`` per card left in
  the other teams' stockpiles) and ``T`` the match target (``match_end={"target": T}``; 500
  when the match is played by rounds or as a single hand).

A drawn or truncated hand pays 0 to every seat in both modes.
"""

from __future__ import annotations

REWARD_MODES = ("win", "score")
DEFAULT_SCORE_TARGET = 500


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
