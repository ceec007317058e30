"""Eyeshield 21 TCG cards: the demo set, the game's checks of a card set (kinds,
play types, power, the ability vocabulary) and deck building (exactly 40 cards,
at most 3 of a name, no ball cards), each problem as one clear line."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from masume.cards import SETS_DIR, CardSetError, load_card_set
from masume.games import load_rules
from masume.rules.eyeshield21 import check_cards, deck_lists
from masume.rules.eyeshield21.cards import KINDS, ability_of, card_warnings
from masume.rules.eyeshield21.geometry import SIDES

RULES = load_rules("eyeshield21")

DEMO = SETS_DIR / "eyeshield21-demo.toml"


def variant(tmp_path: Path, *changes: tuple[str, str]) -> Path:
    """The demo set with text replaced (each change must apply once)."""
    text = DEMO.read_text(encoding="utf-8").replace('id = "eyeshield21-demo"', 'id = "variant"')
    for old, new in changes:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "variant.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_the_demo_set_is_marked_and_passes_every_check() -> None:
    cards = load_card_set("eyeshield21-demo")
    assert "NOT the publisher's" in cards.notice
    assert "NOT the publisher's cards" in DEMO.read_text(encoding="utf-8").splitlines()[2]
    assert check_cards(cards) == [] and RULES.check_cards(cards) == []
    assert {card.kind for card in cards} == set(KINDS)


def test_demo_tags_are_fake_deterministic_and_one_per_copy() -> None:
    cards = load_card_set("eyeshield21-demo")
    tags = [copy.tag for copy in cards.copies()]
    assert not cards.untagged() and len(set(tags)) == len(tags)
    assert all(re.fullmatch(r"E5\d{12}", tag) for tag in tags)
    assert cards.copy("F01.2").piece == "tag:E5000000000002"


def test_demo_decks_are_legal_and_exercise_every_rule() -> None:
    cards = load_card_set("eyeshield21-demo")
    decks = deck_lists(cards)
    assert list(decks) == ["falcons", "sharks"]
    for deck in decks.values():
        assert len(deck.copies) == 40
        names = Counter(cards.copy(c).card.name for c in deck.copies)
        assert max(names.values()) <= 3
        kinds = Counter(cards.copy(c).card.kind for c in deck.copies)
        assert set(kinds) == {"character", "combination", "tactics", "reaction"}
        assert [cards.copy(b).card["mark"] for b in deck.balls] == [True, False]
    abilities = [ability_of(card) for card in cards if ability_of(card)]
    assert {a.effect for a in abilities} == {"power", "weaken", "team-power", "draw", "guts", "mill"}
    assert {a.when for a in abilities} == {"main", "play", "attack-end", "turn-end", "attack", "block", "any"}
    assert any(a.bench for a in abilities) and any(a.cost for a in abilities)
    assert any(card.get("lasting") for card in cards)


@pytest.mark.parametrize("change, message", [
    (('kind = "tactics"', 'kind = "trick"'),
     "card F30: kind 'trick' is not one of character, combination, tactics, reaction, ball"),
    (('play = ["pass"]\npower = 3', 'play = ["kick"]\npower = 3'),
     "card F01: play must be run, pass or line (or a list of them), not ['kick']"),
    (('power = 3', 'power = -1'), "card F01: power must be a whole number of at least 0, not -1"),
    (('members = ["Aoki", "Kuroda"]', 'members = ["Aoki"]'),
     "card F20: members must list at least two character names"),
    (('mark = true', 'mark = "yes"'), "card B1: mark must be true (the ball mark) or false"),
    (('game = "eyeshield21"', 'game = "magic-number-eleven"'),
     "line 25: [[card]] 1: unknown key 'play' (known: id, name, kind, copies, tags, team, "
     "position, symbols, effect, stars, tackle, role, course) (the file reads as a eyeshield21 "
     "set: is game = 'magic-number-eleven' right?)"),
])
def test_each_card_problem_is_one_clear_line(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    try:
        problems = check_cards(load_card_set(variant(tmp_path, change)))
    except CardSetError as exc:  # the schema refuses it at loading, in the game's words
        problems = str(exc).split(": ", 1)[1].split("; ")
    assert message in problems, problems


@pytest.mark.parametrize("change, message", [
    (('effect = "draw", amount = 1, cost = 1', 'effect = "teleport", amount = 1, cost = 1'),
     "card F01: ability effect must be one of power, weaken, team-power, draw, guts, mill, not 'teleport'"),
    (('{ when = "play", effect = "draw"', '{ when = "later", effect = "draw"'),
     "card F01: ability when must be one of main, play, attack-end, turn-end, not 'later'"),
    (('{ when = "main", effect = "guts", amount = 2, bench = true }',
      '{ when = "main", effect = "power", amount = 2 }'),
     "card F03: power works only during an attack, not at main"),
    (('amount = 1, team = "Falcons"', 'amount = 1'), "card F08: a team-power ability names its team"),
    (('{ when = "attack", effect = "power", amount = 2 }', '{ when = "attack", effect = "power", amount = 2, bench = true }'),
     "card F30: only a character goes to the bench for its ability"),
    (('effect = "draw", amount = 1, cost = 1', 'effect = "draw", amount = 1, cost = 1, colour = "red"'),
     "card F01: ability has unknown field(s) colour"),
    (('lasting = true\nability = { when = "attack", effect = "power"', 'lasting = true\nability = { when = "attack", effect = "draw"'),
     "card F41: a lasting reaction changes power (power, weaken or team-power)"),
])
def test_an_ability_outside_the_vocabulary_is_a_warning_never_a_refusal(
        tmp_path: Path, change: tuple[str, str], message: str) -> None:
    """Issue 14: an owner's card that the vocabulary cannot say plays; the players apply
    it by hand (adjustments), and ``masume cards check`` says which."""
    cards = load_card_set(variant(tmp_path, change))
    assert check_cards(cards) == []
    assert f"{message}; the players apply it by hand" in card_warnings(cards)
    assert RULES.start(cards=cards).table.card_set == cards


@pytest.mark.parametrize("change, message", [
    (('cards = ["F01", ', 'cards = ["F01.1", '), "deck falcons: 38 cards; a deck holds exactly 40"),
    (('"F09", "F20"', '"F09", "F09.1", "F20"'),
     "deck falcons: F09.1 listed twice"),
    (('name = "Kuroda"', 'name = "Aoki"'), "deck falcons: 6 cards named 'Aoki'; at most 3 of a name"),
    (('cards = ["F01", ', 'cards = ["B0.2", "F01.1", "F01.2", '),
     "deck falcons: ball cards stay out of the deck (B0.2)"),
    (('balls = ["B1.1", "B0.1"]', 'balls = ["B1.1", "B1.2"]'),
     "deck falcons: balls must be two ball cards, one with the ball mark and one without"),
    (('cards = ["F01", ', 'cards = ["F99", '), "deck falcons: cards: no card 'F99' in the set"),
    (('id = "sharks"', 'id = "falcons"'), "deck falcons: the id is used twice"),
])
def test_deck_building_problems(tmp_path: Path, change: tuple[str, str], message: str) -> None:
    try:
        problems = check_cards(load_card_set(variant(tmp_path, change)))
    except CardSetError as exc:  # the schema refuses it at loading, in the game's words
        problems = str(exc).split(": ", 1)[1].split("; ")
    assert message in problems, problems


def test_a_set_without_deck_lists(tmp_path: Path) -> None:
    text = DEMO.read_text(encoding="utf-8")
    path = tmp_path / "nodecks.toml"
    path.write_text(text[:text.index("[[deck]]")], encoding="utf-8")
    assert check_cards(load_card_set(path)) == ["the set has no deck lists ([[deck]] tables)"]


def test_start_refuses_a_set_that_fails_the_checks(tmp_path: Path) -> None:
    path = variant(tmp_path, ('cards = ["F01", ', 'cards = ["F01.1", '))
    with pytest.raises(ValueError, match="deck falcons: 38 cards"):
        RULES.start(cards=str(path))
    (tmp_path / "good").mkdir()
    good = variant(tmp_path / "good", ('title = "Kirin Falcons (demo)"', 'title = "Falcons"'))
    position = RULES.start(cards=str(good))
    assert position.to_text().startswith(f"cards={good} ")
    assert RULES.from_text(position.to_text()) == position


def test_a_card_set_object_may_be_given() -> None:
    cards = load_card_set("eyeshield21-demo")
    assert RULES.start(cards=cards) == RULES.start(cards=cards)
    assert RULES.start(cards=cards).table.card_set == cards


def test_the_table_finds_the_card_set_of_a_position() -> None:
    from masume.play.cards import cards_of

    position = RULES.start()
    assert cards_of(position) is position.card_set is position.table.card_set


def test_a_rewritten_set_file_is_read_again(tmp_path: Path) -> None:
    """``masume cards enroll`` rewrites a set's tags: a new game sees the new ones."""
    path = variant(tmp_path)
    assert RULES.start(cards=str(path)).table.piece("F01.1") == "tag:E5000000000001"
    text = path.read_text(encoding="utf-8").replace('"E5000000000001"', '"04A1B2C3D4E5F6"')
    path.write_text(text + "\n", encoding="utf-8")
    assert RULES.start(cards=str(path)).table.piece("F01.1") == "tag:04A1B2C3D4E5F6"


