"""The bot registry (agents/registry.py): every list of bot names and every spec parser reads it."""

from __future__ import annotations

import pytest

from agents import BOTS, load_policy
from agents.batched import batch_policy
from agents.batched.bots import kernel_bot_code
from agents.batched.policies import KernelBot
from agents.registry import KERNEL_BOTS, KERNEL_SPECS, REGISTRY, RegisteredBot
from training.config import ConfigError, config_from_dict


def test_each_bot_is_declared_once_and_load_policy_builds_its_class():
    names = [bot.name for bot in REGISTRY]
    assert len(names) == len(set(names))
    assert BOTS == {bot.name: bot.policy for bot in REGISTRY}
    for bot in REGISTRY:
        if bot.name != "neural":  # the neural bot reads its shipped model file (tests/agents/test_neural.py)
            assert type(load_policy(bot.name)) is bot.policy


def test_the_registered_switches_are_the_classes_switches():
    for bot in REGISTRY:
        assert bot.switches == getattr(bot.policy, "SWITCHES", ()), bot.name


def test_the_kernel_spec_parser_accepts_exactly_the_registered_kernel_bots():
    assert KERNEL_BOTS == ("random", "greedy", "planner", "expert", "learned")
    for bot in REGISTRY:
        code = kernel_bot_code(bot.name)
        assert (code is not None) == (bot.name in KERNEL_BOTS), bot.name
        assert kernel_bot_code(f"short={bot.name}") == code
    codes = [kernel_bot_code(name) for name in KERNEL_BOTS]
    assert len(set(codes)) == len(codes)


def test_a_switch_of_a_kernel_twin_sets_its_bit_and_an_unknown_one_names_the_registered_switches():
    planner = next(bot for bot in REGISTRY if bot.name == "planner")
    assert kernel_bot_code("planner:avoid_feeding=false") != kernel_bot_code("planner")
    with pytest.raises(ValueError, match=f"its options: {', '.join(planner.switches)}"):
        kernel_bot_code("planner:nonsense=false")


def test_the_batched_engine_and_the_config_checks_name_the_registered_kernel_bots():
    assert KERNEL_SPECS == "random, greedy, planner[:options], expert[:options], learned"
    assert isinstance(batch_policy("expert:threat=false"), KernelBot)
    with pytest.raises(ValueError, match="random, greedy, planner, expert, learned"):
        batch_policy("nobody")
    with pytest.raises(ConfigError, match=KERNEL_SPECS.replace("[", r"\[").replace("]", r"\]")):
        config_from_dict({"backend": "snes", "budget": {"max_minutes": 1}, "snes": {"tables": [["nobody"]]}})


def test_a_new_registry_line_is_a_bot_every_parser_knows(monkeypatch):
    from agents import registry
    from agents.batched.codes import greedy_code
    from agents.greedy import GreedyBot

    class EagerBot(GreedyBot):
        name = "eager"

    line = RegisteredBot("eager", EagerBot, kernel_code=lambda name: greedy_code("greedy") if name == "eager" else None)
    monkeypatch.setattr(registry, "REGISTRY", (*registry.REGISTRY, line))
    assert kernel_bot_code("eager") == kernel_bot_code("greedy")
    assert batch_policy("eager").code == kernel_bot_code("greedy")
