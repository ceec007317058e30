"""The tracker on a card mat (a reader per zone, a card read by its tag), with the
small card game of tests/card_game.py over a card set in a tmp folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from card_game import DECK, Draw, Place, Rules, write_card_set
from masume.boards import load_board
from masume.rules import Game
from masume.tracker import Tracker

BOARD = load_board("magic-number-eleven")


class Mat:
    """A card mat moved by hand: readings are tag ids (or None), with a test clock."""

    def __init__(self, tracker: Tracker, deck_top: str | None) -> None:
        self.tracker = tracker
        self.readings = tracker.expected_readings()
        if deck_top:
            self.readings[DECK] = deck_top  # the physical deck shows some card's tag
        self.now = 0.0
        tracker.observe(self.readings, self.now)

    def put(self, cell: str, tag: str | None) -> None:
        self.readings[cell] = tag
        self.now += 0.05
        self.tracker.observe_square(cell, tag, self.now)

    def settle(self):
        self.now += 1.0
        return self.tracker.tick(self.now)


@pytest.fixture
def table(tmp_path: Path):
    rules = Rules(write_card_set(tmp_path))
    game = Game(rules.start())
    cards = game.position.cards
    tracker = Tracker(game, BOARD, cards=cards)
    deck_top = cards.copies("deck")[0].tag
    return game, tracker, Mat(tracker, deck_top), cards


def tag(cards, copy_id: str) -> str:
    return cards.copy(copy_id).tag


def test_a_pile_of_unknown_top_card_matches_any_card_of_the_set(table) -> None:
    game, tracker, mat, cards = table
    assert game.position.layout()[DECK] == ("tag:*",)
    assert mat.settle().pushed == () and tracker.view.state == "in-sync"
    mat.put(DECK, tag(cards, "D03"))  # another card on top: still the deck
    assert mat.settle().pushed == () and tracker.view.state == "in-sync"


def test_a_card_placed_on_a_zone_is_read_as_that_action(table) -> None:
    game, tracker, mat, cards = table
    assert len(list(game.position.legal_actions())) > 500  # the whole hand onto any cell
    mat.put("H2b", tag(cards, "H07").lower())  # as the link reports it: raw.hex()
    assert [str(a) for a in mat.settle().pushed] == ["H07@H2b"]
    assert tracker.view.state == "in-sync"
    mat.put("A3c", tag(cards, "A11"))
    assert [str(a) for a in mat.settle().pushed] == ["A11@A3c"]


def test_an_unknown_tag_is_a_mismatch_that_says_to_enroll_it(table) -> None:
    game, tracker, mat, cards = table
    mat.put("H2b", "04DEADBEEF0001")
    assert mat.settle().pushed == ()
    assert tracker.view.state == "mismatch"
    assert tracker.view.message == ("unknown card on H2b (tag 04DEADBEEF0001): "
                                    "enroll it with masume cards enroll; "
                                    "to put it right: take the card off H2b")
    assert tracker.view.differing == ("H2b",)
    # ... also on the deck, which takes any card of the set but not a stranger.
    mat.put("H2b", None)
    mat.put(DECK, "04DEADBEEF0002")
    mat.settle()
    assert tracker.view.message.startswith(f"unknown card on {DECK} (tag 04DEADBEEF0002)")
    mat.put(DECK, tag(cards, "D01"))
    mat.settle()
    assert tracker.view.state == "in-sync" and game.actions == []


def test_a_card_where_the_game_does_not_expect_it_is_named(table) -> None:
    game, tracker, mat, cards = table
    mat.put("A2b", tag(cards, "H05"))  # home's card on away's field: no action does that
    mat.settle()
    assert tracker.view.state == "mismatch"
    assert tracker.view.message == ("Home player 5 (H05) is on A2b: the game has no card there "
                                    "(laying it on A2b is not legal here); "
                                    "to put it right: take the card off A2b")
    mat.put("A2b", None)
    mat.put("H2b", tag(cards, "H05"))
    assert [str(a) for a in mat.settle().pushed] == ["H05@H2b"]
    # A card swapped for another on a placed zone: the game's card is named too.
    mat.put("H2b", tag(cards, "H06"))
    mat.settle()
    assert tracker.view.message == ("Home player 6 (H06) is on H2b, where the game has "
                                    "Home player 5 (H05) (laying it on H2b is not legal here); "
                                    "to put it right: take the card off H2b; "
                                    "put Home player 5 (H05) on H2b")
    # The card knocked off: the board is as before the placement, which reads as
    # taking it back (as a piece moved back does); put back, it is read again.
    mat.put("H2b", None)
    assert [str(a) for a in mat.settle().popped] == ["H05@H2b"]
    assert tracker.view.state == "in-sync" and game.notations() == []
    mat.put("H2b", tag(cards, "H05"))
    mat.settle()
    assert tracker.view.state == "in-sync" and game.notations() == ["H05@H2b"]
    # Knocked off once the reply is down, it is lit as lifted and nothing is recorded.
    mat.put("A1a", tag(cards, "A01"))
    mat.settle()
    mat.put("H2b", None)
    mat.settle()
    assert tracker.view.state == "lifted" and game.notations() == ["H05@H2b", "A01@A1a"]


def test_two_quick_placements_are_read_with_a_bounded_search(table) -> None:
    game, tracker, mat, cards = table
    position = game.position
    width = len(list(position.legal_actions()))
    mat.put("H4a", tag(cards, "H01"))
    mat.put("A1f", tag(cards, "A02"))
    applied = position.applied[0]
    assert [str(a) for a in mat.settle().pushed] == ["H01@H4a", "A02@A1f"]
    applied = position.applied[0] - applied
    # Every first action is tried once, and only the few that put a sensed card on
    # a changed zone are looked past: not width * width (some 280,000).
    assert applied < 3 * width, (applied, width)


def test_a_draw_is_a_choice_not_a_reading(table, tmp_path: Path) -> None:
    from masume.play.core import _comparable

    game, tracker, mat, cards = table
    position = game.position
    invisible = [a for a in position.legal_actions()
                 if _comparable(position.apply(a).layout()) == _comparable(position.layout())]
    assert invisible == [Draw()]
    tracker.push(Draw())
    assert tracker.view.state == "in-sync" and game.notations() == ["draw"]
    mat.put("A1a", tag(cards, "A01"))
    assert mat.settle().pushed == (Place("A01", "A1a"),)


def test_the_legal_zones_light_from_the_engine_highlights(table) -> None:
    from masume.leds import GREEN, picture
    from masume.link import Led

    game, tracker, mat, cards = table
    leds = picture(BOARD, game.position, tracker.view)
    # Where a card may go is green, over the area in play (a highlight of its own).
    assert leds["H2b"] == leds["home-synergy-1"] == Led(GREEN)
    assert "A2b" not in leds
    mat.put("H2b", tag(cards, "H01"))
    mat.settle()
    leds = picture(BOARD, game.position, tracker.view)
    assert leds["A2b"] == Led(GREEN) and "H2c" not in leds
    # A side's lamps (turn, score) in the side's colour.
    colours = game.position.legend.sides
    assert leds["turn-away"] == Led(colours["away"], "steady") and "turn-home" not in leds
    assert leds["home-score-1"].rgb == colours["home"]
    assert leds["away-score-1"].rgb == colours["away"]


# ---- the real engines ------------------------------------------------------------------


def real_table(game: str, **options):
    from masume.games import load_rules
    from masume.play.cards import cards_of

    rules = load_rules(game)
    position = rules.start(**options)
    cards = cards_of(position)
    tracker = Tracker(Game(position), load_board(rules.board), cards=cards)
    readings = tracker.expected_readings()
    spare = iter(c.tag for c in reversed(cards.copies()))
    for cell, reading in readings.items():
        if reading == "*":  # a pile: whatever card lies on top
            readings[cell] = next(spare)
    mat = Mat.__new__(Mat)
    mat.tracker, mat.readings, mat.now = tracker, readings, 0.0
    tracker.observe(readings, 0.0)
    return tracker.game, tracker, mat, cards


def test_magic_number_eleven_placements_read_from_the_mat() -> None:
    game, tracker, mat, cards = real_table(
        "magic-number-eleven", home_stars="ST01/ST02/ST03", away_stars="ST04/ST05/ST06",
        home_bench="H01/H02/H03", away_bench="A01/A02/A03")
    assert mat.settle().pushed == () and tracker.view.state == "in-sync"
    mat.put("H2c", tag(cards, "H07"))
    assert game.notations() == [] and [str(a) for a in mat.settle().pushed] == ["H07 H2c"]
    # Two quick placements, one a side, read as both.
    mat.put("A3b", tag(cards, "A08"))
    mat.put("H1c", tag(cards, "ST02"))
    mat.settle()
    assert game.notations()[-2:] == ["A08 A3b", "ST02 H1c"]
    # A stranger, then a card of the set where no card goes.
    mat.put("H4f", "04DEADBEEF0001")
    mat.settle()
    assert tracker.view.message.startswith("unknown card on H4f (tag 04DEADBEEF0001)")
    mat.put("H4f", tag(cards, "A09"))
    mat.settle()
    assert tracker.view.message.startswith(f"{cards.copy('A09').card.name} (A09) is on H4f")


def test_eyeshield21_set_up_read_from_the_mat() -> None:
    game, tracker, mat, cards = real_table("eyeshield21")
    assert mat.settle().pushed == () and tracker.view.state == "in-sync"
    position = game.position
    first = next(a for a in position.legal_actions())
    copy, cell = position.notation(first).split("@")  # a character laid face down
    mat.put(cell, tag(cards, copy).lower())
    assert mat.settle().pushed == (first,) and tracker.view.state == "in-sync"
