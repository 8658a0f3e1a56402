"""The errors a tournament raises: an agent that fails, and an engine that cannot play the agents."""

from __future__ import annotations


class AgentError(RuntimeError):
    """An agent raised or returned an illegal action; names the agent, the seat and the game seed."""


class EngineError(ValueError):
    """The engine asked for cannot play this tournament; the message names the agent or option and the way out."""
