"""The PettingZoo AEC environment: PettingZoo's own tests, turns, masks, rewards, illegal moves, rendering."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces
from pettingzoo.test import api_test, seed_test
from pettingzoo.utils import wrappers

import skipbo_env
from skipbo_env import IllegalActionError, decode_observation, skipbo_v1
from skipbo_env.actions import END_TURN, FIRST_DISCARD, discard_action, hand_play_action, play_action
from tests.positions import position

pytestmark = pytest.mark.filterwarnings(
    "ignore:Observation is not a NumPy array", "ignore:Observation space for each agent probably",
    "ignore:.*illegal move", "ignore:.*Illegal move",
)

TABLES = [
    {"num_players": 2},
    {"num_players": 3},
    {"num_players": 4},
    {"num_players": 5},
    {"num_players": 6},
    {"num_players": 4, "partners": True},
    {"num_players": 6, "partners": True},
    {"num_players": 4, "partners": True, "team_stock": "shared", "team_win": "either"},
    {"num_players": 2, "stock_size": 10},
    {"num_players": 3, "decks": 2},
    {"num_players": 2, "exhausted_draw": "draw", "max_turns": 40},
]
TABLE_IDS = [",".join(f"{k}={v}" for k, v in table.items()) for table in TABLES]


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
def test_pettingzoo_api_test_passes(table):
    api_test(skipbo_env.env(**table), num_cycles=200)
    api_test(skipbo_env.raw_env(**table), num_cycles=200)


@pytest.mark.parametrize("table", TABLES, ids=TABLE_IDS)
def test_pettingzoo_seed_test_passes(table):
    seed_test(lambda: skipbo_env.env(**table), num_cycles=200)


def play_random_hand(environment, seed: int, check=None, eager: bool = False):
    """Random legal play through the AEC loop; ``check(env, agent, action)`` runs before each step.

    ``eager`` plays to a building pile 9 times in 10 when it can: such hands run long, complete
    and recycle piles and end in wins, which uniform play rarely reaches.
    """
    environment.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for agent in environment.agent_iter():
        observation, reward, terminated, truncated, info = environment.last()
        if terminated or truncated:
            action = None
        else:
            legal = np.flatnonzero(observation["action_mask"])
            plays = legal[legal < FIRST_DISCARD]
            if eager and len(plays) and rng.random() < 0.9:
                legal = plays
            action = int(legal[rng.integers(len(legal))])
        if check is not None:
            check(environment, agent, action)
        environment.step(action)


@pytest.mark.parametrize("table", TABLES[:7], ids=TABLE_IDS[:7])
def test_mask_equals_the_engines_legal_actions_at_every_step(table):
    def check(environment, agent, action):
        game = environment.unwrapped.game
        if action is None:
            return
        seat = environment.unwrapped.agent_name_mapping[agent]
        assert seat == game.current_seat
        for other in environment.agents:
            mask = environment.observe(other)["action_mask"]
            expected = game.legal_actions() if other == agent else []
            assert np.flatnonzero(mask).tolist() == expected
        steps.append(action)

    steps: list[int] = []
    for seed in range(3):
        play_random_hand(skipbo_env.env(**table), seed, check, eager=seed > 0)
    assert len(steps) > 300


def test_the_acting_seat_keeps_the_turn_until_its_discard():
    environment = skipbo_env.raw_env(num_players=3)
    environment.reset(seed=4)
    rng = np.random.default_rng(4)
    turns_seen = 0
    while not any(environment.terminations.values()):
        before = environment.agent_selection
        seat = environment.agent_name_mapping[before]
        legal = environment.game.legal_actions()
        plays = [a for a in legal if a < FIRST_DISCARD]
        action = plays[0] if plays and rng.random() < 0.7 else legal[rng.integers(len(legal))]
        environment.step(action)
        if environment.game.is_over:
            break
        if action < FIRST_DISCARD:
            assert environment.agent_selection == before
        else:
            assert environment.agent_selection == f"player_{(seat + 1) % 3}"
            turns_seen += 1
    assert turns_seen > 10


def finish_position(**rules):
    """Seat 0 to act, its stockpile down to a 1: playing it (id 52) wins the hand."""
    n = rules.get("num_players", 2)
    seats = [{"hand": [7, 7, 8, 9, 10], "stock": [1]}] + [{"stock": [12 - s] * (3 + s)} for s in range(1, n)]
    return position(rules=rules, seats=seats, current_seat=0, turn=5)


WIN = play_action(13, 0)


def finished_environment(reward="win", **rules):
    environment = skipbo_env.env(reward=reward, **rules)
    environment.reset(seed=0, options={"state": finish_position(**rules)})
    environment.step(WIN)
    return environment


def collect_final_rewards(environment) -> dict:
    rewards = {}
    for agent in environment.agent_iter():
        _, reward, terminated, truncated, info = environment.last()
        assert terminated and not truncated
        assert info["outcome"] == "win"
        rewards[agent] = reward
        environment.step(None)
    assert environment.agents == []
    return rewards


def test_the_winner_gets_plus_one_and_every_other_seat_minus_one():
    environment = finished_environment(num_players=3)
    assert environment.infos["player_1"] == {"outcome": "win", "won": False, "points": 0,
                                             "winners": (True, False, False)}
    assert collect_final_rewards(environment) == {"player_0": 1.0, "player_1": -1.0, "player_2": -1.0}


def test_both_partners_win_a_team_game():
    rules = {"num_players": 4, "partners": True, "team_win": "either"}
    environment = finished_environment(**rules)
    rewards = collect_final_rewards(environment)
    assert rewards == {"player_0": 1.0, "player_1": -1.0, "player_2": 1.0, "player_3": -1.0}


def test_score_reward_pays_the_hands_points_over_the_target():
    # the other stockpiles hold 4 and 5 cards: 25 + 9 * 5 = 70 points
    environment = finished_environment(reward="score", num_players=3)
    rewards = collect_final_rewards(environment)
    assert rewards == pytest.approx({"player_0": 70 / 500, "player_1": -70 / 500, "player_2": -70 / 500})
    environment = finished_environment(reward="score", num_players=2, match_end={"target": 200})
    assert collect_final_rewards(environment) == pytest.approx({"player_0": 45 / 200, "player_1": -45 / 200})


def test_max_turns_truncates_with_no_reward():
    environment = skipbo_env.env(num_players=2, max_turns=6)
    outcome = []

    def check(env, agent, action):
        if action is None:
            _, reward, terminated, truncated, info = env.last()
            outcome.append((reward, terminated, truncated, info["outcome"]))

    play_random_hand(environment, 1, check)
    assert outcome == [(0.0, False, True, "truncated")] * 2
    assert environment.agents == []


def test_a_drawn_hand_pays_nothing():
    environment = skipbo_env.env(num_players=2, exhausted_draw="draw")
    finals = []

    def check(env, agent, action):
        if action is None:
            finals.append(env.last()[1:])

    play_random_hand(environment, 2, check)
    assert [reward for reward, *_ in finals] == [0.0, 0.0]
    assert all(info["outcome"] == "draw" and terminated for _, terminated, _, info in finals)


def test_raw_env_raises_on_an_illegal_action_and_keeps_the_game():
    environment = skipbo_env.raw_env(num_players=2)
    environment.reset(seed=0)
    before = environment.game.to_dict()
    agent = environment.agent_selection
    with pytest.raises(IllegalActionError, match="end turn"):
        environment.step(END_TURN)
    with pytest.raises(IllegalActionError, match="not an action id"):
        environment.step(1.5)
    assert environment.game.to_dict() == before and environment.agent_selection == agent


def test_wrapped_env_ends_the_hand_on_an_illegal_action():
    environment = skipbo_env.env(num_players=3)
    environment.reset(seed=0)
    offender = environment.agent_selection
    environment.step(END_TURN)
    rewards = {}
    for agent in environment.agent_iter():
        _, reward, terminated, truncated, _ = environment.last()
        assert terminated
        rewards[agent] = reward
        environment.step(None)
    assert rewards[offender] == -1.0
    assert [r for a, r in rewards.items() if a != offender] == [0.0, 0.0]


def test_env_is_pettingzoos_wrapper_stack_around_raw_env():
    environment = skipbo_env.env(num_players=3)
    assert isinstance(environment, wrappers.OrderEnforcingWrapper)
    assert isinstance(environment.env, wrappers.AssertOutOfBoundsWrapper)
    assert isinstance(environment.env.env, wrappers.TerminateIllegalWrapper)
    assert isinstance(environment.env.env.env, skipbo_v1.raw_env)
    assert environment.unwrapped is environment.env.env.env
    assert isinstance(environment.action_space("player_0"), spaces.Discrete)


def pettingzoo_wrapped(**table):
    """raw_env in PettingZoo's own wrapper classes, stacked as ``env()`` stacks them."""
    environment = wrappers.TerminateIllegalWrapper(skipbo_env.raw_env(**table), illegal_reward=-1)
    return wrappers.OrderEnforcingWrapper(wrappers.AssertOutOfBoundsWrapper(environment))


