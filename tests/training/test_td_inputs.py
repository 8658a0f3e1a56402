"""A ``backend: td`` checkpoint names the fields its learner's rows read (``inputs`` in ``state.json``), so a resume
after the observation layout moved them is refused in one line instead of reading the arrays at other fields."""

from __future__ import annotations

import io
import json

import pytest

from agents.batched.neural import input_fields
from tests.training.test_td_backend import tiny_config
from training.checkpoint import RunFolder
from training.run import train
from training.state_checks import CheckpointError


def test_a_resume_whose_learner_rows_read_other_fields_is_refused(tmp_path):
    run = train(tiny_config(tmp_path), ["td.budget_hands=4", "td.curve_every=100"], progress=False,
                out=io.StringIO())
    state_path = RunFolder(run.run_dir).latest_checkpoint() / "state.json"
    state = json.loads(state_path.read_text())
    assert state["inputs"] == list(input_fields(2))
    moved = list(state["inputs"])
    moved[1], moved[2] = moved[2], moved[1]
    state_path.write_text(json.dumps({**state, "inputs": moved}))
    with pytest.raises(CheckpointError, match=r"state\.json: its learner's arrays have rows for the fields in "
                                              r"'inputs', and today's network reads others \(at input 1: "
                                              r"'team_win_either' there, 'partners' today\)") as error:
        train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    assert "\n" not in str(error.value)
    del state["inputs"]  # a state saved before the rows were named: resumed as it is, named from then on
    state_path.write_text(json.dumps(state))
    resumed = train(None, ["td.budget_hands=8"], resume=run.run_dir, progress=False, out=io.StringIO())
    assert json.loads((RunFolder(resumed.run_dir).latest_checkpoint() / "state.json").read_text())["inputs"] == \
        list(input_fields(2))
