"""``skipbo import-sb3``: a MaskablePPO archive becomes a model file that plays, without unpickling anything."""

from __future__ import annotations

import base64
import json
import pickle
import zipfile

import numpy as np
import pytest
import torch

from agents import load_policy
from agents.saved_model import SavedModelError
from agents.sb3_import import read_sb3_policy
from skipbo_cli.main import main
from skipbo_env import Game, Rules, observe
from skipbo_env.envs.registration import ENV_ID


def train_tiny(path, **policy_kwargs):
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.env_util import make_vec_env

    vec = make_vec_env(ENV_ID, n_envs=1, seed=0, env_kwargs={"opponents": "random", "stock_size": 5})
    model = MaskablePPO("MlpPolicy", vec, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu",
                        policy_kwargs=policy_kwargs or None)
    model.learn(total_timesteps=16)
    model.save(path)
    return model


@pytest.fixture(scope="module")
def relu_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("sb3") / "ppo.zip"
    return train_tiny(path, net_arch=[32, 16], activation_fn=torch.nn.ReLU), path


def test_the_imported_model_rates_actions_as_the_sb3_policy_does_and_plays(relu_model, tmp_path, capsys):
    model, path = relu_model
    out = tmp_path / "mine.zip"
    assert main(["import-sb3", str(path), str(out)]) == 0
    assert "812 -> 32 -> 16 -> 145, relu" in capsys.readouterr().out
    policy = load_policy(str(out))
    game = Game.new(Rules(stock_size=5), seed=3)
    observation = observe(game, game.current_seat)
    with torch.no_grad():
        tensor = torch.as_tensor(observation["observation"][None])
        latent = model.policy.mlp_extractor.forward_actor(model.policy.extract_features(tensor))
        expected = model.policy.action_net(latent).numpy()[0]
    assert np.allclose(policy.logits(observation["observation"]), expected, atol=1e-5)
    legal = np.flatnonzero(observation["action_mask"])
    assert policy.act(observation) == legal[np.argmax(expected[legal])]
    while not game.is_over:
        game.step(policy.act(observe(game, game.current_seat)))
    assert game.outcome in ("win", "draw", "truncated")


def test_sb3_defaults_import_as_tanh_with_two_layers_of_64(tmp_path):
    path = tmp_path / "default.zip"
    train_tiny(path)
    _, metadata = read_sb3_policy(path)
    assert (metadata["hidden"], metadata["activation"], metadata["obs_size"]) == ([64, 64], "tanh", 812)
    assert metadata["imported_from"]["library"] == "stable-baselines3"


def rewrite(path, out, data=None, tensors=None):
    """A copy of an SB3 archive with its data record or its tensors replaced."""
    with zipfile.ZipFile(path) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.namelist():
            content = source.read(item)
            if item == "data" and data is not None:
                content = json.dumps(data(json.loads(content))).encode()
            if item == "policy.pth" and tensors is not None:
                import io

                buffer = io.BytesIO()
                torch.save(tensors(torch.load(io.BytesIO(content), weights_only=True)), buffer)
                content = buffer.getvalue()
            target.writestr(item, content)
    return out


class Marker:
    def __reduce__(self):
        return (exec, ("open('UNPICKLED', 'w').write('ran')",))


def test_pickled_objects_in_the_archive_are_never_run(relu_model, tmp_path, monkeypatch):
    _, path = relu_model
    monkeypatch.chdir(tmp_path)
    hostile = base64.b64encode(pickle.dumps(Marker())).decode()

    def poison(data):
        data["policy_kwargs"][":serialized:"] = hostile
        data["observation_space"][":serialized:"] = hostile
        return data

    read_sb3_policy(rewrite(path, tmp_path / "hostile.zip", data=poison))
    assert not (tmp_path / "UNPICKLED").exists()


def test_other_architectures_are_refused_with_why(relu_model, tmp_path):
    _, path = relu_model

    def leaky(data):
        data["policy_kwargs"]["activation_fn"] = "<class 'torch.nn.modules.activation.LeakyReLU'>"
        return data

    with pytest.raises(SavedModelError, match="activation .*LeakyReLU.* train with torch.nn.ReLU or torch.nn.Tanh"):
        read_sb3_policy(rewrite(path, tmp_path / "leaky.zip", data=leaky))
    with pytest.raises(SavedModelError, match="only a plain MlpPolicy can be imported; it has other weights "
                                              r"\(features_extractor.cnn.0.weight\)"):
        read_sb3_policy(rewrite(path, tmp_path / "cnn.zip",
                                tensors=lambda t: {**t, "features_extractor.cnn.0.weight": torch.zeros(2, 2)}))

    def other_obs(t):
        t = dict(t)
        t["mlp_extractor.policy_net.0.weight"] = torch.zeros(32, 100)
        return t

    with pytest.raises(SavedModelError, match="trained on observations of size 100, of no layout of this project, but this version of "
                       "skipbo_env encodes layout 3"):
        read_sb3_policy(rewrite(path, tmp_path / "obs.zip", data=lambda d: {**d, "observation_space": {}},
                                tensors=other_obs))


def test_the_command_refuses_a_file_that_is_not_an_sb3_archive(tmp_path, capsys):
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    assert main(["import-sb3", str(tmp_path / "x.zip"), str(tmp_path / "out.zip")]) == 2
    assert "is not a Stable-Baselines3 archive (not a zip file)" in capsys.readouterr().err
    assert not (tmp_path / "out.zip").exists()