def snapshot(environment) -> tuple:
    """Everything an AEC loop can read after a step."""
    observation, reward, terminated, truncated, info = environment.last()
    return (environment.agent_selection, list(environment.agents), environment.num_agents,
            dict(environment.rewards), dict(environment._cumulative_rewards), dict(environment.terminations),
            dict(environment.truncations), dict(environment.infos), observation["observation"].tobytes(),
            observation["action_mask"].tobytes(), reward, terminated, truncated, info)


def snapshot_after_hand(environment) -> tuple:
    return environment.agents, environment.rewards, environment._cumulative_rewards, environment.unwrapped.game.outcome


@pytest.mark.parametrize("table", [{"num_players": 2}, {"num_players": 4, "partners": True}], ids=["2", "4p"])
def test_env_behaves_as_pettingzoos_own_wrappers_illegal_moves_included(table):
    """Step by step against the unmodified PettingZoo wrappers, one hand in three ending on an illegal id."""
    ended_by_illegal_ids = 0
    for seed in range(6):
        ours, theirs = skipbo_env.env(**table), pettingzoo_wrapped(**table)
        ours.reset(seed=seed)
        theirs.reset(seed=seed)
        rng = np.random.default_rng(seed)
        illegal_at = rng.integers(3, 25) if seed % 3 == 0 else -1
        for step, agent in enumerate(ours.agent_iter()):
            assert snapshot(ours) == snapshot(theirs)
            _, _, terminated, truncated, _ = ours.last()
            mask = ours.observe(agent)["action_mask"]
            if terminated or truncated:
                action = None
            elif step == illegal_at:
                action = int(np.flatnonzero(mask == 0)[0])
            else:
                legal = np.flatnonzero(mask)
                action = int(legal[rng.integers(len(legal))])
            ours.step(action)
            theirs.step(action)
        assert theirs.agents == [] and snapshot_after_hand(ours) == snapshot_after_hand(theirs)
        ended_by_illegal_ids += ours.unwrapped.game.outcome is None
    assert ended_by_illegal_ids == 2


