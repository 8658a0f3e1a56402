# noqa: D212, D415
"""
# Skip-Bo

A PettingZoo AEC environment for the card game Skip-Bo, every rule of RULES.md included.

| Import             | `from skipbo_env import skipbo_v1` (`skipbo_v1.env()`), or `env`, `raw_env` |
|--------------------|------------------------------------------------------------------|
| Actions            | Discrete                                                         |
| Parallel API       | No                                                               |
| Manual Control     | No (`skipbo play` is the human interface)                        |
| Agents             | `agents= ['player_0', 'player_1', ..., 'player_{n-1}']`          |
| Agents             | 2 to 6 (`num_players`)                                           |
| Action Shape       | Discrete(145)                                                    |
| Action Values      | 0 ... 144                                                        |
| Observation Shape  | `observation`: (`skipbo_env.OBS_SIZE`,) float32; `action_mask`: (145,) int8 |
| Observation Values | `observation`: [0, float32 max], flags and one-hot parts [0, 1]  |

Skip-Bo is a shedding game: every seat races to play off its stockpile onto shared building
piles that climb from 1 to 12, helped by a hand of five and four discard piles of its own;
SKIP-BO cards are wild. `env(render_mode=None, reward="win", **settings)` takes every setting
of `skipbo_env.Rules` as a keyword (`num_players`, `stock_size`, `decks`, `partners`,
`team_win`, `team_stock`, `exhausted_draw`, `max_turn_plays`, `max_turns`, `win_points`,
`stock_card_points`, `match_end`), or one `rules=Rules(...)`; an unknown setting raises
`ValueError` listing the allowed names. One episode is one hand. Unlike the rules engine, the
environment defaults to `max_turns=1000`, so that no episode can run for ever (`max_turns=None`
lifts the limit; a `rules=Rules(...)` object is used as it is).

Agents are `player_i` for seat `i`, in seat order; turns pass to the left (seat `i + 1`). The
acting seat keeps `agent_selection` for every action of its turn, until its discard, its win or
its end-turn action; then the next seat acts.

### Observation Space

The observation is a dictionary with an `'observation'` element, the flat vector described in
`skipbo_env.encoding` (hand counts, every seat's stockpile top and size, discard piles to
`DISCARD_DEPTH = 8` cards with their sizes and the cards below counted by value, the building
piles' next values, draw pile and completed-pile sizes, unseen cards per value, table size and
variant flags, the plays left this turn under `max_turn_plays`), and an
`'action_mask'`, described below. The vector is written from the observing agent's point of
view: seat block 0 is that agent, block 1 the seat on its left, and so on, the partner marked
in a partners game. Its size is the same for every table of 2-6 seats and every variant
(absent seats are zero and flagged absent), so one network can play any table.
`skipbo_env.decode_observation(obs["observation"])` turns it back into a readable dict.

#### Legal Actions Mask

The legal moves of the acting agent are the `action_mask` element: an int8 vector of 145 where
1 marks a legal id. It is all zeros for every other agent and once the hand is over. In
`env()` an illegal move ends the hand with a reward of -1 for the agent that made it and 0 for
everyone else (PettingZoo's `TerminateIllegalWrapper`); `raw_env` raises
`skipbo_env.IllegalActionError` and leaves the game unchanged.

### Action Space

`Discrete(145)` with the action ids of RULES.md ("Action ids"):

| ids     | meaning                                                                            |
|---------|------------------------------------------------------------------------------------|
| 0-91    | play `source * 4 + building_slot`: source 0-12 a hand card of value source + 1 (12 = SKIP-BO), 13 own stockpile top, 14-17 own discard tops, 18 partner's stockpile top, 19-22 partner's discard tops |
| 92-143  | discard `92 + (value - 1) * 4 + discard_slot`: ends the turn                       |
| 144     | end turn, only with an empty hand when nothing can be drawn                        |

`skipbo_env.describe_action(id)` says what an id does.

### Rewards

Paid once, at the end of the hand:

| outcome                          | `reward="win"` (default) | `reward="score"`                   |
|----------------------------------|--------------------------|------------------------------------|
| the hand is won                  | +1 to the winner (both partners in a team game), -1 to every other seat | `+p / T` to the winners, `-p / T` to every other seat |
| drawn hand (`exhausted_draw`)    | 0 to all                 | 0 to all                           |
| `max_turns` reached              | 0 to all, `truncations` set | 0 to all, `truncations` set     |

With `reward="score"`, `p` is the hand's points (`Game.points()`: `win_points` plus
`stock_card_points` for every card left in the other teams' stockpiles) and `T` is the match
target (`match_end={"target": T}`, 500 by default; 500 when the match is played by rounds or
as a single hand). A two-player win with 7 cards left in the other stockpile pays
`(25 + 7 * 5) / 500 = 0.12`.

With `shaping="stockpile"` (and `gamma`, the learner's discount) every step also pays
potential-based shaping on the stockpiles (`skipbo_env.envs.common`): when an agent comes to a
decision `s'` after its decision `s` it gets `gamma * Phi(s') - Phi(s)`, and when the hand ends
every agent that acted gets `-Phi` of its last decision, so a learner has a signal before it
ever wins and the best policy does not change. `shaping="none"` (the default) pays the result only.

Every agent's info holds the same keys from `reset` on: `outcome` (`""` while the hand is in
play, then `"win"`, `"draw"` or `"truncated"`), `won` (that agent or its team won), `points` (its
points for the hand, 0 until the end) and `winners` (a tuple of one bool per seat: `winners[i]`
says whether `possible_agents[i]` won, all False until the end). Every value keeps its type and
shape from step to step, so replay buffers that stack infos (Tianshou's, RLlib's) store them.

### State

`state()` is the whole position as one float32 vector (`state_space`, `Box` of
`skipbo_env.encoding.STATE_SIZE`): seat 0's observation, then every seat's hand and stockpile
counted by value, then the draw pile counted by value (`skipbo_env.encoding.encode_state`); only
the order of the stockpiles and the draw pile is left out. For centralised critics (MAPPO, QMIX).

### Arguments

`env(render_mode=None, reward="win", shaping="none", gamma=0.99, **settings)`: `render_mode` is
`None`, `"ansi"` (`render()` returns the table as text), `"human"` (prints it after every step)
or `"rgb_array"` (`render()` returns a picture of the table, uint8 height x width x 3, drawn by
`skipbo_env.envs.picture`); `reward` is `"win"` or `"score"`; `shaping` and `gamma` as in
"Rewards". `reset(seed=None, options=None)` deals a new hand from the environment's generator
(seeded by `seed`); `options={"dealer": seat}` fixes the dealer and `options={"state": dict}`
starts from a saved position in the state format of RULES.md (same number of seats; the hand
plays by the rules saved in the state, and a state saved with its generator, `"rng"`, resumes
exactly). Other option keys are ignored.

`env()` is `raw_env` inside PettingZoo's `TerminateIllegalWrapper`, `AssertOutOfBoundsWrapper` and
`OrderEnforcingWrapper`, as subclasses (`isinstance` holds) that read the attributes an AEC loop
reads at every step (`agent_selection`, `terminations`, `rewards`, ...) from `raw_env` directly
instead of through three `__getattr__` levels; their checks and their answers are PettingZoo's.
`step` with a legal int id, `observe`, `last` and the `agent_iter` loop take a direct path through them
that does what PettingZoo's code does in that case; every other call (numpy ids, illegal ids, dead
steps, calls before `reset`) is PettingZoo's own. The hand is a
`skipbo_env.vector.single.CompiledHand`: the batched engine's kernels at batch one, so one `step`
is one compiled call that takes the action, computes the new mask and writes the new seat to act's
observation (bit for bit `encode_observation`, tested against the rules engine after every action);
`observe` hands out new arrays. `raw_env.game` is the hand as a rules-engine `Game` (same position,
generator and record), built when read and kept until the next action; it is a copy, so stepping it
does not step the environment. The first environment of a fresh install compiles the kernels once
(numba's on-disk cache keeps them).
`benchmarks/env_speed.py` measures both, side by side with RLCard's UNO.

### Version History

The version moves whenever what an agent sees or may do changes: the observation, the actions or
the rules. `skipbo_v0` (and Gymnasium's `skipbo/SkipBo-v0`) are retired; asking for them is
refused with a message naming `skipbo_v1`.

* v1 (skipbo-lab 0.1.0, this layout): observation `OBS_SIZE` values. The discard cards under the top
  `DISCARD_DEPTH` of each pile are counted by value per seat at the end of the observation
  (after the first 734 values, unchanged), so every public card is in it. Actions unchanged
  (`Discrete(145)`), rules unchanged. Also `rgb_array` rendering, the same info keys at every
  step, and `state()` for centralised critics.
* v0, amended: observation 734 values. The `max_turn_plays` rule (RULES.md, "A turn that never
  ends": after that many plays to building piles in one turn only a discard or end turn is
  legal) and three turn-limit features at the end of the observation (offsets 731-733, the first
  731 unchanged); `max_turns` defaults to 1000 in the environments. Actions unchanged.
* v0: initial release. Observation 731 values (the seat blocks and table features), actions
  `Discrete(145)`, every rule of RULES.md but the turn-play limit.

A model trained on the 731- or 734-value layout still loads and reads that prefix of the v1
observation (`skipbo_env.encoding.EARLIER_OBS_SIZES`).
"""

