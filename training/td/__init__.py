"""Learning the neural bot's value from self-play results by TD(λ) (:mod:`training.td.learner`)."""

from training.td.learner import TDRun, TDSettings

__all__ = ["TDRun", "TDSettings"]
