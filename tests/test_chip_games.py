"""The games' board tests on the emulated chip (masume.sim.chip): a card game's
table on the magic-number-eleven mat (card zones read by MFRC522s), and play that
survives its own faults on soccer-shogi, as test_card_table.py and
test_play_faults.py run them on the simulator (their ``make_sim`` is this
module's). A representative subset: the chip runs the firmware's reader scan at
register level, several times slower than the simulator."""

from __future__ import annotations

import pytest
import test_card_table
import test_play_faults
from test_card_table import table  # noqa: F401  (the fixture, over this module's make_sim)
from test_chip_link import make_sim  # noqa: F401

pytestmark = pytest.mark.slow

test_a_face_down_card_is_named_to_its_owner_only = (
    test_card_table.test_a_face_down_card_is_named_to_its_owner_only)
test_a_mismatch_names_a_face_down_card_to_its_owner_only = (
    test_card_table.test_a_mismatch_names_a_face_down_card_to_its_owner_only)
test_killed_again_and_again_with_moves_made_meanwhile_nothing_is_lost = (
    test_play_faults.test_killed_again_and_again_with_moves_made_meanwhile_nothing_is_lost)
