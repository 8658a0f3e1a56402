"""``backend: snes``: the learned bot's weights (``agents/pretrained/learned-*.json``, the ``pretrained-2p`` and
``pretrained-4p`` bots) trained by a separable natural evolution strategy in self-play.

- :mod:`training.snes.config`: its section (``snes``) and its checks;
- :mod:`training.snes.trainer`: the evolution, the candidates' games, the curve, the evaluation, its resume state.
"""
