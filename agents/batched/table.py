"""Kernel bots as the opponents of a ``SingleAgentEnv``: the learner's action and every opponent move
up to the learner's next turn in one compiled call on the environment's
:class:`~skipbo_env.vector.single.CompiledHand`.

Every ``agents.policy.Bot`` offers this (``compiled_opponents``, the hook the module docstring of
:mod:`skipbo_env.envs.single_agent` describes); the registry decides who takes it: an opponent is played here only
when ``agents.registry.kernel_of`` gives its exact class a kernel twin this module plays (:data:`TABLE_KERNELS`:
:mod:`.greedy`, :mod:`.random_bot`), which makes the same moves draw for draw from the same generator. Any other
opponent, a subclass of a registered class included, leaves the whole table to Python.

At the start of a hand each bot is reset in the kernels: its twin's generator is seeded as ``Bot.reset(seed)``
seeds the bot's (opponents that are one object share one generator, as they do in Python, the last seed winning).
When the hand ends the kernels' states are copied into the bots' generators, so the bots are left as if they had
played in Python (during a hand, and after one left unfinished, a bot's own generator is not used and not renewed).
"""

from __future__ import annotations

import numpy as np

from agents import registry
from agents.batched import greedy, random_bot
from agents.batched.codes import OTHER
from agents.batched.greedy import greedy_choice
from agents.batched.random_bot import random_choice
from skipbo_env.actions import NUM_ACTIONS
from skipbo_env.encoding import as_action_id
from skipbo_env.explain import why_illegal
from skipbo_env.game import IllegalActionError
from skipbo_env.rules import MAX_PLAYERS
from skipbo_env.vector import pcg
from skipbo_env.vector.jit import jit
from skipbo_env.vector.kernels import step_game
from skipbo_env.vector.layout import RUNNING
from skipbo_env.vector.single import FULL_LOG, ILLEGAL, OVER, compiled_entry, hand_row, hand_status, rules_config

RANDOM_KERNEL, GREEDY_KERNEL = 0, 1
"""Who plays a seat in this module's own ``controllers`` (codes of its own: the kernel bots' codes of :mod:`.bots`
are not used here, and only these two kernels are compiled into :func:`_bots_move`)."""
NO_ACTION = -2
"""The learner's action of a call that only lets the bots move (the start of a hand, or going on)."""
MOVED = 16
"""The kernel's return value is the status plus ``MOVED`` times the count of ids it took (statuses are below 16)."""
MOVES_PER_CALL = 512
"""Room for the opponents' moves of one call; a call that fills it stops there, and the next goes on."""


@jit
def _bots_move(r, legal, cfg, g, controllers, stream_of_seat, streams, log, count, end):
    """The kernel bots of ``controllers`` move until another seat is to act, the hand ends or ``log`` holds ``end``
    ids; their ids go into ``log`` from ``count`` on; returns how many ids ``log`` then holds."""
    while r.outcome == RUNNING and controllers[r.seat] != OTHER and count < end:
        generator = streams[stream_of_seat[r.seat]]
        if controllers[r.seat] == GREEDY_KERNEL:
            action = greedy_choice(r, legal, g, generator)
        else:
            action = random_choice(legal, g, generator)
        step_game(r, legal, cfg, g, action)
        log[count] = action
        count += 1
    return count


STREAM_OF_SEAT = MAX_PLAYERS
"""Where the parts of a call's ``table`` start (one int64 array, so that a call unboxes fewer arguments): from 0
the code of who plays each seat (``controllers``), from ``STREAM_OF_SEAT`` each seat's row of ``streams``."""


@jit
def _step_and_move(games, legal, config, scale, obs, log, table, streams, logged, room, action):
    """The learner's ``action`` (``ILLEGAL`` and nothing changed when it is not legal; ``NO_ACTION``: none),
    then the bots' moves, at most ``room`` of them; every id taken goes into the hand's ``log`` from ``logged`` on
    (``FULL_LOG`` and nothing changed when it has no room for the learner's). Returns the status plus ``MOVED``
    times their count."""
    cfg = rules_config(config)
    g = hand_row(games)
    r = games[g]
    count = logged
    if action != NO_ACTION:
        if count >= log.shape[0]:
            return FULL_LOG
        if not step_game(r, legal, cfg, g, action):
            return ILLEGAL
        log[count] = action
        count += 1
    count = _bots_move(r, legal, cfg, g, table[:STREAM_OF_SEAT], table[STREAM_OF_SEAT:], streams, log, count,
                       min(log.shape[0], count + room))
    return hand_status(r, cfg, scale, obs, g) + MOVED * (count - logged)


TABLE_KERNELS = {random_bot.__name__: RANDOM_KERNEL, greedy.__name__: GREEDY_KERNEL}
"""The kernel twins this module plays (module -> its code here); which class each one plays is the registry's."""


def kernel_opponents(rules, opponents: list):
    """A :class:`KernelOpponents` for ``opponents`` when every one is played by a kernel of :data:`TABLE_KERNELS`
    (:func:`table_code`), else ``None`` (the opponents are then asked ``act`` in Python)."""
    kinds = [table_code(type(policy)) for policy in opponents]
    if None in kinds:
        return None
    return KernelOpponents(opponents, kinds)


