"""Self-play training with RLlib (``backend: rllib``), on one machine or on a Ray cluster.

The pieces, each in its own module, import ``ray`` only when used (``pip install -e '.[rllib]'``):

- :mod:`training.rllib.config`: its config section (``rllib``), its checks and its resume state;
- :mod:`training.rllib.env`: the AEC environment registered for RLlib by name (rule settings as
  env config) through RLlib's PettingZoo wrapper;
- :mod:`training.rllib.module`: the action-masking policy (a ``TorchRLModule`` reading the
  ``{"observation", "action_mask"}`` dict) laid out like :mod:`agents.network`, and the bots as
  fixed, non-learning modules;
- :mod:`training.rllib.seating`: who plays each seat of each hand (the learner, frozen snapshots,
  bots), drawn from ``opponents.mix`` like the ``skipbo train`` opponent pool;
- :mod:`training.rllib.metrics`: win rate against each opponent kind and hand length;
- :mod:`training.rllib.trainer`: the run (PPO, snapshots, evaluations, checkpoints, export).
"""
