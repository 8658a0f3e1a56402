"""The one table of shipped players (``agents.shipped``): every name, other name, old name and old file name of a
row loads that row's player; an old name or file says the new one in one line, a documented other name is silent."""

from __future__ import annotations

import warnings

import pytest

from agents import load_policy
from agents.batched.bots import kernel_bot_code
from agents.loading import PRETRAINED, SHIPPED
from agents.shipped import ALIASES, LEARNED, OLD_NAMES, SHIPPED_PLAYERS, ShippedPlayer, of_kind
from agents.learned_parameters import PRETRAINED_WEIGHTS
from agents.neural import SHIPPED_MODELS


def test_every_table_of_players_is_read_from_the_one_table():
    assert list(SHIPPED) == [player.name for player in SHIPPED_PLAYERS]
    assert PRETRAINED_WEIGHTS == of_kind(LEARNED) and list(PRETRAINED_WEIGHTS) == ["learned-2p", "learned-4p"]
    assert list(SHIPPED_MODELS) == ["neural-2p", "td-scratch-2p"]
    assert {name: SHIPPED[player] for name, player in ALIASES.items()} == {
        name: PRETRAINED[name] for name in ALIASES}


def test_the_documented_other_names_play_silently():
    assert ALIASES == {"pretrained-2p": "learned-2p", "pretrained-4p": "learned-4p"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for alias, name in ALIASES.items():
            assert repr(load_policy(alias)) == repr(load_policy(name))
            assert kernel_bot_code(alias) == kernel_bot_code(name)


def test_an_old_name_plays_the_player_with_a_note_naming_the_new_one(monkeypatch):
    monkeypatch.setitem(OLD_NAMES, "skipbo-learned-2p", "learned-2p")
    with pytest.warns(FutureWarning, match="'skipbo-learned-2p' is now called 'learned-2p'"):
        policy = load_policy("skipbo-learned-2p")
    assert repr(policy) == repr(load_policy("learned-2p"))
    with pytest.warns(FutureWarning, match="now called 'learned-2p'"):
        assert kernel_bot_code("skipbo-learned-2p") == kernel_bot_code("learned-2p")


def test_the_old_file_of_ppo_2p_still_loads_with_a_note():
    player = next(player for player in SHIPPED_PLAYERS if player.name == "ppo-2p")
    assert isinstance(player, ShippedPlayer) and player.old_files == ("skipbo-2p.zip",)
    with pytest.warns(FutureWarning, match=r"agents/pretrained/skipbo-2p\.zip is now agents/pretrained/ppo-2p\.zip"):
        policy = load_policy("agents/pretrained/skipbo-2p.zip")
    assert repr(policy) == repr(load_policy("ppo-2p"))
