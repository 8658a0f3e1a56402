"""A Gymnasium environment in which one learner plays one seat and given policies play the others.

``SingleAgentEnv(opponents, seat=0, random_seat=False, reward="win", **settings)``, the settings
being every ``Rules`` setting as a keyword (or one ``rules=Rules(...)``):

## Action Space
``Discrete(145)``, the action ids of RULES.md. :meth:`SingleAgentEnv.action_masks` gives the
learner's legal ids (sb3-contrib's ``MaskablePPO`` reads it directly); ``info["action_mask"]``
holds the same as int8.

## Observation Space
The flat float32 vector of :mod:`skipbo_env.encoding` (``Box`` of ``OBS_SIZE``), always from
the learner's seat: seat block 0 is the learner. With ``observation="dict"`` it is the AEC
environment's ``{"observation": vector, "action_mask": int8[145]}`` (``Dict`` space), for learners
that read the mask from the observation (RLlib, Tianshou).

## Info
The same keys at every step: ``seat``, ``action_mask`` (int8), ``illegal_action`` (the episode
ended on an illegal action), ``outcome`` (``""`` until the hand ends, then ``"win"``, ``"draw"``
or ``"truncated"``), ``won`` (the learner or its team won), ``points`` (the learner's points, 0
until the end) and ``winners`` (a tuple of ``num_players`` bools: ``winners[s]`` whether seat
``s`` won, all False until the end). Every value keeps its type and shape from step to step, so
buffers that stack infos (Tianshou's, RLlib's) store a whole episode.

## Opponents
``opponents`` is one policy for every other seat, or a list with one per other seat in turn
order from the learner (the seat on its left first). A policy is any object with
``act(observation_dict) -> int``, given ``skipbo_env.observe(game, seat)`` for its own seat.
The environment resolves no names: ``agents.load_policy("greedy")`` makes a policy of a name,
and ``agents.environments.single_agent_env(opponents="greedy", ...)`` (what the Gymnasium id
below runs) builds the environment from names, one instance per seat. In a partners game the learner's partner is one of these seats too (the
reward is the team's). A policy with ``reset(seed)`` is reset at the start of every hand with a
seed drawn from the environment's generator. An opponent that returns an illegal id raises
``IllegalActionError`` naming the seat.

Opponents whose class offers ``compiled_opponents(rules, opponents)`` (the same function for every
opponent; it returns a player or ``None``) are played by what it returns: an object with
``start(hand, learner_seat, seeds)`` (after each deal; it resets the opponents, ``opponents[k].reset(seeds[k])``
in turn, or does what that does: the seeds are drawn as for Python opponents), ``play(hand, action)``
(the learner's action and every opponent move up to its next turn, raising ``IllegalActionError``
for an illegal learner action with the hand unchanged) and ``play_opponents(hand)``, each on the
environment's :class:`~skipbo_env.vector.single.CompiledHand`. ``agents``' bots offer it
(:mod:`agents.batched.table`): an opponent whose exact class ``agents.registry`` plays with a kernel
twin the table runs (``GreedyBot``, ``RandomBot``) makes the same moves, draw for draw, in one
compiled call per learner step. Any other opponent is asked ``act`` in Python.

## Rewards
The learner's, paid when the hand ends: ``reward="win"`` +1 for a win (its team's, in a
partners game), -1 for a loss, 0 for a drawn or truncated hand; ``reward="score"`` the hand's
points over the match target (see :mod:`skipbo_env.envs.common`). An illegal action ends the hand
with ``illegal_reward`` (-1) when ``illegal_action="terminate"`` (the default, as PettingZoo's
``TerminateIllegalWrapper`` does) and raises ``IllegalActionError`` with ``"raise"``.
``shaping="stockpile"`` adds potential-based shaping on the stockpiles to every step (discount
``gamma``, the learner's): ``gamma * Phi(next position) - Phi(this one)``, ``-Phi`` on the step
that ends the hand, so a learner has a signal before it wins a hand and the best policy stays the
same (see :mod:`skipbo_env.envs.common`); ``shaping="none"`` (the default) pays the result only.

## Episode End
One episode is one hand. After the learner's discard the opponents play until it is the
learner's turn again or the hand ends, so every observation, mask and reward the learner gets
is its own. ``terminated`` when the hand is won or drawn (or on an illegal action), ``truncated``
when ``max_turns`` is reached: 1000 unless the settings say otherwise (``max_turns=None`` lifts
the limit; a ``rules=Rules(...)`` object is used as it is), so that no episode runs for ever.
When the opponents end a freshly dealt hand before the learner's first action (possible only
with tiny stockpiles), :meth:`reset` deals again.

## Registration
``import skipbo_env`` registers it with Gymnasium as ``"skipbo/SkipBo-v1"`` (without importing
Gymnasium, :mod:`skipbo_env.envs.registration`), built by ``agents.environments.single_agent_env``
so that opponents may be named: ``gymnasium.make("skipbo/SkipBo-v1", opponents="greedy",
num_players=3)``. Gymnasium's ``TimeLimit`` stops an episode after 10,000 learner actions, a
backstop behind ``max_turns``.

## Seeding
``reset(seed=...)`` seeds the one generator (``self.np_random``) from which the learner's seat
(with ``random_seat=True``), every deal and every opponent's reset seed are drawn.

## Version History
The Gymnasium id follows the PettingZoo environment's version (:mod:`skipbo_env.envs.aec`); the
retired ``"skipbo/SkipBo-v0"`` is refused by Gymnasium with a message naming ``"skipbo/SkipBo-v1"``.

* v1: the observation of ``skipbo_v1`` (the buried discard cards counted per seat); ``observation="dict"``;
  the same info keys at every step. Actions (``Discrete(145)``) and rules unchanged.
* v0, amended: the observation and the ``max_turn_plays`` rule of ``skipbo_v0``, amended; ``max_turns``
  defaults to 1000.
* v0: initial release: the observation of ``skipbo_v0``, actions ``Discrete(145)``.
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import OBS_HIGH, OBS_LOW
from skipbo_env.envs.common import (RENDER_MODES, check_render_mode, check_reward_mode, check_shaping, hand_info,
                                    hand_potential, hand_rewards, observation_space, render_in_mode, start_hand,
                                    table_rules)
from skipbo_env.envs.registration import ENV_ID, register_envs  # noqa: F401 - ENV_ID is part of this module's interface
from skipbo_env.game import Game, IllegalActionError
from skipbo_env.rules import Rules
from skipbo_env.vector.single import OVER, CompiledHand

ILLEGAL_ACTION_MODES = ("terminate", "raise")
OBSERVATION_KINDS = ("flat", "dict")
MAX_REDEALS = 1000
_OPTIONS = ("seat", "random_seat", "reward", "illegal_action", "illegal_reward", "render_mode", "observation",
            "shaping", "gamma")
"""The constructor's keywords that are not rule settings."""