from __future__ import annotations

import operator

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import STATE_HIGH, encode_state
from skipbo_env.envs.common import (RENDER_MODES, check_render_mode, check_reward_mode, check_shaping, hand_info,
                                    hand_potential, hand_rewards, observation_space, render_in_mode, start_hand,
                                    table_rules)
from skipbo_env.envs.registration import AEC_ENV_NAME
from skipbo_env.game import Game
from skipbo_env.rules import Rules
from skipbo_env.vector.single import OVER, CompiledHand


def env(render_mode: str | None = None, reward: str = "win", rules: Rules | None = None, shaping: str = "none",
        gamma: float = 0.99, **settings) -> AECEnv:
    """The Skip-Bo AEC environment wrapped as PettingZoo's classic environments are.

    The stack is PettingZoo's TerminateIllegalWrapper, AssertOutOfBoundsWrapper and
    OrderEnforcingWrapper (subclasses that read the per-step attributes directly, see
    :class:`DirectAttributes`), so ``isinstance`` checks and their behaviour hold.
    """
    environment = raw_env(render_mode=render_mode, reward=reward, rules=rules, shaping=shaping, gamma=gamma,
                          **settings)
    environment = TerminateIllegalWrapper(environment, illegal_reward=-1)
    environment = AssertOutOfBoundsWrapper(environment)
    return OrderEnforcingWrapper(environment)


