"""docs/bots.md's table of shipped players is the table ``agents.shipped.SHIPPED_PLAYERS``, and each row's files
exist and carry the player's name."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from agents.shipped import KINDS, SHIPPED_PLAYERS

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "bots.md"
HEADER = "| name | what it is | file | made by | leaderboard file | other names |"


def render_table() -> str:
    """The table of docs/bots.md, "Shipped players and their names", drawn from the table of shipped players."""
    lines = [HEADER, "|---|---|---|---|---|---|"]
    for player in SHIPPED_PLAYERS:
        others = ", ".join(f"`{name}`" for name in player.other_names + player.old_names)
        lines.append(f"| `{player.name}` | {player.what} | `agents/pretrained/{player.file}` | `{player.command}` "
                     f"(`{player.config}`) | [`{player.leaderboard}`](leaderboard/{player.leaderboard}) | {others} |")
    return "\n".join(lines) + "\n"


def test_the_bots_page_shows_the_table_of_shipped_players():
    text = PAGE.read_text()
    start = text.index(HEADER)
    end = text.index("\n\n", start) + 1
    assert text[start:end] == render_table()


def test_every_shipped_player_has_its_files_named_after_it():
    names = [player.name for player in SHIPPED_PLAYERS]
    assert len(set(names)) == len(names)
    others = [name for player in SHIPPED_PLAYERS for name in player.other_names + player.old_names]
    assert len(set(others)) == len(others) and not set(others) & set(names)
    for player in SHIPPED_PLAYERS:
        assert player.kind in KINDS
        assert Path(player.path).is_file() and Path(player.file).stem == player.name, player
        assert (ROOT / player.config).is_file() and player.command.split()[:3] == ["skipbo", "train",
                                                                                 Path(player.config).stem]
        assert (ROOT / player.record).is_file(), player
        players = yaml.safe_load((ROOT / player.config).read_text()).get("rules", {}).get("num_players", 2)
        assert player.leaderboard == f"{player.name}-{players}p.json", player
        result = json.loads((ROOT / "docs" / "leaderboard" / player.leaderboard).read_text())
        assert result["policy"]["spec"] == player.name and result["players"] == players, player
        for old in player.old_files:
            assert not (ROOT / "agents" / "pretrained" / old).exists()
