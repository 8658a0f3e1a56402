"""The training config schema: defaults, overrides, and refusals that name the key."""

from __future__ import annotations

import pytest

from pathlib import Path

from training.config import (RENAMED_CONFIGS, ConfigError, apply_overrides, config_from_dict, config_path,
                             describe_schema, load_config, renamed_config_note, shipped_configs)

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path, text):
    path = tmp_path / "run.yaml"
    path.write_text(text)
    return path


def test_an_empty_file_gives_every_default(tmp_path):
    config = load_config(write(tmp_path, ""))
    assert config.rules == {"num_players": 2}
    assert config.ppo.learning_rate == 3e-4
    assert config.make_rules().stock_size == 30


def test_the_shipped_configs_load_by_name():
    for name in ("quickstart", "ppo_from_planner_2p"):
        config = load_config(name)
        assert config.make_rules().num_players == 2


def test_every_shipped_config_is_a_file_of_the_root_configs_folder_and_loads():
    shipped = shipped_configs()
    assert set(shipped) == {path.stem for path in (ROOT / "configs").glob("*.yaml")}
    assert set(shipped) >= {"quickstart", "ppo_2p", "ppo_from_planner_2p", "snes_2p", "snes_4p", "neural_2p",
                            "rllib_2p"}
    for name, path in shipped.items():
        assert path.name == f"{name}.yaml"
        assert load_config(name).name, name


@pytest.mark.parametrize("old", sorted(RENAMED_CONFIGS))
def test_an_old_config_name_names_the_renamed_config_with_a_note(old, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    new = RENAMED_CONFIGS[old]
    for spelling in (old, f"configs/{old}.yaml", f"training/configs/{old}.yaml"):
        assert config_path(spelling) == shipped_configs()[new]
        assert renamed_config_note(spelling) == (f"note: the config {old!r} is now called {new!r} (the old name "
                                                 "still works)")
    assert renamed_config_note(new) is None and renamed_config_note("quickstart") is None
    monkeypatch.chdir(ROOT)  # snes_4p starts from a weights file named relative to a checkout
    assert load_config(old) == load_config(new)


def test_a_checkout_path_of_the_old_configs_folder_names_the_shipped_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert config_path("configs/quickstart.yaml") == shipped_configs()["quickstart"]
    assert load_config("configs/quickstart.yaml") == load_config("quickstart")


def test_a_file_of_that_path_wins_over_the_shipped_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "quickstart.yaml").write_text("seed: 7\n")
    assert load_config("configs/quickstart.yaml").seed == 7


def test_a_name_that_is_neither_a_file_nor_shipped_lists_the_shipped_configs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("quickstrat", "configs/nosuch.yaml", "other/quickstart.yaml"):
        with pytest.raises(ConfigError, match=r"does not exist: give a YAML file or a shipped config \(neural_2p, "):
            config_path(name)


def test_an_override_sets_a_single_nested_key(tmp_path):
    config = load_config(write(tmp_path, "ppo:\n  n_epochs: 3\n"),
                         ["ppo.learning_rate=1e-4", "network.hidden=[64, 32]", "rules.stock_size=10"])
    assert config.ppo.learning_rate == 1e-4
    assert config.ppo.n_epochs == 3
    assert config.network.hidden == [64, 32]
    assert config.make_rules().stock_size == 10


def test_yaml_scientific_integers_are_accepted(tmp_path):
    config = load_config(write(tmp_path, "budget:\n  total_timesteps: 2e6\n"))
    assert config.budget.total_timesteps == 2_000_000


@pytest.mark.parametrize("text, named", [
    ("ppo:\n  learning_rat: 0.1\n", "ppo.learning_rat"),
    ("bogus: 1\n", "bogus"),
    ("ppo:\n  learning_rate: -1\n", "ppo.learning_rate"),
    ("ppo:\n  learning_rate: fast\n", "ppo.learning_rate"),
    ("network:\n  activation: gelu\n", "network.activation"),
    ("env:\n  num_envs: 0\n", "env.num_envs"),
    ("env:\n  random_seat: 1\n", "env.random_seat"),
    ("rules:\n  num_players: 9\n", "num_players"),
    ("rules:\n  colour: red\n", "rules"),
    ("opponents:\n  mix: {greedy: -1}\n", "opponents.mix.greedy"),
    ("opponents:\n  mix: {greedy: .nan, planner: 1}\n", "opponents.mix.greedy=nan is not allowed: use a finite weight"),
    ("opponents:\n  mix: {greedy: .inf}\n", "opponents.mix.greedy=inf is not allowed: use a finite weight"),
    ("ppo:\n  batch_size: 100000\n", "ppo.batch_size"),
    ("evaluation:\n  opponents: greedy\n", "evaluation.opponents"),
    ("ppo: 3\n", "ppo"),
])
def test_a_bad_key_or_value_is_refused_by_name(tmp_path, text, named):
    with pytest.raises(ConfigError, match=named.replace(".", r"\.").replace("[", r"\[")):
        load_config(write(tmp_path, text))


def test_an_unknown_override_key_is_refused_by_name(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key ppo\.lr: allowed keys in ppo are learning_rate"):
        load_config(write(tmp_path, ""), ["ppo.lr=0.1"])


def test_an_override_without_a_value_is_refused():
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        apply_overrides({}, ["ppo.learning_rate"])


def test_a_missing_file_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")


def test_the_resolved_config_round_trips():
    config = config_from_dict({"seed": 5, "ppo": {"gamma": 0.99}})
    assert config_from_dict(config.to_dict()) == config


def test_the_schema_description_lists_every_section():
    text = describe_schema()
    for key in ("ppo.learning_rate", "opponents.mix", "pretrain.teacher", "checkpoint.every_steps"):
        assert key in text


@pytest.mark.parametrize("override, allowed", [
    ("neural.learning_rate=1e300", "<= 1.0"),
    ("neural.learning_rate=1e9", "<= 1.0"),
    ("ppo.learning_rate=1e9", "<= 1.0"),
    ("pretrain.learning_rate=1e300", "<= 1.0"),
    ("neural.teacher_games=1000000000000", "<= 20000"),
    ("neural.games=1000000000000", "<= 20000"),
    ("neural.curve_games=1000000000000", "<= 1000000"),
    ("neural.final_games=1000000000000", "<= 1000000"),
    ("neural.es_games=1000000000000", "<= 1000000"),
    ("snes.final_deals=1000000000000", "<= 1000000"),
    ("evaluation.final_games=1000000000000", "<= 1000000"),
    ("neural.temperature=1e-320", ">= 0.001"),
])
def test_a_value_past_the_shared_bounds_is_one_line_naming_the_key_and_the_allowed_values(override, allowed):
    key = override.split("=")[0]
    with pytest.raises(ConfigError) as refused:
        load_config("quickstart", [override])
    message = str(refused.value)
    assert message.startswith(f"{key}=") and f"is not allowed: use a number {allowed} (" in message
    assert "\n" not in message


def test_layers_whose_files_a_resume_could_not_read_back_are_refused_up_front():
    with pytest.raises(ConfigError, match=r"neural.hidden=\[1024, 1024\] is not allowed at 2 seats: .* model file "
                                          r"\(at most 16 MiB\): use smaller layers"):
        load_config("quickstart", ["neural.hidden=[1024,1024]"])
    with pytest.raises(ConfigError, match=r"neural.past_networks=40 .* state.json would take up to .* \(at most 64 MiB\)"):
        load_config("quickstart", ["neural.hidden=[512,256]", "neural.past_networks=40"])
    assert load_config("quickstart", ["neural.hidden=[512,256]"]).neural.hidden == [512, 256]