def _forwarded(name: str) -> property:
    """A property reading and writing ``name`` on the unwrapped environment (the read is C-level)."""

    def write(self, value) -> None:
        setattr(self._unwrapped_env, name, value)

    return property(operator.attrgetter(f"_unwrapped_env.{name}"), write, doc=f"The unwrapped environment's {name}.")


class DirectAttributes:
    """Mixin for PettingZoo wrappers: the attributes an AEC loop reads every step come straight from the env.

    pettingzoo's ``BaseWrapper.__getattr__`` forwards a missing attribute one level down, so
    each read of ``agent_selection``, ``terminations``, ... through three wrappers costs a failed
    lookup and a Python call per level, ~37 of them a step: more than the game and the
    observation together. These properties return the unwrapped environment's own objects (no
    wrapper holds a copy), and a write goes to the unwrapped environment, where every wrapper
    reads it. Before ``reset`` the unwrapped environment lacks them, so the read falls back to
    ``__getattr__`` and raises the wrapper's own ``AttributeError`` (OrderEnforcingWrapper:
    "... cannot be accessed before reset").
    """

    _unwrapped_env: AECEnv

    agents = _forwarded("agents")
    agent_selection = _forwarded("agent_selection")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    rewards = _forwarded("rewards")
    _cumulative_rewards = _forwarded("_cumulative_rewards")
    infos = _forwarded("infos")

    def __init__(self, environment: AECEnv, *args, **kwargs) -> None:
        super().__init__(environment, *args, **kwargs)
        self._unwrapped_env = environment.unwrapped

    @property
    def unwrapped(self) -> AECEnv:
        return self._unwrapped_env

    def __str__(self) -> str:
        return str(self.env)


