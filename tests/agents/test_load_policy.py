"""agents.load_policy: every spec form it accepts, and clear refusals of everything else."""

from __future__ import annotations

import sys
import textwrap
import types

import pytest

from agents import GreedyBot, PlannerBot, Policy, PolicySpecError, RandomBot, load_policy
from agents.loading import split_options
from agents.registry import REGISTRY
from skipbo_env import Game, Rules
from skipbo_env.encoding import observe

MY_BOT = """
    import numpy as np

    class FirstLegal:
        def __init__(self, offset=0):
            self.offset = offset

        def act(self, observation):
            return int(np.flatnonzero(observation["action_mask"])[self.offset])

    class NoAct:
        pass
"""


@pytest.mark.parametrize("name, cls", [(bot.name, bot.policy) for bot in REGISTRY if bot.kernel is not None])
def test_a_bot_name_gives_that_bot(name, cls):
    policy = load_policy(name)
    assert type(policy) is cls and isinstance(policy, Policy)


def test_options_after_a_colon_reach_the_constructor():
    policy = load_policy("planner:hold_wilds=false,search=True")
    assert policy.hold_wilds is False and policy.search is True


def test_option_values_are_read_as_booleans_numbers_none_or_text():
    _, options = split_options("x.py:C:a=true,b=3,c=2.5,d=none,e=hello")
    assert options == {"a": True, "b": 3, "c": 2.5, "d": None, "e": "hello"}


def test_an_unknown_option_is_refused_with_the_options_the_bot_has():
    with pytest.raises(PolicySpecError, match="no option depth.*hold_wilds"):
        load_policy("planner:depth=3")


def test_a_seed_reaches_the_bot():
    game = Game.new(Rules(), seed=4)
    observation = observe(game, game.current_seat)
    one, two = load_policy("random", seed=9), load_policy("random", seed=9)
    assert [one.act(observation) for _ in range(10)] == [two.act(observation) for _ in range(10)]


def test_a_module_and_class_name_is_imported():
    assert type(load_policy("agents.greedy:GreedyBot")) is GreedyBot


def test_a_class_in_a_python_file_is_loaded_without_installing(tmp_path):
    path = tmp_path / "my_bot.py"
    path.write_text(textwrap.dedent(MY_BOT))
    policy = load_policy(f"{path}:FirstLegal:offset=1")
    assert type(policy).__name__ == "FirstLegal" and policy.offset == 1
    game = Game.new(Rules(), seed=0)
    assert policy.act(observe(game, game.current_seat)) == game.legal_actions()[1]


def test_a_class_without_act_is_refused(tmp_path):
    path = tmp_path / "my_bot.py"
    path.write_text(textwrap.dedent(MY_BOT))
    with pytest.raises(PolicySpecError, match="no act"):
        load_policy(f"{path}:NoAct")


def test_a_missing_file_or_class_is_named(tmp_path):
    with pytest.raises(PolicySpecError, match="does not exist"):
        load_policy(f"{tmp_path}/nowhere.py:Bot")
    path = tmp_path / "my_bot.py"
    path.write_text(textwrap.dedent(MY_BOT))
    with pytest.raises(PolicySpecError, match="defines no 'Missing'"):
        load_policy(f"{path}:Missing")
    with pytest.raises(PolicySpecError, match="cannot import module 'no_such_module_xyz'"):
        load_policy("no_such_module_xyz:Bot")


@pytest.mark.parametrize("spec", ["planer", "", "greedy.zip.txt", "  ", 42, None])
def test_an_unknown_spec_is_refused_with_the_accepted_forms(spec):
    with pytest.raises(PolicySpecError) as error:
        load_policy(spec)
    message = str(error.value)
    assert "random, greedy, planner" in message and ".zip or .pt" in message and "file.py:ClassName" in message


def test_a_saved_model_file_goes_through_agents_saved_model(tmp_path, monkeypatch):
    path = tmp_path / "model.zip"
    path.write_bytes(b"")
    sentinel = RandomBot()
    fake = types.ModuleType("agents.saved_model")
    fake.load_saved_policy = lambda p: sentinel if p == str(path) else None
    monkeypatch.setitem(sys.modules, "agents.saved_model", fake)
    assert load_policy(str(path)) is sentinel


def test_a_saved_model_needs_agents_saved_model(tmp_path, monkeypatch):
    path = tmp_path / "model.pt"
    path.write_bytes(b"")
    monkeypatch.setitem(sys.modules, "agents.saved_model", None)
    with pytest.raises(PolicySpecError, match="needs agents/saved_model.py"):
        load_policy(str(path))


def test_a_missing_saved_model_file_is_named(tmp_path):
    with pytest.raises(PolicySpecError, match="does not exist"):
        load_policy(str(tmp_path / "absent.zip"))


def test_a_policy_object_is_returned_unchanged():
    bot = GreedyBot()
    assert load_policy(bot) is bot


def test_the_shipped_two_player_model_loads_by_name_and_plays_legally():
    from agents.learned import LearnedBot
    from skipbo_env import Game, Rules
    from skipbo_env.encoding import observe

    policy = load_policy("pretrained-2p")
    assert isinstance(policy, LearnedBot)
    with pytest.raises(PolicySpecError, match="a shipped model takes no options"):
        load_policy("pretrained-2p:weights=x.json")
    game = Game.new(Rules(), seed=3)
    for _ in range(30):
        action = policy.act(observe(game, game.current_seat))
        assert action in game.legal_actions()
        game.step(action)


def test_a_short_name_before_the_spec_is_set_aside_and_options_keep_their_equals_signs():
    from agents.loading import short_name, split_name, tag_name

    assert isinstance(load_policy("mine=greedy"), GreedyBot)
    assert split_name("mine=bots/mybot.py:StockFirst") == ("mine", "bots/mybot.py:StockFirst")
    assert split_name("planner:hold_wilds=false") == (None, "planner:hold_wilds=false")
    assert isinstance(load_policy("p=planner:hold_wilds=false"), PlannerBot)
    assert short_name("runs/a/model.zip") == "runs/a/model.zip" and short_name("best=runs/a/model.zip") == "best"
    assert tag_name("runs/a b/model.zip") == "runs_a_b_model.zip" and tag_name("v2.1=planner") == "v2.1"
    from agents.batched.bots import kernel_bot_code

    assert kernel_bot_code("g=greedy") == kernel_bot_code("greedy") is not None


def test_every_shipped_player_loads_by_its_name_and_plays_legally():
    from agents.loading import SHIPPED

    game = Game.new(Rules(), seed=4)
    for name in SHIPPED:
        action = load_policy(name).act(observe(game, game.current_seat))
        assert action in game.legal_actions(), name
    assert repr(load_policy("ppo-2p")) == repr(load_policy(SHIPPED["ppo-2p"]))  # the name, or the file's path
