"""Players for the batched engine: one call chooses the actions of many games at once.

A *batch policy* has ``act_batch(observations, masks) -> actions``: ``observations`` float32
``[k, OBS_SIZE]`` (``encode_observation`` of each game for the seat to act), ``masks`` bool
``[k, 145]``, and it returns ``k`` legal ids; one whose ``concurrent_batches`` is true may be asked for
parts of a batch from several threads at once (``agents.neural.NeuralBot``: its kernels run without the
GIL). :func:`batch_policy` turns what a user has into one:

- ``"random"``, ``"greedy"``, ``"planner"``, ``"expert"`` (with their options,
  ``"planner:avoid_feeding=false"``, ``"expert:threat=false"``) and ``"learned"``: the bots of
  :mod:`agents.batched.bots`, run inside the kernels (no observation is built for them at all);
- an object with ``act_batch``: used as it is;
- an object with ``predict(obs, action_masks=..., deterministic=...)`` (a Stable-Baselines3 /
  sb3-contrib model such as a frozen ``MaskablePPO`` snapshot): one batched forward pass;
- an object with ``logits(obs_batch)`` (``agents.network.NetworkPolicy``): one batched forward
  pass, masked argmax (or sampling when the policy samples);
- an object with ``act(observation_dict)`` (any ``agents`` policy object): asked game by game,
  slow but exact;
- a plain callable ``f(observations, masks) -> actions``.
"""

from __future__ import annotations

import numpy as np

from skipbo_env.actions import NUM_ACTIONS
from agents import registry
from agents.batched.bots import kernel_bot_code



def accepted() -> str:
    """What :func:`batch_policy` accepts, for its error messages (the kernel bots from ``agents.registry``, read
    when a message is written: this module loads while the registry does)."""
    return (f"{', '.join(registry.KERNEL_BOTS)} (options after a colon: planner:avoid_feeding=false), an object "
            "with act_batch(obs, masks), an SB3 model (predict), an object with logits(obs) or act(observation "
            "dict), or a callable f(obs, masks) -> actions")


class KernelBot:
    """A bot the kernels play themselves (``random``, ``greedy``, ``planner[:options]``, ``expert[:options]``,
    ``learned``)."""

    def __init__(self, name: str) -> None:
        code = kernel_bot_code(name)
        if code is None:
            raise ValueError(f"{name!r} is not a kernel bot: use {registry.KERNEL_SPECS}")
        self.name = name
        self.code = code

    def __repr__(self) -> str:
        return f"KernelBot({self.name!r})"


class CallablePolicy:
    """``f(observations, masks) -> actions`` as a batch policy."""

    def __init__(self, function) -> None:
        self.function = function

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.asarray(self.function(observations, masks))

    def __repr__(self) -> str:
        return f"CallablePolicy({getattr(self.function, '__name__', self.function)!r})"


class ModelPolicy:
    """A Stable-Baselines3 model (``predict`` with ``action_masks``): one forward pass per call."""

    def __init__(self, model, deterministic: bool = True) -> None:
        self.model = model
        self.deterministic = deterministic

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions, _ = self.model.predict(observations, action_masks=masks, deterministic=self.deterministic)
        return np.asarray(actions).reshape(-1)

    def __repr__(self) -> str:
        return f"ModelPolicy({type(self.model).__name__})"


class LogitsPolicy:
    """An object with ``logits(obs_batch)``: masked argmax, or sampling (Gumbel-max) when it samples."""

    def __init__(self, network, seed: int | None = None) -> None:
        self.network = network
        self.deterministic = getattr(network, "deterministic", True)
        self.rng = np.random.default_rng(seed)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = np.asarray(self.network.logits(observations), dtype=np.float64)
        if not self.deterministic:
            logits = logits + self.rng.gumbel(size=logits.shape)
        return np.argmax(np.where(masks, logits, -np.inf), axis=1)

    def __repr__(self) -> str:
        return f"LogitsPolicy({self.network!r})"


class PerObservationPolicy:
    """A policy with ``act(observation dict)``, asked once per game."""

    def __init__(self, policy) -> None:
        self.policy = policy

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        masks = masks.astype(np.int8)
        return np.array([self.policy.act({"observation": observations[i], "action_mask": masks[i]})
                         for i in range(len(observations))], dtype=np.int64)

    def __repr__(self) -> str:
        return f"PerObservationPolicy({self.policy!r})"


def batch_policy(spec, seed: int | None = None):
    """The batch policy for ``spec`` (see the module docstring); a clear error for anything else."""
    if isinstance(spec, str):
        if kernel_bot_code(spec) is not None:
            return KernelBot(spec)
        raise ValueError(f"unknown player {spec!r} for the batched engine: use {accepted()} "
                         f"(resolve other names with agents.load_policy first)")
    if isinstance(spec, (KernelBot, CallablePolicy, ModelPolicy, LogitsPolicy, PerObservationPolicy)):
        return spec
    if hasattr(spec, "act_batch") or hasattr(spec, "act_rows"):  # act_rows: it reads the games' records
        return spec
    if hasattr(spec, "predict") and hasattr(spec, "policy"):
        return ModelPolicy(spec)
    if hasattr(spec, "logits"):
        return LogitsPolicy(spec, seed)
    if hasattr(spec, "act"):
        return PerObservationPolicy(spec)
    if callable(spec):
        return CallablePolicy(spec)
    raise ValueError(f"{spec!r} cannot play in the batched engine: use {accepted()}")


def checked_actions(actions, count: int, who) -> np.ndarray:
    """``actions`` as int64[count], refused with a message naming ``who`` when the shape is wrong."""
    actions = np.asarray(actions)
    if actions.shape != (count,) or not np.issubdtype(actions.dtype, np.integer):
        raise ValueError(f"{who!r} returned {actions.shape} {actions.dtype} actions; expected {count} integer ids "
                         f"from 0 to {NUM_ACTIONS - 1}")
    return actions.astype(np.int64, copy=False)