# ---------------------------------------------------------------- any real card


#: Cards the vocabulary cannot say: Kuroda's text is the players' to apply, Aoki has two
#: abilities in the vocabulary, Play Action one outside it (``effect = "swap"``).
ANY_CARD_CHANGES = (
    ('play = ["pass"]\npower = 4\n',
     'play = ["pass"]\npower = 4\nability = { by_hand = true, text = "when Kuroda plays, the '
     'opponent loses 2 power and you draw 1" }\n'),
    ('ability = { when = "play", effect = "draw", amount = 1, cost = 1 }',
     'ability = [{ when = "play", effect = "draw", amount = 1, cost = 1 },\n'
     '           { when = "play", effect = "power", amount = 1 }]'),
    ('{ when = "attack", effect = "power", amount = 2 }',
     '{ when = "attack", effect = "swap", amount = 2 }'),
)


def test_any_real_card_plays_by_hand_with_recorded_adjustments(tmp_path: Path) -> None:
    """Issue 14: a card set can describe any card: several abilities per card, and a
    card marked by hand whose effect the players apply through recorded adjustments
    (power +N, discard a named card, draw N, move a card), so the record stays exact."""
    from masume.records import parse_record, replay, write_record
    from masume.rules import Game
    from masume.rules.eyeshield21 import Use
    from masume.rules.eyeshield21.actions import Adjust

    cards = load_card_set(variant(tmp_path, *ANY_CARD_CHANGES))
    assert check_cards(cards) == []
    assert card_warnings(cards) == [
        "card F02: by hand: when Kuroda plays, the opponent loses 2 power and you draw 1",
        "card F30: ability effect must be one of power, weaken, team-power, draw, guts, mill, "
        "not 'swap'; the players apply it by hand"]
    game = Game(RULES.start(cards=cards))

    def play(*texts: str) -> None:
        for text in texts:
            game.push_notation(text)

    play("F01.1@home-character-1", "F02.1@home-character-2", "F05.1@home-character-3", "deal",
         "S02.1@away-character-1", "S03.1@away-character-2", "S05.1@away-character-3", "deal",
         "reveal")
    p = game.position
    assert p.by_hand() == (("home-character-2", "when Kuroda plays, the opponent loses 2 "
                                                "power and you draw 1"),)
    assert p.is_legal(p.parse_action("adjust home draw 1"))
    assert p.is_legal(p.parse_action("adjust away draw 10"))  # adjustments add up for more
    # home attacks in pass with Aoki (PASS 3) and Kuroda (PASS 4); away guesses run
    play("attack", "home-character-1>home-pass-1", "home-character-2>home-pass-2",
         "home-character-3>home-run-1", "B1.1@home-pass-ball", "B0.1@home-run-ball", "ready",
         "away-character-1>away-run-1", "away-character-2>away-run-2",
         "away-character-3>away-pass-1", "ready", "B1.2@away-run-ball", "reveal")
    p = game.position
    assert p.step == "play-attack" and p.damage() == 7 - 5
    # Aoki's two abilities, each once: use home-pass-1 (draw 1, 1 guts), use home-pass-1#2
    assert {a for a in p.legal_actions() if isinstance(a, Use)} == {
        Use("home-pass-1"), Use("home-pass-1", ability=2)}
    hand = p.piles[0].hand
    play("use home-pass-1#2", "adjust away power -2", "adjust home draw 1")
    p = game.position
    assert p.damage() == 8 - 5 + 2 and p.piles[0].hand == hand + 1
    assert not p.is_legal(Use("home-pass-1", ability=2))  # once a turn
    assert "used=F01.1#2" in p.to_text() and RULES.from_text(p.to_text()) == p
    # an ability may concern the opponent: home, to move, may record one on away's cards
    # and hand (a card moved to a free place of its owner's, a named card discarded)
    assert p.is_legal(p.parse_action("adjust move away-run-1>away-bench-1"))
    assert p.is_legal(Adjust("discard", card=next(iter(p._pools[1]))))
    with pytest.raises(Exception, match="not an adjustment of this moment"):
        p.parse_action("adjust move away-run-1>home-bench-1")  # not a place of its owner's
    play("done")
    while game.position.step != "damage":
        play("done" if game.position.step != "refill" else "refill 0")
    p = game.position
    assert p.legal_actions().__next__() == p.parse_action("damage 5")
    play("damage 5", "adjust discard S03.1")  # Gondo discarded by the text, named
    p = game.position
    assert "S03.1" in p.gone[1] and p.card_at("away-run-2") is None
    # the side not to move has a card of its hand discarded, named, by the same text
    other = 1 - SIDES.index(p.status().to_move)
    named, hand = min(p._pools[other]), p.piles[other].hand
    play(f"adjust discard {named}")
    p = game.position
    assert named in p.gone[other] and p.piles[other].hand == hand - 1
    play("done")  # the change; then home tidies (the record's line ends with home's turn)
    while game.position.status().to_move == "home":
        game.push(next(a for a in game.legal_actions() if not str(a).startswith("adjust")))
    p = game.position
    # the record holds every adjustment and replays to the same position
    text = write_record(game)
    assert "adjust away power -2" in text and "use home-pass-1#2" in text
    assert "adjust discard S03.1" in text
    assert f"adjust discard {named}" in text
    text = text.replace('[Game "eyeshield21"]',
                        f'[Game "eyeshield21"]\n[Options "cards={tmp_path / "variant.toml"}"]')
    again = replay(parse_record(text))
    assert again.position == p
    record = tmp_path / "by-hand.txt"
    record.write_text(text, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "masume.cli", "record", "check", "--game",
                             "eyeshield21", str(record)], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0 and "ok," in result.stdout, result.stderr
    # a set without by-hand cards offers no adjustment: the demo plays as before
    demo = RULES.start()
    assert not any(type(a).__name__ == "Adjust" for a in demo.legal_actions())


