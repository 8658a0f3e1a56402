"""Self-play training: ``skipbo train CONFIG`` (:func:`training.run.train`).

:mod:`training.run` reads a config (:mod:`training.config`; the shipped ones are ``configs/`` at the top of the
repository, installed with the package) and starts the backend it names, one package each, listed in
:mod:`training.backends`: SB3 PPO (:mod:`training.sb3`), RLlib (:mod:`training.rllib`), sNES
(:mod:`training.snes`) and the neural bot's self-play (:mod:`training.neural`); each package's ``config.py``
holds its config section, its checks and its resume state. What every backend shares: the config's schema and
shared sections (:mod:`training.schema`, :mod:`training.sections`), the run folder and checkpoints
(:mod:`training.checkpoint`, :mod:`training.state_checks`), the log, evaluation, best model and summary
(:mod:`training.common`), the curve (:mod:`training.learning_curve`) and work on Ray
(:mod:`training.distributed`).
"""