def test_env_ends_the_hand_on_an_illegal_id_as_terminate_illegal_wrapper_does(caplog):
    environment = skipbo_env.env(num_players=2)
    environment.reset(seed=3)
    offender = environment.agent_selection
    environment.step(END_TURN)
    assert "Illegal move made" in caplog.text
    assert environment.terminations == environment.truncations == {"player_0": True, "player_1": True}
    assert environment._cumulative_rewards[offender] == -1.0
    assert environment.unwrapped.game.outcome is None  # the game itself never saw the id


def test_env_asserts_an_id_outside_the_action_space():
    environment = skipbo_env.env(num_players=2)
    environment.reset(seed=0)
    with pytest.raises(AssertionError, match="not in action space"):
        environment.step(145)


def test_env_refuses_attributes_before_reset_as_order_enforcing_wrapper_does():
    ours, theirs = skipbo_env.env(), pettingzoo_wrapped()
    for name in ("agents", "agent_selection", "terminations", "truncations", "rewards", "infos", "num_agents",
                 "_cumulative_rewards", "_private_name"):
        with pytest.raises(AttributeError) as ours_error:
            getattr(ours, name)
        with pytest.raises(AttributeError) as theirs_error:
            getattr(theirs, name)
        assert str(ours_error.value) == str(theirs_error.value)


