"""The bots, declared once: each one's name, Python class and kernel twin.

A new bot is one file (its class) plus one line of :data:`REGISTRY`; a bot the kernels also play is one
more file, its kernel twin ``agents/batched/<bot>.py``, which the line names (``docs/layout.md``, "Adding a
kernel bot", walks it through). Everything that lists bots reads them here: ``agents.load_policy``
(:data:`BOTS`), the kernel bots' codes, spec parser and dispatch (:mod:`agents.batched.bots`: each kernel bot
takes a block of codes, in the order of :data:`REGISTRY`), the players of the batched engine
(:mod:`agents.batched.policies`, :func:`agents.batched.seating.compile_kernels`), the training config's checks and the
kernel-played opponents of a ``SingleAgentEnv`` (:mod:`agents.batched.table`, through :func:`kernel_of`: only the exact
class a line names is played by its kernel).
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.expert import ExpertBot
from agents.greedy import GreedyBot
from agents.learned import LearnedBot
from agents.neural import NeuralBot
from agents.residual import ResidualBot
from agents.planner import PlannerBot
from agents.random_bot import RandomBot


@dataclass(frozen=True)
class RegisteredBot:
    """One bot: ``name`` (its spec), ``policy`` (the class ``load_policy`` builds; its ``SWITCHES``, if it has
    any, are the true/false options it takes as keywords and after a colon, ``planner:avoid_feeding=false``)
    and ``kernel`` (the module of its kernel twin, which declares ``VARIANTS``, ``variant_of`` and ``act``:
    :mod:`agents.batched.codes`; ``None`` when the kernels do not play it)."""

    name: str
    policy: type
    kernel: str | None = None

    @property
    def switches(self) -> tuple[str, ...]:
        """The true/false options of the bot (its class's ``SWITCHES``)."""
        return tuple(getattr(self.policy, "SWITCHES", ()))

    @property
    def kernel_spec(self) -> str:
        """How its kernel spec is written in help and error texts: ``planner[:options]`` or ``greedy``."""
        return f"{self.name}[:options]" if self.switches else self.name


REGISTRY = (
    RegisteredBot("random", RandomBot, kernel="agents.batched.random_bot"),
    RegisteredBot("greedy", GreedyBot, kernel="agents.batched.greedy"),
    RegisteredBot("planner", PlannerBot, kernel="agents.batched.planner"),
    RegisteredBot("expert", ExpertBot, kernel="agents.batched.expert"),
    RegisteredBot("learned", LearnedBot, kernel="agents.batched.learned"),
    RegisteredBot("neural", NeuralBot),
    RegisteredBot("residual", ResidualBot),
)
BOTS = {bot.name: bot.policy for bot in REGISTRY}
"""Bot name -> its class (``agents.load_policy(name)`` builds one)."""
KERNEL_BOTS = tuple(bot.name for bot in REGISTRY if bot.kernel is not None)
"""The bots the kernels play themselves."""
KERNEL_SPECS = ", ".join(bot.kernel_spec for bot in REGISTRY if bot.kernel is not None)
"""The kernel bots as help and error texts name them: ``random, greedy, planner[:options], ...``."""


def kernel_of(kind: type) -> str | None:
    """The module of the kernel twin that plays objects of exactly the class ``kind`` (a line of :data:`REGISTRY`
    names that class and a kernel), else ``None``: the one place a class is matched to a kernel. A subclass is not
    its parent's bot (it may change any method), so a subclass without a line of its own is played in Python."""
    return next((bot.kernel for bot in REGISTRY if bot.policy is kind and bot.kernel is not None), None)