def opponents_for(opponents, count: int) -> list:
    """``count`` opponents from one (for every seat) or from a list of exactly ``count``."""
    given = list(opponents) if isinstance(opponents, (list, tuple)) else [opponents] * count
    if len(given) != count:
        raise ValueError(f"opponents lists {len(given)} policies; this table has {count} other seats")
    return given


def checked_policy(policy):
    """``policy`` when it can play (``act(observation) -> int``); a clear error for anything else."""
    if callable(getattr(policy, "act", None)):
        return policy
    hint = (f": a name is resolved above the environments, with agents.load_policy({policy!r}) or "
            f"agents.environments.single_agent_env(opponents={policy!r})") if isinstance(policy, str) else ""
    raise ValueError(f"opponent {policy!r} is not a policy (an object with act(observation) -> int){hint}")


def compiled_opponents(rules: Rules, opponents: list):
    """The opponents' compiled player, or ``None``: when every opponent offers one (module docstring,
    "Opponents"), ``type(opponents[0]).compiled_opponents(rules, opponents)``, else ``None``."""
    make = getattr(type(opponents[0]), "compiled_opponents", None) if opponents else None
    if make is None or any(getattr(type(policy), "compiled_opponents", None) is not make for policy in opponents):
        return None
    return make(rules, opponents)


