"""Tournaments between policies: a seeded schedule of duplicate deals, played by the rules engine
or the batched engine, with win rates, intervals, ratings, a report and a plot."""
