"""The observation encoding: fixed size, exact round trip, privacy, and the layout the docstring documents."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import skipbo_env.encoding as encoding
from skipbo_env import Game, Rules
from skipbo_env.actions import hand_play_action
from skipbo_env.cards import deck_counts
from skipbo_env.encoding import (
    DISCARD_DEPTH,
    OBS_HIGH,
    OBS_LOW,
    OBS_SIZE,
    decode_hand,
    decode_observation,
    encode_observation,
    observe,
)

TABLES = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 5},
    {"num_players": 6},
    {"num_players": 4, "partners": True},
    {"num_players": 6, "partners": True, "team_win": "either"},
    {"num_players": 4, "partners": True, "team_stock": "shared"},
    {"num_players": 2, "stock_size": 10, "exhausted_draw": "draw"},
    {"num_players": 3, "decks": 2, "stock_size": 40, "max_turns": 300},
    {"num_players": 2, "stock_size": 15, "max_turn_plays": 3},
    {"num_players": 4, "stock_size": 10, "max_turn_plays": None},
]


def eager_random_action(game: Game, rng: np.random.Generator) -> int:
    """A random legal action, a play to a building pile when there is one: games then complete
    piles, recycle them and end in wins, which uniform play rarely reaches."""
    legal = game.legal_actions()
    plays = [a for a in legal if a < 92]
    choices = plays if plays and rng.random() < 0.9 else legal
    return choices[int(rng.integers(len(choices)))]


def random_positions(settings_: dict, seed: int, every: int = 7):
    """Positions along a random game, every ``every``-th action plus the end."""
    rng = np.random.default_rng(seed)
    game = Game.new(Rules(**settings_), seed=seed)
    step = 0
    while not game.is_over:
        if step % every == 0:
            yield game
        game.step(eager_random_action(game, rng))
        step += 1
    yield game


def expected_view(game: Game, seat: int) -> dict:
    """What ``seat`` may know, computed from the saved state (the public format), not the encoder."""
    state = game.to_dict()
    rules = game.rules
    n = rules.num_players
    shared = rules.team_stock == "shared"

    def stock(s):
        return state["seats"][rules.team_of(s) if shared else s]["stock"]

    seen = [0] * 14
    for value in state["seats"][seat]["hand"] + state["completed"]:
        seen[value] += 1
    for pile in state["building"]:
        for value in pile:
            seen[value] += 1
    for s in range(n):
        if stock(s) and (not shared or rules.team_of(s) == s):
            seen[stock(s)[-1]] += 1
        for pile in state["seats"][s]["discards"]:
            for value in pile:
                seen[value] += 1
    counts = deck_counts(rules.decks)
    seats = []
    for r in range(n):
        s = (seat + r) % n
        discards = state["seats"][s]["discards"]
        seats.append({
            "stock_top": stock(s)[-1] if stock(s) else 0,
            "stock_size": len(stock(s)),
            "hand_size": len(state["seats"][s]["hand"]),
            "discards": [pile[-DISCARD_DEPTH:] for pile in discards],
            "discard_sizes": [len(pile) for pile in discards],
            "buried_counts": [sum(pile[:-DISCARD_DEPTH].count(v) for pile in discards if len(pile) > DISCARD_DEPTH)
                              for v in range(14)],
            "is_partner": rules.partners and s == rules.partner_of(seat),
            "to_act": game.outcome is None and s == game.current_seat,
        })
    hand = sorted(state["seats"][seat]["hand"])
    limit, plays = rules.max_turn_plays, state["plays_this_turn"]
    return {
        "num_players": n,
        "partners": rules.partners,
        "team_win": rules.team_win,
        "team_stock": rules.team_stock,
        "exhausted_draw": rules.exhausted_draw,
        "stock_size": rules.stock_size,
        "decks": rules.decks,
        "max_turns": rules.max_turns,
        "max_turn_plays": limit,
        "hand": hand,
        "hand_counts": [hand.count(v) for v in range(14)],
        "building_next": [len(pile) + 1 for pile in state["building"]],
        "building_sizes": [len(pile) for pile in state["building"]],
        "seats": seats,
        "partner": n // 2 if rules.partners else None,
        "to_act": (game.current_seat - seat) % n if game.outcome is None else None,
        "draw_pile_size": len(state["draw_pile"]),
        "completed_size": len(state["completed"]),
        "unseen_counts": [0] + [counts[v] - seen[v] for v in range(1, 14)],
        "plays_this_turn": plays,
        "turn_plays_left": limit - plays if limit is not None else 0,
        "turn_play_limit_reached": limit is not None and plays == limit,
        "quiet_turns": state["quiet_turns"],
        "turn": state["turn"],
    }


@pytest.mark.parametrize("table", TABLES, ids=lambda t: ",".join(f"{k}={v}" for k, v in t.items()))
def test_decode_recovers_every_seats_view_along_random_games(table):
    for seed in range(2):
        for game in random_positions(table, seed):
            for seat in range(game.num_players):
                vec = encode_observation(game, seat)
                assert vec.shape == (OBS_SIZE,) and vec.dtype == np.float32
                assert np.all(vec >= OBS_LOW) and np.all(vec <= OBS_HIGH)
                assert decode_observation(vec) == expected_view(game, seat)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table=st.sampled_from(TABLES), seed=st.integers(0, 2**32), stop=st.integers(0, 600),
       seat=st.integers(0, 5))
def test_decode_recovers_the_view_at_any_point_of_a_game(table, seed, stop, seat):
    rng = np.random.default_rng(seed)
    game = Game.new(Rules(**table), seed=seed)
    for _ in range(stop):
        if game.is_over:
            break
        game.step(eager_random_action(game, rng))
    seat %= game.num_players
    assert decode_observation(encode_observation(game, seat)) == expected_view(game, seat)


def position(**changes) -> dict:
    """A two-player position with every card placed; ``changes`` override parts of it."""
    deck = deck_counts(1)
    state = {
        "format": "skipbo-state/1",
        "rules": Rules(num_players=2, stock_size=5).to_dict(),
        "seats": [
            {"hand": [5, 13, 12, 3, 3], "stock": [2, 9, 6], "discards": [[3, 7], [2], [], []]},
            {"hand": [], "stock": [4, 4, 10], "discards": [[11, 10, 9, 8, 7, 6, 5, 4, 3, 2], [], [], []]},
        ],
        "building": [[1, 2, 3, 4], [1, 13, 3], [], [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]],
        "completed": [],
        "draw_pile": [],
        "current_seat": 0, "phase": "play", "dealer": 1, "turn": 12, "plays_this_turn": 2, "quiet_turns": 0,
    }
    state.update(changes)
    placed = [0] * 14
    for seat in state["seats"]:
        for value in seat["hand"] + seat["stock"] + [c for pile in seat["discards"] for c in pile]:
            placed[value] += 1
    for value in [c for pile in state["building"] for c in pile] + state["completed"]:
        placed[value] += 1
    state["draw_pile"] = [v for v in range(1, 14) for _ in range(deck[v] - placed[v])]
    return state


def test_a_known_position_decodes_to_what_the_table_shows():
    game = Game.from_dict(position(), seed=0)
    view = decode_observation(encode_observation(game, 0))
    assert view["hand"] == [3, 3, 5, 12, 13]
    assert view["building_next"] == [5, 4, 1, 12]  # the SKIP-BO card on pile 2 stands for the 2
    assert view["building_sizes"] == [4, 3, 0, 11]
    me, left = view["seats"]
    assert (me["stock_top"], me["stock_size"], me["discards"]) == (6, 3, [[3, 7], [2], [], []])
    assert (left["stock_top"], left["hand_size"]) == (10, 0)
    assert left["discards"][0] == [9, 8, 7, 6, 5, 4, 3, 2]  # the top DISCARD_DEPTH cards, bottom to top
    assert left["discard_sizes"] == [10, 0, 0, 0]
    assert left["buried_counts"] == [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0]  # the 11 and 10 under the top 8
    assert me["buried_counts"] == [0] * 14
    assert view["turn"] == 12 and view["plays_this_turn"] == 2 and view["to_act"] == 0


def test_the_turn_play_features_count_down_to_the_limit_and_flag_it():
    rules = Rules(num_players=2, stock_size=5, max_turn_plays=3).to_dict()
    game = Game.from_dict(position(rules=rules), seed=0)
    vec = encode_observation(game, 0)
    view = decode_observation(vec)
    assert (view["max_turn_plays"], view["turn_plays_left"], view["turn_play_limit_reached"]) == (3, 1, False)
    assert vec[encoding.GLOBAL_OFFSETS["turn_plays_left"]] == np.float32(1) * np.float32(1 / 100)
    game.step(hand_play_action(5, 0))  # building pile 1 needs a 5: the third play of the turn
    view = decode_observation(encode_observation(game, 0))
    assert (view["turn_plays_left"], view["turn_play_limit_reached"]) == (0, True)
    assert decode_observation(encode_observation(game, 1))["turn_play_limit_reached"]  # public: seen by all


def test_without_a_turn_play_limit_the_turn_play_features_are_zero():
    rules = Rules(num_players=2, stock_size=5, max_turn_plays=None).to_dict()
    view = decode_observation(encode_observation(Game.from_dict(position(rules=rules), seed=0), 0))
    assert (view["max_turn_plays"], view["turn_plays_left"], view["turn_play_limit_reached"]) == (None, 0, False)


def test_features_are_only_appended_so_the_earlier_731_and_734_entries_keep_their_layout():
    ends = {name: start + size for name, start, size in encoding.LAYOUT_ROWS}
    assert encoding.EARLIER_OBS_SIZES == (731, 734) and ends["seat5.discard_cards"] == 731
    assert [name for name, start, _ in encoding.LAYOUT_ROWS if start >= 731] == [
        "max_turn_plays", "turn_plays_left", "turn_play_limit_reached"] + [f"buried_discards_{r}" for r in range(6)]
    assert ends["turn_play_limit_reached"] == 734 and OBS_SIZE == 734 + 6 * 13
    assert encoding.GLOBAL_OFFSETS["building_size"] == 91 and encoding.SEAT_START == 95 and encoding.SEAT_BLOCK == 106


def test_cards_buried_under_the_top_eight_are_counted_for_their_seat_seen_from_every_seat():
    state = position()
    state["seats"][0]["discards"] = [[4, 4, 1, 2, 3, 5, 6, 7, 8, 9], [13, 12, 11, 10, 9, 8, 7, 6, 5], [], []]
    state["seats"][0]["hand"] = [5]
    state["seats"][1]["discards"] = [[], [], [], []]
    game = Game.from_dict(position(seats=state["seats"]), seed=0)
    mine = decode_observation(encode_observation(game, 0))["seats"][0]["buried_counts"]
    theirs = decode_observation(encode_observation(game, 1))["seats"][1]["buried_counts"]
    assert mine == theirs == [0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1]  # two 4s, and the SKIP-BO under pile 2
    assert decode_observation(encode_observation(game, 0))["seats"][1]["buried_counts"] == [0] * 14


def test_the_opponent_sees_the_same_table_from_its_seat_without_my_hand():
    game = Game.from_dict(position(), seed=0)
    view = decode_observation(encode_observation(game, 1))
    assert view["hand"] == [] and view["to_act"] == 1
    assert view["seats"][1]["stock_top"] == 6 and view["seats"][1]["hand_size"] == 5
    # my hand is hidden from seat 1: its unseen counts still include my cards
    assert view["unseen_counts"][13] == decode_observation(encode_observation(game, 0))["unseen_counts"][13] + 1


def test_hidden_cards_do_not_change_the_observation():
    state = position()
    swapped = copy.deepcopy(state)
    # trade a card of the opponent's stockpile (under the top) with one of the draw pile
    swapped["seats"][1]["stock"][0], swapped["draw_pile"][0] = swapped["draw_pile"][0], swapped["seats"][1]["stock"][0]
    swapped["draw_pile"].reverse()
    assert swapped["seats"][1]["stock"][0] != state["seats"][1]["stock"][0]
    mine = encode_observation(Game.from_dict(state, seed=0), 0)
    assert np.array_equal(mine, encode_observation(Game.from_dict(swapped, seed=0), 0))


@pytest.mark.parametrize("num_players", [4, 6])
def test_partners_are_marked_opposite_me_from_every_seat(num_players):
    game = Game.new(Rules(num_players=num_players, partners=True), seed=3)
    for seat in range(num_players):
        view = decode_observation(encode_observation(game, seat))
        assert view["partner"] == num_players // 2
        assert [s["is_partner"] for s in view["seats"]] == [r == num_players // 2 for r in range(num_players)]
        partner_stock = game.to_dict()["seats"][game.partner_of(seat)]["stock"]
        assert view["seats"][num_players // 2]["stock_top"] == partner_stock[-1]


def test_absent_seats_are_zero_and_flagged_absent():
    vec = encode_observation(Game.new(Rules(num_players=3), seed=1), 0)
    for r in range(encoding.MAX_SEATS):
        block = vec[encoding.SEAT_START + r * encoding.SEAT_BLOCK:encoding.SEAT_START + (r + 1) * encoding.SEAT_BLOCK]
        assert block[encoding.SEAT_OFFSETS["present"]] == (1.0 if r < 3 else 0.0)
        if r >= 3:
            assert not block.any()


@pytest.mark.parametrize("table", TABLES[:6], ids=str)
def test_mask_is_the_engines_legal_actions_for_the_seat_to_act_only(table):
    for game in random_positions(table, seed=5, every=1):
        for seat in range(game.num_players):
            mask = observe(game, seat)["action_mask"]
            assert mask.dtype == np.int8 and mask.shape == (145,)
            expected = game.legal_actions() if seat == game.current_seat and not game.is_over else []
            assert np.flatnonzero(mask).tolist() == expected


def test_each_call_returns_a_new_vector():
    game = Game.new(Rules(), seed=0)
    first = observe(game, 0)
    second = observe(game, 0)
    assert first["observation"] is not second["observation"]
    assert first["action_mask"] is not second["action_mask"]
    first["observation"][:] = 7
    assert not np.array_equal(first["observation"], encode_observation(game, 0))


def test_the_docstring_table_lists_every_field_at_its_offset():
    doc = encoding.__doc__
    seat_start = encoding.SEAT_START
    for name, start, size in encoding.LAYOUT_ROWS:
        if name.startswith("seat"):
            seat, field = name.split(".")
            if seat != "seat0":
                continue
            line = f"+{start - seat_start:<2d} {size:5d}"
            assert any(row.strip().startswith(line.strip().split()[0]) and f" {field}" in row
                       for row in doc.splitlines()), name
        else:
            assert any(row.split()[:2] == [str(start), str(size)] and f" {name}" in row
                       for row in doc.splitlines() if row.strip()), name
    assert f"OBS_SIZE = {OBS_SIZE}" in doc and f"SEAT_BLOCK = {encoding.SEAT_BLOCK}" in doc


def test_decode_refuses_a_vector_of_the_wrong_size():
    with pytest.raises(ValueError, match=f"shape \\({OBS_SIZE},\\)"):
        decode_observation(np.zeros(10, dtype=np.float32))


def test_decode_accepts_the_policy_input_dict():
    game = Game.new(Rules(), seed=2)
    assert decode_observation(observe(game, 1)) == decode_observation(encode_observation(game, 1))


def test_encoding_refuses_a_seat_that_is_not_at_the_table():
    with pytest.raises(ValueError, match="seat=2 is not a seat"):
        encode_observation(Game.new(Rules(), seed=0), 2)


def same_bits(first: np.ndarray, second: np.ndarray) -> bool:
    return first.dtype == second.dtype == np.float32 and np.array_equal(first.view(np.uint32), second.view(np.uint32))


def test_decode_hand_reads_the_hand_alone():
    game = Game.new(Rules(num_players=3), seed=5)
    for seat in range(3):
        vec = encode_observation(game, seat)
        assert decode_hand(vec) == decode_observation(vec)["hand"] == [
            value for value in range(1, 14) for _ in range(game.hand_counts[seat][value])]