def test_an_attribute_set_on_env_reaches_the_unwrapped_environment():
    environment = skipbo_env.env(num_players=2)
    environment.reset(seed=0)
    other = next(agent for agent in environment.agents if agent != environment.agent_selection)
    environment.agent_selection = other
    assert environment.unwrapped.agent_selection == other == environment.env.env.agent_selection


def _gymnasium_contains(space, action) -> bool:
    """gymnasium's answer; 1.2 (the version ray[rllib] pins) raises OverflowError for an int past
    int64, where later releases answer False, the answer ours gives on every version."""
    try:
        return space.contains(action)
    except OverflowError:
        return False


def test_the_action_space_contains_what_gymnasiums_discrete_contains():
    ours, theirs = skipbo_env.raw_env().action_space("player_0"), spaces.Discrete(145)
    for action in (0, 144, 145, -1, True, 2**70, 3.0, None, "3", np.int64(3), np.uint64(3), np.array(7), np.int8(-2)):
        assert ours.contains(action) is _gymnasium_contains(theirs, action), action
    assert ours == theirs and repr(ours) == "Discrete(145)"


def test_numpy_integer_actions_are_accepted():
    environment = skipbo_env.raw_env(num_players=2)
    environment.reset(seed=0)
    legal = environment.game.legal_actions()
    environment.step(np.int64(legal[-1]))
    assert environment.game.turn == 1 or environment.game.plays_this_turn == 1


def test_unknown_settings_are_refused_with_the_allowed_names():
    with pytest.raises(ValueError, match="unknown setting.*num_players"):
        skipbo_env.env(players=2)
    with pytest.raises(ValueError, match="reward='points' is not allowed"):
        skipbo_env.env(reward="points")
    with pytest.raises(ValueError, match="render_mode"):
        skipbo_env.env(render_mode="video")


def test_reset_seed_makes_the_deal_reproducible():
    first, second = skipbo_env.raw_env(), skipbo_env.raw_env()
    first.reset(seed=11)
    second.reset(seed=11)
    assert np.array_equal(first.observe("player_0")["observation"], second.observe("player_0")["observation"])
    second.reset(seed=12)
    assert first.game.to_dict()["draw_pile"] != second.game.to_dict()["draw_pile"]


def test_reset_options_set_the_dealer_or_load_a_position():
    environment = skipbo_env.raw_env(num_players=3)
    environment.reset(seed=0, options={"dealer": 2})
    assert environment.agent_selection == "player_0"
    seats = [{"stock": [6]}, {"hand": [1, 2, 3, 4, 5], "stock": [7]}, {"stock": [8]}]
    state = position(rules={"num_players": 3}, seats=seats, current_seat=1)
    environment.reset(options={"state": state})
    assert environment.agent_selection == "player_1"
    assert decode_observation(environment.observe("player_1")["observation"])["hand"] == [1, 2, 3, 4, 5]
    with pytest.raises(ValueError, match="2 seats"):
        environment.reset(options={"state": position(seats=[{"stock": [6]}, {"stock": [7]}], phase="draw")})


def test_observations_are_from_each_agents_own_seat():
    environment = skipbo_env.raw_env(num_players=4, partners=True)
    environment.reset(seed=3)
    acting = environment.agent_name_mapping[environment.agent_selection]
    for agent, seat in environment.agent_name_mapping.items():
        view = decode_observation(environment.observe(agent)["observation"])
        assert view["to_act"] == (acting - seat) % 4
        assert view["partner"] == 2
        assert len(view["hand"]) == environment.game.hand_sizes[seat]


def test_ansi_render_shows_the_table_and_only_the_acting_hand():
    environment = skipbo_env.env(render_mode="ansi", num_players=2)
    seats = [{"hand": [3, 13], "stock": [5]}, {"hand": [9, 9, 9], "stock": [6]}]
    environment.reset(options={"state": position(seats=seats)})
    text = environment.render()
    assert "building piles" in text and "player_1" in text
    assert "hand of player_0: 3 SB" in text and "9 9 9" not in text
    environment.step(hand_play_action(13, 0))
    assert "[1] 1 (SB)" in environment.render()
    environment.step(discard_action(3, 0))
    last_line = environment.render().splitlines()[-1]
    assert last_line.startswith("hand of player_1:") and "9 9 9" in last_line


