"""Players for the batched engine (:mod:`skipbo_env.vector`): one call chooses the actions of many games.

Each kernel bot is a module of its own (``random_bot``, ``greedy``, ``planner``, ``expert``, ``learned``;
``neural`` decides from the observation), the searching ones built on the turn search :mod:`.search`;
:mod:`.bots` gives them their codes and plays them, from ``agents.registry``; :mod:`.policies` turns a bot
name, a network, an SB3 model or a Python policy into a batch player, and :mod:`.seating` lets the players
of every seat of a batch move until the caller (a learner) is to act (``batch_opponents``, ``Seating``), and
compiles every kernel a batch uses ahead of play (``compile_kernels``, ``start_compiling_bots``).

This page imports nothing: the Python bots import kernel modules of this package while ``agents.registry``
loads, and :mod:`.bots` reads the registry, so each name is imported from its module
(``from agents.batched.seating import batch_opponents``).
"""