class TerminateIllegalWrapper(DirectAttributes, wrappers.TerminateIllegalWrapper):
    """PettingZoo's TerminateIllegalWrapper with direct per-step attributes.

    ``step`` with an id the kept mask allows, in a live hand, does what PettingZoo's ``step`` does
    then (forget the kept observation, step the inner environment) without re-checking what this
    environment guarantees (its observations are dicts with an ``action_mask``); every other call
    is PettingZoo's own.
    """

    def observe(self, agent: str) -> dict:
        """PettingZoo's ``observe`` (the acting agent's observation and info kept for ``step``), one call shorter."""
        observation = self.env.observe(agent)
        env = self._unwrapped_env
        if agent == env.agent_selection:
            self._prev_obs = observation
            self._prev_info = env.infos.get(agent, {})
        return observation

    def step(self, action) -> None:
        kept = self._prev_obs
        if type(action) is int and kept is not None and not self._terminated:
            env = self._unwrapped_env
            agent = env.agent_selection
            if not env.terminations[agent] and not env.truncations[agent] and kept["action_mask"][action]:
                self._prev_obs = self._prev_info = None
                self.env.step(action)
                return
        super().step(action)


class AssertOutOfBoundsWrapper(DirectAttributes, wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper with direct per-step attributes; an int id of the
    action space goes straight on (PettingZoo's assertion holds for it), anything else is checked by PettingZoo."""

    def step(self, action) -> None:
        if type(action) is int and 0 <= action < NUM_ACTIONS:
            self.env.step(action)
        else:
            super().step(action)


class OrderEnforcingWrapper(DirectAttributes, wrappers.OrderEnforcingWrapper):
    """PettingZoo's OrderEnforcingWrapper with direct per-step attributes; after ``reset``, with agents
    left, ``step``, ``observe``, ``last`` and the ``agent_iter`` loop do what PettingZoo's do then, with
    fewer calls.

    Over ``env()``'s stack (this wrapper, then AssertOutOfBoundsWrapper, then TerminateIllegalWrapper)
    an int id of the action space and ``observe`` go straight to the TerminateIllegalWrapper: the
    AssertOutOfBoundsWrapper between passes both on unchanged.
    """

    def __init__(self, environment: AECEnv) -> None:
        super().__init__(environment)
        inner = getattr(environment, "env", None)
        in_bounds = isinstance(environment, AssertOutOfBoundsWrapper) and isinstance(inner, TerminateIllegalWrapper)
        self._guard = inner if in_bounds else environment
        """Where an in-bounds int id and ``observe`` go: the TerminateIllegalWrapper of ``env()``'s stack."""

    def step(self, action) -> None:
        if self._has_reset and self._unwrapped_env.agents:
            self._has_updated = True
            if type(action) is int and 0 <= action < NUM_ACTIONS:
                self._guard.step(action)
            else:
                self.env.step(action)
        else:
            super().step(action)

    def observe(self, agent: str) -> dict | None:
        if self._has_reset:
            return self._guard.observe(agent)
        return super().observe(agent)

    def last(self, observe: bool = True) -> tuple:
        """PettingZoo's ``last``, reading the unwrapped environment's dicts directly."""
        if not self._has_reset:
            return super().last(observe)
        env = self._unwrapped_env
        agent = env.agent_selection
        assert agent is not None
        observation = self._guard.observe(agent) if observe else None
        return (observation, env._cumulative_rewards[agent], env.terminations[agent], env.truncations[agent],
                env.infos[agent])

    def agent_iter(self, max_iter: int = 2**63) -> wrappers.order_enforcing.AECOrderEnforcingIterable:
        if not self._has_reset:
            return super().agent_iter(max_iter)
        return _OrderEnforcingIterable(self, max_iter)


class _OrderEnforcingIterable(wrappers.order_enforcing.AECOrderEnforcingIterable):
    def __iter__(self) -> "_OrderEnforcingIterator":
        return _OrderEnforcingIterator(self.env, self.max_iter)


class _OrderEnforcingIterator(wrappers.order_enforcing.AECOrderEnforcingIterator):
    """PettingZoo's ``agent_iter`` iterator (the same checks, in the same order), reading the unwrapped environment."""

    def __next__(self) -> str:
        wrapper = self.env
        env = wrapper._unwrapped_env
        if not env.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert wrapper._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        wrapper._has_updated = False
        return env.agent_selection


class ActionSpace(spaces.Discrete):
    """``Discrete(145)`` whose ``contains`` answers a Python int without numpy, with the same answers.

    AssertOutOfBoundsWrapper asks ``contains`` at every step; gymnasium's checks a Python int
    against the int64 range through ``np.iinfo`` first (about 1.5 us, a twelfth of a raw step).
    """

    def __init__(self, n: int, seed: int | np.random.Generator | None = None) -> None:
        super().__init__(n, seed=seed)
        self._ids = range(n)

    def contains(self, x) -> bool:
        if type(x) is int:
            return x in self._ids
        return super().contains(x)


class raw_env(AECEnv):  # noqa: N801 - PettingZoo's naming convention
    """Skip-Bo without wrappers: illegal actions raise :class:`IllegalActionError`."""

    metadata = {"name": AEC_ENV_NAME, "render_modes": list(RENDER_MODES), "is_parallelizable": False,
                "render_fps": 1}

    def __init__(self, render_mode: str | None = None, reward: str = "win", rules: Rules | None = None,
                 shaping: str = "none", gamma: float = 0.99, **settings) -> None:
        super().__init__()
        self.shaping = check_shaping(shaping, gamma)
        self.gamma = float(gamma)
        self._potentials: dict[str, float] = {}  # agent -> Phi of its last decision
        self.reward_mode = check_reward_mode(reward)
        self.rules = table_rules(rules, settings)
        self.render_mode = check_render_mode(render_mode)
        self.possible_agents = [f"player_{seat}" for seat in range(self.rules.num_players)]
        self.agent_name_mapping = {agent: seat for seat, agent in enumerate(self.possible_agents)}
        self.observation_spaces = {agent: observation_space() for agent in self.possible_agents}
        self.action_spaces = {agent: ActionSpace(NUM_ACTIONS) for agent in self.possible_agents}
        self.state_space = spaces.Box(low=0, high=STATE_HIGH, dtype=np.float32)
        self._rng: np.random.Generator | None = None
        self._hand = CompiledHand(self.rules)

    @property
    def game(self) -> Game | None:
        """The hand as a rules-engine :class:`~skipbo_env.game.Game` (``None`` before ``reset``): the same
        position, generator and record, built when read (a copy: stepping it does not step the environment)."""
        return self._hand.game() if self._hand.dealt else None

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> ActionSpace:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None or self._rng is None:
            self._rng = np.random.default_rng(seed)
        hand = self._hand = start_hand(self._hand, self.rules, options or {}, int(self._rng.integers(2**63)))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {agent: hand_info(hand, seat) for seat, agent in enumerate(self.agents)}
        self.agent_selection = self.possible_agents[hand.status]
        self._potentials = {}
        self._shape_arrival()
        if self.render_mode == "human":
            self.render()

    def observe(self, agent: str) -> dict:
        return self._hand.observe(self.agent_name_mapping[agent])

    def state(self) -> np.ndarray:
        """The whole position, every hand and stockpile included (``skipbo_env.encoding.encode_state``)."""
        return encode_state(self.game)

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        status = self._hand.step(action)
        self._cumulative_rewards[agent] = 0.0
        if self.shaping != "none":
            self._clear_rewards()
        if status < OVER:  # the seat to act
            self.agent_selection = self.possible_agents[status]
            if self.shaping != "none" and self._shape_arrival():
                self._accumulate_rewards()
        else:
            self._end_hand()
        if self.render_mode == "human":
            self.render()

    def _end_hand(self) -> None:
        """Pay the rewards, mark every agent done, and say how the hand ended in every info."""
        hand = self._hand
        done = dict.fromkeys(self.agents, True)
        if hand.outcome == "truncated":
            self.truncations = done
        else:
            self.terminations = done
        for seat, reward in enumerate(hand_rewards(hand, self.reward_mode)):
            agent = self.possible_agents[seat]
            self.rewards[agent] = reward - self._potentials.get(agent, 0.0)
            self.infos[agent] = hand_info(hand, seat)
        self._accumulate_rewards()

    def _shape_arrival(self) -> bool:
        """Shaping for the agent now to decide: ``gamma * Phi(now) - Phi(its last decision)``; whether it paid."""
        if self.shaping == "none":
            return False
        agent = self.agent_selection
        now = hand_potential(self._hand, self.agent_name_mapping[agent])
        before = self._potentials.get(agent)
        self._potentials[agent] = now
        if before is None:
            return False
        self.rewards[agent] = self.gamma * now - before
        return True

    def render(self) -> str | None:
        return render_in_mode(self.render_mode, self.game, names=self.possible_agents)

    def close(self) -> None:
        """Nothing to release: the hand is a few numpy arrays."""