def test_human_render_prints_the_table(capsys):
    environment = skipbo_env.env(render_mode="human", num_players=2)
    environment.reset(seed=0)
    assert "player_0" in capsys.readouterr().out
    environment.close()


def test_metadata_names_the_environment():
    environment = skipbo_env.env()
    assert environment.metadata["name"] == "skipbo_v1"
    assert environment.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    assert str(environment) == "skipbo_v1"
    environment.reset()
    assert environment.possible_agents == ["player_0", "player_1"]
    assert environment.action_space("player_0").n == 145


def test_the_versioned_name_is_the_aec_module_as_pettingzoo_names_it():
    from skipbo_env import skipbo_v1

    environment = skipbo_v1.env()
    assert str(environment) == skipbo_v1.raw_env.metadata["name"] == "skipbo_v1"
    assert skipbo_v1.env is skipbo_env.env


def test_the_retired_v0_name_is_refused_with_a_message_naming_v1():
    with pytest.raises(ImportError, match=r"^skipbo_v0 is retired .*use skipbo_v1: from skipbo_env import skipbo_v1$"):
        from skipbo_env import skipbo_v0  # noqa: F401
    with pytest.raises(AttributeError, match="skipbo_v2"):
        skipbo_env.skipbo_v2  # noqa: B018 - an unknown name stays an AttributeError


def test_the_docstring_keeps_a_version_history_for_every_observation_size():
    from skipbo_env.envs import aec

    history = aec.__doc__[aec.__doc__.index("### Version History"):]
    for version, size in (("* v1", "`OBS_SIZE` values"), ("* v0, amended", "734 values"), ("* v0:", "731 values")):
        entry = history[history.index(version):].split("\n* ")[0]
        assert size in entry, (version, entry)


def test_a_rules_object_may_stand_for_the_settings():
    from skipbo_env import Rules

    environment = skipbo_env.raw_env(rules=Rules(num_players=3, stock_size=10))
    assert environment.possible_agents == ["player_0", "player_1", "player_2"]
    assert environment.rules.stock_size == 10
    with pytest.raises(ValueError, match="not both"):
        skipbo_env.raw_env(rules=Rules(), num_players=3)


def test_importing_the_package_loads_no_rl_library():
    import subprocess
    import sys

    code = ("import sys, skipbo_env; skipbo_env.encode_observation; "
            "print([m for m in ('gymnasium', 'pettingzoo', 'torch') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_saved_game_resumes_exactly_in_the_environment():
    """Saved with its generator, a position replays the same shuffles when completed piles recycle."""
    rng = np.random.default_rng(8)

    def eager(game):
        legal = game.legal_actions()
        plays = [a for a in legal if a < FIRST_DISCARD]
        choices = plays if plays and rng.random() < 0.9 else legal
        return choices[rng.integers(len(choices))]

    environment = skipbo_env.raw_env(num_players=2, stock_size=20)
    environment.reset(seed=8)
    for _ in range(150):
        environment.step(eager(environment.game))
    original = environment.game
    resumed = skipbo_env.raw_env(num_players=2, stock_size=20)
    resumed.reset(seed=123, options={"state": original.to_dict()})
    recycled = False
    while not original.is_over:
        action = eager(original)
        draw_pile = len(original.draw_pile)
        original.step(action)
        resumed.step(action)
        recycled |= len(original.draw_pile) > draw_pile
        assert resumed.game.to_dict() == original.to_dict()
    assert recycled


def test_the_environment_truncates_hands_at_1000_turns_unless_told_otherwise():
    from skipbo_env import Rules

    assert skipbo_env.raw_env().rules.max_turns == 1000
    assert skipbo_env.raw_env(num_players=3, max_turns=None).rules.max_turns is None
    assert skipbo_env.raw_env(rules=Rules()).rules == Rules()  # a Rules object is used as it is