class SingleAgentEnv(gymnasium.Env):
    """One seat of a Skip-Bo hand for a single learner (module docstring: spaces, rewards, seeding)."""

    metadata = {"render_modes": list(RENDER_MODES), "render_fps": 1}

    @staticmethod
    def rules_of(settings: dict) -> Rules:
        """The table the keywords of the constructor describe (``rules=`` or the settings)."""
        settings = dict(settings)
        return table_rules(settings.pop("rules", None), {k: v for k, v in settings.items() if k not in _OPTIONS})

    def __init__(self, opponents, seat: int = 0, random_seat: bool = False, reward: str = "win",
                 illegal_action: str = "terminate", illegal_reward: float = -1.0,
                 render_mode: str | None = None, observation: str = "flat", rules: Rules | None = None,
                 shaping: str = "none", gamma: float = 0.99, **settings) -> None:
        self.rules = table_rules(rules, settings)
        n = self.rules.num_players
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n:
            raise ValueError(f"seat={seat!r} is not a seat of this table: use 0 to {n - 1}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action={illegal_action!r} is not allowed: use 'terminate' or 'raise'")
        if observation not in OBSERVATION_KINDS:
            raise ValueError(f"observation={observation!r} is not allowed: use 'flat' or 'dict'")
        self.reward_mode = check_reward_mode(reward)
        self.shaping = check_shaping(shaping, gamma)
        self.gamma = float(gamma)
        self._potential = 0.0
        self.observation_kind = observation
        self._flat = observation == "flat"
        self.fixed_seat = int(seat)
        self.random_seat = bool(random_seat)
        self.illegal_action = illegal_action
        self.illegal_reward = float(illegal_reward)
        self.render_mode = check_render_mode(render_mode)
        self.opponents = [checked_policy(policy) for policy in opponents_for(opponents, n - 1)]
        self.observation_space = (observation_space() if observation == "dict"
                                  else spaces.Box(low=OBS_LOW, high=OBS_HIGH, dtype=np.float32))
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.seat = self.fixed_seat
        self._policy_of_seat: dict[int, object] = {}
        self._ended_by_illegal_action = False
        self._running_info: dict = {}
        self._hand = CompiledHand(self.rules)
        self._compiled = compiled_opponents(self.rules, self.opponents)

    @property
    def game(self) -> Game | None:
        """The hand as a rules-engine :class:`~skipbo_env.game.Game` (``None`` before ``reset``): the same
        position, generator and record, built when read (a copy: stepping it does not step the environment)."""
        return self._hand.game() if self._hand.dealt else None

    @property
    def actions_taken(self) -> int:
        """How many actions the hand has taken so far, every seat's (``game.actions_taken`` without building a game)."""
        return self._hand.actions_taken

    # ------------------------------------------------------------------ episode
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        options = options or {}
        rng = self.np_random
        self._ended_by_illegal_action = False
        n = self.rules.num_players
        for _ in range(MAX_REDEALS):
            self.seat = int(rng.integers(n)) if self.random_seat else self.fixed_seat
            self._policy_of_seat = {(self.seat + k) % n: policy for k, policy in enumerate(self.opponents, start=1)}
            self._hand = start_hand(self._hand, self.rules, options, int(rng.integers(2**63)))
            resets = [policy.reset for policy in self.opponents if callable(getattr(policy, "reset", None))]
            seeds = [int(rng.integers(2**63)) for _ in resets]
            if self._compiled is not None:  # it resets its opponents itself
                self._compiled.start(self._hand, self.seat, seeds)
            else:
                for reset, reset_seed in zip(resets, seeds):
                    reset(reset_seed)
            self._play_opponents()
            if not self._hand.is_over:
                break
            if "state" in options:
                raise ValueError("the opponents end the hand of this state before the learner acts")
        else:
            raise RuntimeError(f"the opponents ended {MAX_REDEALS} deals in a row before the learner's first action")
        if self.render_mode == "human":
            self.render()
        self._potential = self._shaping_potential()
        info = self._info()
        self._running_info = info.copy()  # every info of the hand in play but its mask (step copies it)
        return self._observation(), info

    def step(self, action):
        hand = self._hand
        if hand.status >= OVER or self._ended_by_illegal_action:  # also before the first reset
            raise RuntimeError("the episode is over: call reset() before step()")
        compiled = self._compiled
        try:
            if compiled is not None:  # the learner's action and the opponents' moves, one kernel call
                status = compiled.play(hand, action)
            else:
                hand.step(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            return self._illegal_step_result()
        if compiled is None:
            self._play_opponents()
            status = hand.status
        if self.render_mode == "human":
            self.render()
        if status < OVER:  # the learner is to act again: reset's info with the new mask
            vector, info_mask = hand.seat_to_act()
            info = self._running_info.copy()
            info["action_mask"] = info_mask
            reward = self._shaped_step() if self.shaping != "none" else 0.0
            return vector if self._flat else self._observation(), reward, False, False, info
        outcome = hand.outcome
        reward = hand_rewards(hand, self.reward_mode)[self.seat] + self._shaped_step()
        return self._observation(), reward, outcome == "win" or outcome == "draw", outcome == "truncated", self._info()

    def _illegal_step_result(self):
        """The episode ends at once with ``illegal_reward``; the position is left as it was."""
        self._ended_by_illegal_action = True
        return self._observation(), self.illegal_reward - self._potential, True, False, self._info()

    def _shaping_potential(self) -> float:
        return hand_potential(self._hand, self.seat) if self.shaping != "none" else 0.0

    def _shaped_step(self) -> float:
        """``gamma * Phi(s') - Phi(s)`` of the step just taken (0 without shaping)."""
        if self.shaping == "none":
            return 0.0
        before, self._potential = self._potential, self._shaping_potential()
        return self.gamma * self._potential - before

    def _observation(self):
        """The learner's vector, or with ``observation="dict"`` the vector and its mask as the AEC env gives."""
        vector = self._hand.encode(self.seat)
        if self.observation_kind == "dict":
            return {"observation": vector, "action_mask": self._learner_mask()}
        return vector

    def _play_opponents(self) -> None:
        """The other seats act until it is the learner's turn or the hand is over."""
        hand = self._hand
        if self._compiled is not None:
            self._compiled.play_opponents(hand)
            return
        while hand.status < OVER and hand.status != self.seat:
            seat = hand.status
            action = self._policy_of_seat[seat].act(hand.observe(seat))
            try:
                hand.step(action)
            except IllegalActionError as error:
                raise IllegalActionError(f"the opponent at seat {seat} chose an illegal action: {error}") from None

    def _info(self) -> dict:
        """The same keys, types and shapes at every step (``hand_info``: outcome ``""`` until the end)."""
        return {"seat": self.seat, "action_mask": self._learner_mask(), "illegal_action": self._ended_by_illegal_action,
                **hand_info(self._hand, self.seat)}

    # ------------------------------------------------------------------ helpers for learners
    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as bool[145] (all False once the hand is over)."""
        return self._hand.legal(-1 if self._ended_by_illegal_action else self.seat)

    def _learner_mask(self) -> np.ndarray:
        """The learner's legal actions as int8[145], a new array (all 0 once the hand is over)."""
        return self._hand.mask(-1 if self._ended_by_illegal_action else self.seat)

    def render(self) -> str | None:
        return render_in_mode(self.render_mode, self.game, viewer=self.seat)


register_envs()
