"""``backend: neural``: the neural bot's value network (``agents/pretrained/neural-*.json``) fitted to a learned
bot's lists, then to the lists of its own games, then optionally evolved on its output layer.

- :mod:`training.neural.config`: its section (``neural``) and its checks;
- :mod:`training.neural.trainer`: the run (generations, curve, evaluation, checkpoints, the model file);
- :mod:`training.neural.value_games`: the hands on the batched engine and the teacher's lists of them;
- :mod:`training.neural.value_net`: the float network in PyTorch, its fit, its quantization;
- :mod:`training.neural.data_files`: the format of a generation's data file (``data/gen-NNNN.npz``);
- :mod:`training.neural.state`: what a checkpoint holds beside them (``state.json``, ``weights.npz``), checked.
"""
