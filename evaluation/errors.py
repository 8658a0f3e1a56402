"""The errors a tournament raises: an agent that fails, and an engine that cannot play the agents."""

from __future__ import annotations


class AgentError(RuntimeError):
    """An agent raised or returned an illegal action; names the agent, the seat and the game seed."""


POLICY_FAILURES = (Exception, SystemExit)
"""What a call into a policy may raise that the run reports as the policy's failure (:class:`AgentError`): any
exception, and ``SystemExit``, so a policy that calls ``sys.exit(0)`` cannot end a run with its own status and no
result. ``KeyboardInterrupt`` stays the user's Ctrl-C."""


class EngineError(ValueError):
    """The engine asked for cannot play this tournament; the message names the agent or option and the way out."""
