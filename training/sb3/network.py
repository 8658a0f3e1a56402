"""The SB3 actor-critic the trainer builds from the ``network:`` config section.

With ``network.inputs: table`` both networks read only the observation values the table can
set (:func:`skipbo_env.encoding.table_inputs`): at two seats well under half of them, the four absent seats'
blocks being always zero. That makes the first layer, most of the cost of every forward and
backward pass, about 2.4 times smaller at two seats; what the learner can play does not change.
An exported model (``training.sb3.trainer.learner_weights``) always has the full input width, zero
weights for the values it does not read, so it loads and plays like any other.
"""

from __future__ import annotations

import torch
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

from skipbo_env.encoding import table_inputs


class TableInputs(BaseFeaturesExtractor):
    """The observation values a table of ``num_players`` seats can set, in vector order (``inputs``)."""

    def __init__(self, observation_space, num_players: int) -> None:
        index = torch.as_tensor(table_inputs(num_players), dtype=torch.long)
        super().__init__(observation_space, features_dim=len(index))
        self.register_buffer("inputs", index, persistent=False)

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return observations.index_select(1, self.inputs)


def policy_kwargs(network, num_players: int) -> dict:
    """``MaskablePPO(policy_kwargs=...)`` for the ``network`` config section on a table of ``num_players``."""
    kwargs = {"net_arch": {"pi": list(network.hidden), "vf": list(network.hidden)},
              "activation_fn": {"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[network.activation]}
    if network.inputs == "table":
        kwargs["features_extractor_class"] = TableInputs
        kwargs["features_extractor_kwargs"] = {"num_players": num_players}
    return kwargs
