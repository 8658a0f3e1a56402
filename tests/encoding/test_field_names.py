"""The layout table is the one place fields are named: readable names, each once, that every reader (a network's
inputs, the kernels' offsets, a view by name) uses; and a change of the table moves its version."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np

from skipbo_env import encoding
from skipbo_env.encoding import (
    FIELD_SEATS, FIELDS, LAYOUT_ROWS, LAYOUT_SIZES, LAYOUT_VERSION, MAX_SEATS, OBS_SIZE, SCALE, field_indices,
    seat_field, table_fields, table_inputs,
)

LAYOUT_DIGESTS = {3: "258cfc7841f2d31b"}
"""A digest of each layout version's table (names, offsets, sizes and scales)."""


def test_every_field_has_one_readable_name():
    names = [name for name, _, _ in LAYOUT_ROWS]
    assert len(set(names)) == len(names) and list(FIELDS) == names
    assert all(re.fullmatch(r"(seat[0-5]\.)?[a-z][a-z_]*(_[0-5])?", name) for name in names), names
    for seat in range(MAX_SEATS):
        assert FIELD_SEATS[seat_field(seat, "hand_size")] == seat and FIELD_SEATS[f"buried_discards_{seat}"] == seat
    assert "hand" not in FIELD_SEATS


def test_the_fields_tile_the_vector_and_name_the_table_inputs():
    assert np.array_equal(field_indices(FIELDS), np.arange(OBS_SIZE))
    for players in range(2, 7):
        assert np.array_equal(table_inputs(players), field_indices(table_fields(players)))
        assert seat_field(players - 1, "present") in table_fields(players)
        assert all(FIELD_SEATS.get(name, 0) < players for name in table_fields(players))


def test_a_change_of_the_table_moves_the_layout_version():
    digest = hashlib.sha256(json.dumps([list(row) for row in LAYOUT_ROWS]).encode() + SCALE.tobytes()).hexdigest()
    assert LAYOUT_SIZES[LAYOUT_VERSION] == OBS_SIZE == encoding.OBS_HIGH.size
    assert digest[:16] == LAYOUT_DIGESTS.get(LAYOUT_VERSION), (
        "the layout table changed: move skipbo_env.encoding.LAYOUT_VERSION on (docs/layout.md, 'Changing the "
        f"observation') and add {{{LAYOUT_VERSION + 1}: {digest[:16]!r}}} to LAYOUT_DIGESTS")
