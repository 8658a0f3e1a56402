"""``backend: sb3`` (the default): masked PPO self-play on one machine (sb3-contrib's ``MaskablePPO``).

- :mod:`training.sb3.config`: its section (``pretrain``), its checks and its resume state;
- :mod:`training.sb3.trainer`: the run (environments, learner, pool, schedules, export);
- :mod:`training.sb3.selfplay`, :mod:`training.sb3.selfplay_vector`: the opponent pool in the other seats, on
  the rules engine or the batched engine;
- :mod:`training.sb3.pretrain`: behaviour cloning of a teacher bot before PPO (``pretrain.enabled``);
- :mod:`training.sb3.network`: the policy's layers (``network.inputs``).
"""
