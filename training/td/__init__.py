"""``backend: td``: the neural bot's value network learned by TD(λ) from the results of self-play hands.

:mod:`training.td.config` is its section and checks, :mod:`training.td.learner` the learner (self-play on the
batched engine, the λ-returns, the fit, the numbers of its state), :mod:`training.td.state` the checked reading
of a saved state, :mod:`training.td.trainer` the run (checkpoints, the learning curve, the model file).
"""
