"""Policies that play Skip-Bo: the policy interface, heuristic bots, saved models."""
