"""A saved model of the SB3 format reads raw positions, so it is pinned to the observation layout it was trained on:
it records the layout's version, loads on that layout or a later one it is a prefix of, and is refused in one line
naming the file, its layout and today's on any other."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from agents import saved_model
from agents.network import parameter_shapes
from agents.saved_model import SavedModelError, load_saved_policy, read_model, save_model
from skipbo_env.encoding import LAYOUT_SIZES, LAYOUT_VERSION, OBS_SIZE, PREFIX_LAYOUTS

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted((ROOT / "agents" / "pretrained").glob("*.zip")) + [ROOT / "docs/leaderboard/trained/rllib-2p.zip"]
HIDDEN = [8]


def weights(obs_size: int) -> dict:
    rng = np.random.default_rng(0)
    shapes = parameter_shapes(obs_size, HIDDEN)
    return {name: rng.normal(size=shape).astype(np.float32) for name, shape in shapes.items()}


def test_a_model_records_the_layout_it_was_trained_on(tmp_path):
    assert LAYOUT_SIZES[LAYOUT_VERSION] == OBS_SIZE
    path = save_model(tmp_path / "model.zip", weights(OBS_SIZE), {"obs_size": OBS_SIZE, "hidden": HIDDEN,
                                                                  "activation": "relu"})
    assert read_model(path)[1]["layout_version"] == LAYOUT_VERSION
    for version in PREFIX_LAYOUTS:
        size = LAYOUT_SIZES[version]
        path = save_model(tmp_path / f"v{version}.pt", weights(size), {"obs_size": size, "hidden": HIDDEN,
                                                                        "activation": "relu"})
        assert load_saved_policy(path).metadata["layout_version"] == version


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: path.name)
def test_the_shipped_models_load_today_and_are_refused_in_one_line_on_another_layout(path, monkeypatch):
    metadata = read_model(path)[1]
    version = metadata.get("layout_version", saved_model.SIZE_LAYOUTS.get(metadata["obs_size"]))
    assert version in (LAYOUT_VERSION, *PREFIX_LAYOUTS)
    # a layout that inserts a field: nothing earlier is a prefix of it
    monkeypatch.setattr(saved_model, "LAYOUT_VERSION", LAYOUT_VERSION + 1)
    monkeypatch.setattr(saved_model, "LAYOUT_SIZES", {**LAYOUT_SIZES, LAYOUT_VERSION + 1: OBS_SIZE + 3})
    monkeypatch.setattr(saved_model, "OBS_SIZE", OBS_SIZE + 3)
    monkeypatch.setattr(saved_model, "PREFIX_LAYOUTS", ())
    with pytest.raises(SavedModelError) as error:
        read_model(path)
    message = str(error.value)
    assert "\n" not in message and message.startswith(str(path))
    assert f"trained on observation layout {version}" in message
    assert f"encodes layout {LAYOUT_VERSION + 1} (observations of size {OBS_SIZE + 3})" in message


def test_a_model_of_an_unknown_layout_version_is_refused(tmp_path):
    path = save_model(tmp_path / "model.zip", weights(OBS_SIZE), {"obs_size": OBS_SIZE, "hidden": HIDDEN,
                                                                  "activation": "relu", "layout_version": 99})
    with pytest.raises(SavedModelError, match=f"model.zip was trained on observation layout 99, but .* layout "
                                              f"{LAYOUT_VERSION} "):
        read_model(path)
    path = save_model(tmp_path / "wrong.zip", weights(OBS_SIZE), {"obs_size": OBS_SIZE, "hidden": HIDDEN,
                                                                  "activation": "relu", "layout_version": 1})
    with pytest.raises(SavedModelError, match=f"reads {OBS_SIZE} inputs, but observation layout 1 has 731"):
        read_model(path)
