"""Tournaments between policies: a seeded schedule of duplicate deals, played by the rules engine
or the batched engine, with win rates, intervals, ratings, a report and a plot.

- :mod:`evaluation.tournament`: :func:`run_tournament`, the front door, and the errors it raises;
- :mod:`evaluation.schedule`: the games, deals, seatings and seeds of a tournament;
- :mod:`evaluation.python_runner`: games on the rules engine, here or in worker processes;
- :mod:`evaluation.vector_runner`: the engine choice, and games on the batched engine;
- :mod:`evaluation.ray_runner`: games as Ray tasks;
- :mod:`evaluation.results`: every game and the figures (win rates, Wilson intervals, pairwise, ratings);
- :mod:`evaluation.report`: the printed tables, the plot and the JSON file.
- :mod:`evaluation.benchmark`: the fixed protocol ``skipbo-bench-v1`` (``skipbo benchmark``): deals, ladder, scorecard;
- :mod:`evaluation.benchmark_report`: the benchmark's printed scorecard, JSON file and plot;
- :mod:`evaluation.leaderboard`: the leaderboard page drawn from the benchmark's result files.
"""

from evaluation.errors import AgentError, EngineError
from evaluation.report import print_report, write_json, write_plot
from evaluation.results import GameResult, TournamentResult, wilson_interval
from evaluation.schedule import GameSpec, derived_seed, lineups, schedule, seatings
from evaluation.tournament import agent_names, run_tournament
from evaluation.vector_runner import ENGINES

__all__ = ["ENGINES", "AgentError", "EngineError", "GameResult", "GameSpec", "TournamentResult", "agent_names",
           "derived_seed", "lineups", "print_report", "run_tournament", "schedule", "seatings", "wilson_interval",
           "write_json", "write_plot"]
