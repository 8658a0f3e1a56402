"""Self-play training: ``skipbo train CONFIG`` (:func:`training.run.train`).

:mod:`training.run` reads a config (:mod:`training.config`; the shipped ones in ``training/configs/``) and
starts the backend it names, one module each: SB3 PPO (:mod:`training.sb3.trainer`), sNES (:mod:`training.snes.trainer`),
RLlib (:mod:`training.rllib.trainer`) and the neural bot's self-play (:mod:`training.neural.trainer`). What every
backend shares (the run's result, the results table, evaluation, seeds and clock) is :mod:`training.common`;
the run folder and checkpoints are :mod:`training.checkpoint`.
"""
