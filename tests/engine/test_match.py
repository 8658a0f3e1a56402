"""RULES.md, "Scoring and matches": every ``match_end`` mode, dealer rotation, running totals."""

from __future__ import annotations

import numpy as np
import pytest

from skipbo_env import IllegalActionError, Match, Rules


def play_out(match: Match, seed: int = 0, limit: int = 200_000) -> None:
    """Random legal play; prefers plays from the stockpile so hands end quickly."""
    rng = np.random.default_rng(seed)
    for _ in range(limit):
        if match.is_over:
            return
        legal = match.game.legal_actions()
        stock_plays = [a for a in legal if 52 <= a < 56 or 72 <= a < 76]
        choices = stock_plays or legal
        match.step(choices[int(rng.integers(len(choices)))])
    raise AssertionError("match did not end")


def test_target_match_ends_when_a_total_reaches_the_target_and_the_dealer_moves_left():
    match = Match(Rules(num_players=3, stock_size=3, match_end={"target": 100}), seed=1)
    play_out(match)
    totals = [0, 0, 0]
    for hand in match.hands:
        for seat in hand["winners"]:
            totals[seat] += hand["points"][seat]
    assert list(match.scores) == totals
    assert max(totals) >= 100 and match.winners == (totals.index(max(totals)),)
    assert sum(1 for t in totals if t >= 100) == 1
    dealers = [hand["record"]["dealer"] for hand in match.hands]
    assert all(b == (a + 1) % 3 for a, b in zip(dealers, dealers[1:]))
    assert len(match.hands) >= 2


def test_rounds_match_plays_exactly_n_hands_and_the_highest_total_wins():
    match = Match(Rules(stock_size=2, match_end={"rounds": 3}), seed=2)
    play_out(match)
    assert len(match.hands) == 3 and match.is_over
    best = max(match.scores)
    assert match.winners == tuple(s for s in range(2) if match.scores[s] == best)


def test_rounds_match_equal_totals_share_the_win():
    match = Match(Rules(num_players=3, max_turns=1, match_end={"rounds": 2}), seed=3)
    play_out(match)
    assert [hand["outcome"] for hand in match.hands] == ["truncated", "truncated"]
    assert match.scores == (0, 0, 0) and match.winners == (0, 1, 2)


def test_single_hand_match_is_one_hand_without_score():
    match = Match(Rules(stock_size=2, match_end={"single_hand": True}), seed=4)
    play_out(match)
    assert len(match.hands) == 1 and match.scores == (0, 0)
    assert match.winners == tuple(match.hands[0]["winners"])


def test_partners_match_keeps_one_running_total_per_team():
    match = Match(Rules(num_players=4, partners=True, stock_size=2, match_end={"target": 80}), seed=5)
    play_out(match)
    assert len(match.team_totals) == 2
    assert match.scores == (match.team_totals[0], match.team_totals[1]) * 2
    assert len(match.winners) == 2 and match.winners[1] - match.winners[0] == 2


def test_the_first_dealer_is_drawn_by_the_seeded_generator():
    dealers = {Match(Rules(num_players=6), seed=seed).game.dealer for seed in range(40)}
    assert dealers == set(range(6))
    assert Match(Rules(), seed=8).game.to_dict() == Match(Rules(), seed=8).game.to_dict()


def test_a_finished_match_refuses_more_actions():
    match = Match(Rules(stock_size=1, match_end={"single_hand": True}), seed=6)
    play_out(match)
    with pytest.raises(IllegalActionError, match="the match is over"):
        match.step(0)
    assert match.to_dict()["match"]["is_over"] is True
