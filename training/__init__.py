"""Self-play training, evaluation tournaments and the ``skipbo`` command line."""
