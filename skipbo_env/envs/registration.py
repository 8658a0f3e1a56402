"""Gymnasium's id ``"skipbo/SkipBo-v1"``, registered without making ``import skipbo_env`` load Gymnasium.

``import skipbo_env`` calls :func:`register_when_gymnasium_loads`: when Gymnasium is already
imported the id is registered at once; otherwise a finder on ``sys.meta_path`` waits for the
first ``import gymnasium`` and registers the id just after Gymnasium's own ``__init__`` runs.
Either way the engine itself never imports an RL library. (Gymnasium 1.x reads no plugin entry
points, so some import of ``skipbo_env`` is needed; ``gymnasium.make("skipbo_env:skipbo/SkipBo-v1")``
does that import itself.)

The entry point is ``agents.environments:single_agent_env``, which resolves opponent names.
The retired ``"skipbo/SkipBo-v0"`` is not registered: Gymnasium then refuses it by itself with
``DeprecatedEnv: Environment version v0 for `skipbo/SkipBo` is deprecated. Please use
`skipbo/SkipBo-v1` instead.`` (the version history is in :mod:`skipbo_env.envs.aec`).
``max_episode_steps`` (:data:`MAX_EPISODE_STEPS` learner actions) is a backstop behind the
environment's own ``max_turns`` limit, for tables built with ``max_turns=None``.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys

ENV_VERSION = 1
"""The environments' version, the one constant every versioned name is built from (:data:`ENV_ID`,
:data:`AEC_ENV_NAME`); it moves whenever what an agent sees or may do changes (the version history is in
:mod:`skipbo_env.envs.aec`)."""
ENV_ID = f"skipbo/SkipBo-v{ENV_VERSION}"
"""Gymnasium's id of the single-agent environment."""
AEC_ENV_NAME = f"skipbo_v{ENV_VERSION}"
"""The PettingZoo environment's versioned name: ``from skipbo_env import skipbo_v1``."""
ENTRY_POINT = "agents.environments:single_agent_env"
MAX_EPISODE_STEPS = 10_000
"""Learner actions in one episode before Gymnasium's ``TimeLimit`` truncates it: far above a hand's
length under the default ``max_turns=1000`` (two-player hands end in under 170 turns)."""


def register_envs() -> None:
    """Register :data:`ENV_ID` with Gymnasium (imports Gymnasium; safe to call again)."""
    import gymnasium

    if ENV_ID not in gymnasium.registry:
        gymnasium.register(id=ENV_ID, entry_point=ENTRY_POINT, max_episode_steps=MAX_EPISODE_STEPS)


class _RegisteringLoader(importlib.abc.Loader):
    """Gymnasium's own loader, followed by :func:`register_envs`."""

    def __init__(self, loader) -> None:
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module) -> None:
        self.loader.exec_module(module)
        register_envs()


class _GymnasiumFinder(importlib.abc.MetaPathFinder):
    """Finds ``gymnasium`` the usual way, once, and hands it a loader that registers the id."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader)
        return spec


def register_when_gymnasium_loads() -> None:
    """Register the id now if Gymnasium is loaded, else on its first import (never imports it)."""
    if "gymnasium.envs.registration" in sys.modules:
        register_envs()
    elif not any(isinstance(finder, _GymnasiumFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _GymnasiumFinder())