def table_code(kind: type) -> int | None:
    """This module's code for objects of the class ``kind``: the code of the kernel twin the registry gives that
    exact class (``agents.registry.kernel_of``), ``None`` when it has none this module plays."""
    return TABLE_KERNELS.get(registry.kernel_of(kind))


class KernelOpponents:
    """The kernel twins of a ``SingleAgentEnv``'s opponents (``opponents[k]`` plays the ``k + 1``-th seat
    to the learner's left, a code of :data:`TABLE_KERNELS` in ``kinds[k]``)."""

    def __init__(self, opponents: list, kinds: list[int]) -> None:
        self._bots = list({id(policy): policy for policy in opponents}.values())  # one generator each
        index = {id(policy): i for i, policy in enumerate(self._bots)}
        self._opponents = [(kind, index[id(policy)]) for policy, kind in zip(opponents, kinds)]
        self._streams = np.zeros((len(self._bots), pcg.GENERATOR_WORDS), dtype=np.uint64)
        self._table = np.zeros(2 * STREAM_OF_SEAT, dtype=np.int64)  # controllers, stream of each seat
        self._views()
        self._learner = 0
        self._hand = None
        self._arguments: tuple = ()  # the hand's kernel_arguments(), then the table and the streams (see _refresh)
        self._step = None

    def start(self, hand, learner_seat: int, seeds: list[int]) -> None:
        """A new hand (just dealt): who plays which seat; each bot reset with its seed (``seeds[k]`` for
        ``opponents[k]``), in its kernel twin's generator."""
        n = hand.num_players
        self._learner = learner_seat
        self._controllers[:] = OTHER
        for k, (kind, stream) in enumerate(self._opponents, start=1):
            seat = (learner_seat + k) % n
            self._controllers[seat] = kind
            self._stream_of_seat[seat] = stream
        for (_, stream), seed in zip(self._opponents, seeds, strict=True):
            pcg.seed_generator(self._streams[stream], seed)
        new_hand = hand is not self._hand
        self._refresh(hand)
        if new_hand:
            self._step = self._entry()

    def _refresh(self, hand) -> None:
        """The arguments of the kernel calls for ``hand`` (asked again at every hand: its log may be new)."""
        self._hand, self._arguments = hand, (*hand.kernel_arguments(), self._table, self._streams)

    def _views(self) -> None:
        """The parts of ``_table`` (:data:`STREAM_OF_SEAT`), as views to write."""
        self._controllers = self._table[:STREAM_OF_SEAT]
        self._stream_of_seat = self._table[STREAM_OF_SEAT:]

    def _entry(self):
        """The kernel's entry point for the hand's arrays and these bots' (see ``compiled_entry``)."""
        return compiled_entry(_step_and_move, *self._arguments, 0, 0, 0)

    _DERIVED = ("_step", "_controllers", "_stream_of_seat")
    """What :meth:`__setstate__` makes again (views of ``_table`` and the entry point, which do not pickle)."""

    def __getstate__(self) -> dict:
        return {name: value for name, value in self.__dict__.items() if name not in self._DERIVED}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._views()
        self._step = self._entry() if self._arguments else None

    def play(self, hand, action) -> int:
        """The learner's ``action``, then the opponents up to its next turn, in the hand of the last :meth:`start`;
        the new status. An illegal ``action`` raises :class:`IllegalActionError` with the rules engine's reason
        (the hand unchanged)."""
        if type(action) is not int:
            action = as_action_id(action)
        result = self._step(*self._arguments, hand.logged, MOVES_PER_CALL,
                            action if 0 <= action < NUM_ACTIONS else ILLEGAL)
        if result < 0:
            if result == ILLEGAL:
                raise IllegalActionError(why_illegal(hand.game(), action))
            self._grow_log(hand)
            return self.play(hand, action)
        status = hand.took(result // MOVED, result % MOVED)
        return status if status == self._learner else self._went_on(hand, status)

    def play_opponents(self, hand) -> int:
        """The opponents' moves up to the learner's turn (at the start of a hand); the new status."""
        result = self._step(*self._arguments, hand.logged, MOVES_PER_CALL, NO_ACTION)
        return self._went_on(hand, hand.took(result // MOVED, result % MOVED))

    def _went_on(self, hand, status: int) -> int:
        """After a call that left ``status`` (recorded): go on while an opponent is to act (the call filled its room,
        or the log: then it is grown)."""
        if status == self._learner:
            return status
        if status < OVER:
            if hand.logged == len(hand.log):
                self._grow_log(hand)
            return self.play_opponents(hand)
        self._return_generators()
        return status

    def _grow_log(self, hand) -> None:
        hand.grow_log()
        self._refresh(hand)

    def _return_generators(self) -> None:
        """Each bot's generator set to the state its kernel twin reached."""
        for words, bot in zip(self._streams, self._bots):
            bot.rng.bit_generator.state = pcg.to_numpy_state(words[:4], words[4], words[5])
