"""The bots, declared once: each one's name, Python class, options and kernel twin.

A new bot is one file (its class, and its kernel twin if it has one) plus one line of :data:`REGISTRY`.
Everything that lists bots reads them here: ``agents.load_policy`` (:data:`BOTS`), the kernel bots' spec
parser (:func:`agents.batched.bots.kernel_bot_code`), the players of the batched engine
(:mod:`agents.batched.policies`, :func:`agents.batched.compile_kernels`) and the training config's checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from agents.batched.codes import greedy_code, random_code
from agents.batched.expert import expert_code
from agents.batched.learned import learned_code
from agents.batched.planner import planner_code
from agents.expert import ExpertBot
from agents.expert_weights import SWITCHES as EXPERT_SWITCHES
from agents.greedy import GreedyBot
from agents.learned import LearnedBot
from agents.neural import NeuralBot
from agents.planner import PlannerBot
from agents.planner_weights import SWITCHES as PLANNER_SWITCHES
from agents.random_bot import RandomBot


@dataclass(frozen=True)
class RegisteredBot:
    """One bot: ``name`` (its spec), ``policy`` (the class ``load_policy`` builds), ``switches`` (the true/false
    options its kernel twin takes after a colon, ``planner:avoid_feeding=false``; the class takes them as
    keywords) and ``kernel_code`` (its kernel twin's spec parser: the ``controllers`` code of a spec of this
    bot, ``None`` for another; ``None`` when the bot has no kernel twin)."""

    name: str
    policy: type
    switches: tuple[str, ...] = ()
    kernel_code: Callable[[str], int | None] | None = None

    @property
    def kernel_spec(self) -> str:
        """How its kernel spec is written in help and error texts: ``planner[:options]`` or ``greedy``."""
        return f"{self.name}[:options]" if self.switches else self.name


REGISTRY = (
    RegisteredBot("random", RandomBot, kernel_code=random_code),
    RegisteredBot("greedy", GreedyBot, kernel_code=greedy_code),
    RegisteredBot("planner", PlannerBot, PLANNER_SWITCHES, planner_code),
    RegisteredBot("expert", ExpertBot, EXPERT_SWITCHES, expert_code),
    RegisteredBot("learned", LearnedBot, kernel_code=learned_code),
    RegisteredBot("neural", NeuralBot),
)
BOTS = {bot.name: bot.policy for bot in REGISTRY}
"""Bot name -> its class (``agents.load_policy(name)`` builds one)."""
KERNEL_BOTS = tuple(bot.name for bot in REGISTRY if bot.kernel_code is not None)
"""The bots the kernels play themselves."""
KERNEL_SPECS = ", ".join(bot.kernel_spec for bot in REGISTRY if bot.kernel_code is not None)
"""The kernel bots as help and error texts name them: ``random, greedy, planner[:options], ...``."""
