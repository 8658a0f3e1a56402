"""The bot registry (agents/registry.py): every list of bot names, every spec parser and the kernel bots' codes
and dispatch read it. The tests read the registry too: none names the bots."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from agents import BOTS, load_policy
from agents.batched import bots
from agents.batched.policies import batch_policy
from agents.batched.bots import kernel_bot_code
from agents.batched.codes import TABLE_CODES
from agents.batched.policies import KernelBot
from agents.greedy import GreedyBot
from agents.loading import PRETRAINED, SHIPPED
from agents.registry import KERNEL_BOTS, KERNEL_SPECS, REGISTRY, RegisteredBot
from agents.spec_names import ALIASES
from skipbo_env import Rules
from skipbo_cli.main import main
from skipbo_env.vector import VectorGame
from training.config import ConfigError, config_from_dict

KERNEL_LINES = [bot for bot in REGISTRY if bot.kernel is not None]


class EagerBot(GreedyBot):
    """A bot of a registry line the tests add: greedy's class and greedy's kernel under another name."""

    name = "eager"


def test_each_bot_is_declared_once_and_load_policy_builds_its_class():
    names = [bot.name for bot in REGISTRY]
    assert len(names) == len(set(names))
    assert BOTS == {bot.name: bot.policy for bot in REGISTRY}
    for bot in REGISTRY:
        if bot.kernel is not None:  # a bot without a kernel twin may need a model file (the neural bot's)
            assert type(load_policy(bot.name)) is bot.policy


def test_each_kernel_twin_takes_its_class_switches_one_variant_per_mask():
    for bot in KERNEL_LINES:
        module = bots.KERNELS[bot.name]
        assert 0 <= module.variant_of(bot.name, bot.name) < module.VARIANTS
        variants = {module.variant_of(bot.name, f"{bot.name}:{switch}=false") for switch in bot.switches}
        assert len(variants) == len(bot.switches) and all(0 <= v < module.VARIANTS for v in variants), bot.name
        if bot.switches:
            assert module.VARIANTS == 1 << len(bot.switches)
        else:  # a spec with options is not this bot's (the rules engine may play it: learned:weights=...)
            assert kernel_bot_code(f"{bot.name}:weights=x.json") is None


def test_the_codes_are_blocks_in_the_order_of_the_registry():
    assert KERNEL_BOTS == tuple(bot.name for bot in KERNEL_LINES)
    code = 0
    for bot in KERNEL_LINES:
        assert bots.FIRST_CODE[bot.name] == code == kernel_bot_code(bot.name) - bots.KERNELS[bot.name].variant_of(
            bot.name, bot.name)
        assert bots.kernel_bot_of(code) == (bot.name, 0)
        code += bots.KERNELS[bot.name].VARIANTS
        assert bots.kernel_bot_of(code - 1) == (bot.name, bots.KERNELS[bot.name].VARIANTS - 1)
    assert code <= TABLE_CODES
    with pytest.raises(ValueError, match="not the code of a kernel bot"):
        bots.kernel_bot_of(code)


def test_the_kernel_spec_parser_accepts_exactly_the_registered_kernel_bots():
    for bot in REGISTRY:
        code = kernel_bot_code(bot.name)
        assert (code is not None) == (bot.kernel is not None), bot.name
        assert kernel_bot_code(f"short={bot.name}") == code


def test_a_switch_of_a_kernel_twin_sets_its_bit_and_an_unknown_one_names_the_registered_switches():
    for bot in KERNEL_LINES:
        if not bot.switches:
            continue
        assert kernel_bot_code(f"{bot.name}:{bot.switches[0]}=false") != kernel_bot_code(f"{bot.name}:"
                                                                                         f"{bot.switches[0]}=true")
        with pytest.raises(ValueError, match=f"its options: {', '.join(bot.switches)}"):
            kernel_bot_code(f"{bot.name}:nonsense=false")


def test_the_batched_engine_and_the_config_checks_name_the_registered_kernel_bots():
    assert KERNEL_SPECS == ", ".join(f"{bot.name}[:options]" if bot.switches else bot.name for bot in KERNEL_LINES)
    for bot in KERNEL_LINES:
        assert isinstance(batch_policy(bot.name), KernelBot)
    with pytest.raises(ValueError, match=", ".join(KERNEL_BOTS)):
        batch_policy("nobody")
    with pytest.raises(ConfigError, match=KERNEL_SPECS.replace("[", r"\[").replace("]", r"\]")):
        config_from_dict({"backend": "snes", "budget": {"max_minutes": 1}, "snes": {"tables": [["nobody"]]}})


def test_every_other_name_of_a_shipped_player_plays_as_that_player():
    for alias, name in ALIASES.items():
        assert name in SHIPPED and PRETRAINED[alias] == SHIPPED[name]
        assert repr(load_policy(alias)) == repr(load_policy(name))
        assert kernel_bot_code(alias) == kernel_bot_code(name)


def test_a_new_registry_line_gets_the_next_codes_and_its_kernel_plays_them():
    line = RegisteredBot("eager", EagerBot, kernel="agents.batched.greedy")
    kernels = bots.kernel_modules((*REGISTRY, line))
    first = bots.first_codes(kernels)
    eager = bots.code_in("e=eager", kernels, first)
    last = KERNEL_LINES[-1].name
    assert list(kernels) == [*KERNEL_BOTS, "eager"]
    assert eager == first["eager"] == bots.FIRST_CODE[last] + bots.KERNELS[last].VARIANTS
    assert {name: first[name] for name in KERNEL_BOTS} == bots.FIRST_CODE  # the others keep their codes
    chain = bots.dispatch_chain(kernels, first, "test_registry_chain")

    @numba.njit
    def actions(games, legal, cfg, rows, streams, bot, out):
        for i in range(rows.shape[0]):
            out[i] = chain(games[rows[i]], legal, rows[i], cfg, streams, bot)

    engine = VectorGame(Rules(num_players=2, stock_size=5), 8, 3, observations=False, threads=1)
    rows = np.arange(8)
    streams = bots.seed_streams(np.random.default_rng(3), 8)
    by_eager, by_greedy = np.empty(8, dtype=np.int64), np.empty(8, dtype=np.int64)
    for _ in range(20):
        before = streams.copy()
        actions(engine.games, engine.action_mask, engine.cfg, rows, streams, eager, by_eager)
        bots.bot_actions(engine.games, engine.action_mask, engine.cfg, rows, before, kernel_bot_code("greedy"),
                         by_greedy)
        assert by_eager.tolist() == by_greedy.tolist()
        engine.step(by_eager)


@pytest.mark.parametrize("command", ["evaluate", "play"])
def test_the_help_texts_list_the_registered_bots(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"bot names ({', '.join(BOTS)})" in text
    if command == "evaluate":
        assert f"for the kernel bots ({KERNEL_SPECS})" in text


@pytest.mark.parametrize("section", [{"td": {"curve_opponents": ["nobody"]}}, {"td": {"opponents": {"nobody": 1.0}}},
                                     {"neural": {"tables": [["nobody"]]}}, {"neural": {"curve_opponents": ["nobody"]}}],
                         ids=["td.curve_opponents", "td.opponents", "neural.tables", "neural.curve_opponents"])
def test_the_config_errors_name_the_registered_kernel_bots(section):
    with pytest.raises(ConfigError, match=KERNEL_SPECS.replace("[", r"\[").replace("]", r"\]")):
        config_from_dict({"backend": next(iter(section)), **section})