def test_both_seats_pages_offer_both_sides_adjustments(tmp_path: Path) -> None:
    """Issue 14: an ability may concern either player, so each seat's page lists both
    sides' adjustments that no sensor sees (draw, power) as choices, whoever is to move;
    a move or a discard (the card laid on its owner's discard pile) is the card moved."""
    from masume.boards import load_board
    from masume.play.cards import for_viewer
    from masume.play.core import TableCore
    from masume.rules import Game
    from masume.rules.eyeshield21.actions import Adjust

    game = Game(RULES.start(cards=load_card_set(variant(tmp_path, *ANY_CARD_CHANGES))))
    for text in ("F01.1@home-character-1", "F02.1@home-character-2", "F05.1@home-character-3",
                 "deal", "S02.1@away-character-1", "S03.1@away-character-2",
                 "S05.1@away-character-3", "deal", "reveal"):
        game.push_notation(text)
    board = load_board(RULES.board)
    core = TableCore(RULES, board, game)
    core.tracker.observe(core.tracker.expected_readings(), 0.0)
    core.redraw()
    assert core.tracker.view.state == "in-sync" and game.position.to_move == "home"
    choices = core.choices()
    texts = [game.position.notation(a) for a in choices]
    wanted = {"adjust home draw 1", "adjust away draw 2"}
    assert wanted <= set(texts)
    assert game.position.is_legal(Adjust("discard", card=min(game.position._pools[1])))
    for viewer in ("home", "away", None):
        seen = for_viewer({"choices": [{"text": t} for t in texts], "pieces": {}},
                          position=game.position, board=board, viewer=viewer, choices=choices)
        assert wanted <= {c["text"] for c in seen["choices"]}, viewer
