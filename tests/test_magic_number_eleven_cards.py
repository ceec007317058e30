"""Magic Number Eleven card data: the demo set, the game's checks of a card set, records.

The records under tests/records/magic-number-eleven/ are replayed here and through
``masume record check`` (the generic records module, Options header for the set).
"""

from __future__ import annotations

import copy
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from masume.cards import SETS_DIR, CardSet, CardSetError, load_card_set
from masume.games import load_rules
from masume.records import read_record, replay, write_record
from dataclasses import replace

from masume.rules import Game, IllegalAction
from masume.rules.magic_number_eleven import Adjust
from test_records import expected_failure

RULES = load_rules("magic-number-eleven")
DEMO = SETS_DIR / "magic-number-eleven-demo.toml"
RECORDS = Path(__file__).parent / "records" / "magic-number-eleven"
LEGAL = sorted(p for p in RECORDS.glob("*.txt") if "-illegal-" not in p.name)
ILLEGAL = sorted(RECORDS.glob("*-illegal-*.txt"))


def demo_data() -> dict[str, Any]:
    return tomllib.loads(DEMO.read_text(encoding="utf-8"))


def entry(data: dict[str, Any], card_id: str) -> dict[str, Any]:
    return next(c for c in data["card"] if c["id"] == card_id)


def test_the_demo_set_says_it_is_not_the_publishers_and_keeps_the_public_counts() -> None:
    cards = load_card_set("magic-number-eleven-demo")
    assert "NOT the publisher's cards" in cards.notice
    assert "NOT THE PUBLISHER'S CARDS" in DEMO.read_text(encoding="utf-8")
    assert RULES.check_cards(cards) == []
    players = cards.copies("player")
    assert len(players) == 32 and sum(c.card["team"] == "star" for c in players) == 12
    synergy = cards.copies("synergy")
    expected = [1] * 3 + [2] * 5 + [3] * 10 + [4] * 5 + [5] * 2
    assert sorted(c.card["stars"] for c in synergy) == expected
    assert [c.id for c in synergy if c.card.get("tackle")] == ["SY01", "SY02"]
    assert len(cards.copies("penalty")) == 11
    assert not cards.untagged() and all(c.tag.startswith("D0") and len(c.tag) == 14
                                        for c in cards.copies())
    # every instant effect of the vocabulary is on some card
    from masume.rules.magic_number_eleven.cards import EFFECTS
    assert {c.card.get("effect") for c in players} - {None} == set(EFFECTS)


@pytest.mark.parametrize("change, message", [
    (lambda d: entry(d, "H01").update(position="GK"),
     "card H01: position 'GK' is not FW, MF or DF"),
    (lambda d: entry(d, "H01").update(team="visitors"),
     "card H01: team 'visitors' is not home, away or star"),
    (lambda d: entry(d, "H01")["symbols"].update(top=["shot"]),
     "card H01: symbols.top must be [left half, right half]"),
    (lambda d: entry(d, "H01")["symbols"].update(left="goal"),
     "card H01: symbol 'goal' is not one of"),
    (lambda d: entry(d, "H01")["symbols"].update(middle="shot"),
     "card H01: symbols.middle is not an edge"),
    (lambda d: entry(d, "H01").update(effect={"text": "teleport"}),
     "card H01: an effect table is { by_hand = true, text = \"...\" }"),
    (lambda d: entry(d, "SY05").update(stars=6),
     "card SY05: stars must be a whole number from 1 to 5"),
    (lambda d: d.update(published_counts=True) or entry(d, "SY05").update(tackle=True),
     "tackle cards: 3, the published set has 2"),
    (lambda d: d.update(published_counts="yes"), "published_counts must be true or false"),
    (lambda d: entry(d, "PK03").update(role="goalkeeper"),
     "card PK03: role 'goalkeeper' is not kick"),
    (lambda d: entry(d, "PK01").update(kind="trainer"), "card PK01: kind 'trainer' is not player"),
    (lambda d: entry(d, "A01").update(team="home"), "home players: 11, the game needs 10"),
    (lambda d: d["card"].remove(entry(d, "ST12")), "star players: 11, the game needs 12"),
    (lambda d: d.update(game="eyeshield21"),
     "the set is for 'eyeshield21', not magic-number-eleven"),
])
def test_check_cards_names_each_problem(change: Any, message: str) -> None:
    data = copy.deepcopy(demo_data())
    change(data)
    problems = RULES.check_cards(CardSet(data))
    assert any(p.startswith(message) for p in problems), problems


def test_a_kick_course_no_save_card_names_is_a_warning_never_a_refusal() -> None:
    """The courses are printed on the penalty-kick cards (a lost figure); the seed only
    says 「守備側が攻撃側のシュートコースを当てられたら守備に成功する」: a box whose save cards
    never name a kick's course plays (that kick always scores), with a warning."""
    data = copy.deepcopy(demo_data())
    entry(data, "PK08").update(course="upper-90")
    cards = CardSet(data)
    assert RULES.check_cards(cards) == []
    assert "penalty-kick courses no save card can guess: centre" in RULES.card_warnings(cards)
    position = RULES.start(cards=cards)
    assert position.cards is cards


def test_counts_from_the_lost_figure_warn_and_never_refuse() -> None:
    """The synergy card list (「シナジーカード一覧 … 1枚 2枚 5枚 10枚 5枚 2枚」) lost its star
    values: two tackle cards and 1 star x 3 are a reading, so a box that differs plays,
    with a warning; the set's option ``published_counts`` makes them binding."""
    data = copy.deepcopy(demo_data())
    entry(data, "SY05").update(tackle=True, stars=1)
    cards = CardSet(data)
    assert RULES.check_cards(cards) == []
    assert RULES.card_warnings(cards) == [
        "synergy cards with 1 stars: 4, the published set has 3",
        "synergy cards with 2 stars: 4, the published set has 5",
        "tackle cards: 3, the published set has 2"]
    assert RULES.start(cards=cards).cards == cards
    assert RULES.card_warnings(load_card_set(DEMO)) == []
    data["published_counts"] = True
    with pytest.raises(CardSetError, match="tackle cards: 3, the published set has 2"):
        RULES.start(cards=CardSet(data))


def test_start_refuses_a_set_that_fails_the_checks_and_accepts_a_card_set_or_a_path(
        tmp_path: Path) -> None:
    data = demo_data()
    entry(data, "H01")["position"] = "GK"
    with pytest.raises(CardSetError, match="card H01: position 'GK'"):
        RULES.start(cards=CardSet(data))
    assert RULES.start(cards=load_card_set(DEMO)).cards == load_card_set(DEMO)
    copy_path = tmp_path / "mine.toml"
    copy_path.write_text(DEMO.read_text(encoding="utf-8").replace(
        'id = "magic-number-eleven-demo"', 'id = "mine"'), encoding="utf-8")
    position = RULES.start(cards=str(copy_path))
    assert position.cards.id == "mine" and RULES.from_text(position.to_text()) == position


# ---------------------------------------------------------------- records


@pytest.mark.parametrize("path", LEGAL, ids=lambda p: p.name)
def test_the_sample_records_replay_and_write_back(path: Path) -> None:
    record = read_record(path)
    game = replay(record)
    assert len(game.actions) == sum(len(t.actions) for t in record.turns)
    written = write_record(game, dict(record.headers))
    turn_lines = [line for line in path.read_text(encoding="utf-8").splitlines()
                  if line and not line.startswith(("#", "["))]
    assert written.splitlines()[-len(turn_lines):] == [", ".join(t.actions) for t in record.turns]


@pytest.mark.parametrize("path", ILLEGAL, ids=lambda p: p.name)
def test_the_illegal_twin_fails_where_its_header_says(path: Path) -> None:
    expected = expected_failure(path)
    assert expected is not None
    result = subprocess.run([sys.executable, "-m", "masume.cli", "record", "check", "--game",
                             "magic-number-eleven", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stderr.strip() == expected


def test_record_check_on_the_command_line() -> None:
    path = RECORDS / "seed-judgement.txt"
    result = subprocess.run([sys.executable, "-m", "masume.cli", "record", "check", "--game",
                             "magic-number-eleven", str(path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ok," in result.stdout


def test_a_whole_match_writes_as_a_record_that_replays() -> None:
    """A random match from the draft to the final whistle, written and read back."""
    import random

    from masume.records import parse_record
    rng = random.Random(7)
    game = Game(RULES.start())
    while game.position.outcome() is None:
        game.push(rng.choice(list(game.legal_actions())))
    text = write_record(game, {"Options": "cards=magic-number-eleven-demo"})
    again = replay(parse_record(text))
    assert again.position == game.position


def test_an_effect_outside_the_vocabulary_plays_by_hand_with_recorded_adjustments() -> None:
    """Issue 14: any real card plays. An instant effect the vocabulary cannot say is
    ``{ by_hand = true, text = ... }`` (or an unknown word, with a warning); while the card
    lies on the field the players record what it does: ``adjust home power +2``, ``draw N``,
    ``discard N`` (unseen, from a hand), ``press N``."""
    from masume.rules.magic_number_eleven import Adjust
    from masume.rules.magic_number_eleven.position import Shot

    data = copy.deepcopy(demo_data())
    entry(data, "H05")["effect"] = {"by_hand": True, "text": "draw 2, the opponent discards 1"}
    entry(data, "H06")["effect"] = "teleport"
    cards = CardSet(data)
    assert RULES.check_cards(cards) == []
    assert RULES.card_warnings(cards) == [
        "card H05: by hand: draw 2, the opponent discards 1",
        "card H06: effect 'teleport' is not one of press-1, press-2, draw, draw2-keep1, "
        "discard-opponent, power-shot; the players apply it by hand"]
    position = RULES.start(cards=cards, home_stars="ST01/ST04/ST07", away_stars="ST02/ST05/ST08",
                           home_bench="H08/H09/H10", away_bench="A07/A06/A05")
    assert not any(isinstance(a, Adjust) for a in position.legal_actions())
    position = position.apply(position.parse_action("H05 H2a"))
    assert position.by_hand() == (("H2a", "draw 2, the opponent discards 1"),)
    position = position.apply(position.parse_action("adjust home draw 2"))
    assert position.hands == (2, 0) and position.deck == 23
    # in a shot under way, a power adjustment changes the total the judgement reads
    shot = replace(position, phase="attack", shot=Shot(0, "", 3, 0, "", "normal"))
    shot = shot.apply(shot.parse_action("adjust home power +2"))
    assert shot.attack_total() == 5 and shot.mods == (2, 0)
    assert "mods=2|0" in shot.to_text() and RULES.from_text(shot.to_text(), cards=cards) == shot
    with pytest.raises(IllegalAction, match="power only in a shot under way"):
        position.parse_action("adjust home power +2")


def test_a_by_hand_card_records_moves_and_named_discards_for_either_side(tmp_path: Path) -> None:
    """Issue 14: the generic adjustments are power +N, discard a named card, draw N and
    move a card, and a by-hand effect can concern either player, so both sides' adjustments
    are offered whoever is to move. A card outside the vocabulary ("push an opponent
    forward, then cancel a synergy card") is played, its effect recorded, and ``masume
    record check`` replays the record exactly."""
    text = DEMO.read_text(encoding="utf-8").replace(
        'id = "magic-number-eleven-demo"', 'id = "by-hand"').replace(
        'symbols = { top = ["link", "shot"], bottom = ["defence", "press"], left = "press", '
        'right = "link" }\n',
        'symbols = { top = ["link", "shot"], bottom = ["defence", "press"], left = "press", '
        'right = "link" }\neffect = { by_hand = true, text = "push one opposing player to '
        'any free place; cancel one synergy card in play" }\n', 1)
    path = tmp_path / "by-hand.toml"
    path.write_text(text, encoding="utf-8")
    cards = CardSet(tomllib.loads(text))
    assert cards.card("H05")["effect"]["by_hand"] is True and RULES.check_cards(cards) == []
    options = ("home_stars=ST01/ST04/ST07 away_stars=ST02/ST05/ST08 home_bench=H08/H09/H10 "
               "away_bench=A07/A06/A05")
    game = Game(RULES.start(cards=str(path), **{k: v for k, _, v in
                                                (o.partition("=") for o in options.split())}))
    for action in ("H05 H2a", "A01 A2a"):
        game.push_notation(action)
    p = game.position
    assert p.to_move == "home"
    # home, on its own turn, moves away's striker (the effect concerns the opponent) ...
    assert p.is_legal(p.parse_action("adjust move A2a>A1c"))
    assert p.is_legal(p.parse_action("adjust move H2a>H4c"))  # its own card, any row
    game.push_notation("adjust move A2a>A1c")
    p = game.position
    assert dict(p.field)["A1c"] == "A01" and "A2a" not in dict(p.field)
    assert p.layout()["A1c"] == (cards.copy("A01").piece,)
    assert [s.name for s in p.symbols(1)] == ["A1c^", "A1d^"]  # its symbols went with it
    with pytest.raises(IllegalAction, match="move a player card of the field to free cells"):
        p.parse_action("adjust move A1c>H3a")
    for action in ("H01 H1a", "shoot H1a at H1a^", "deck SY20 on 1"):
        game.push_notation(action)
    p = game.position
    sy20 = cards.card("SY20")["stars"]
    assert p.to_move == "away" and p.phase == "defence" and p.attack_total() == 2 + sy20
    # ... and away, defending, records the attacker's power change and a named discard;
    # how much is the card's to say, bounded only by what exists (the hand of five, the track)
    assert p.is_legal(p.parse_action("adjust home power -1"))
    assert p.is_legal(p.parse_action("adjust home power +10"))
    assert p.is_legal(p.parse_action("adjust away draw 5"))
    with pytest.raises(IllegalAction, match="draw within the hand of five"):
        p.parse_action("adjust away draw 6")  # 「シナジーカードは5枚まで持つことができて」
    assert p.is_legal(p.parse_action("adjust home press 6"))
    game.push_notation("adjust discard SY20")
    p = game.position
    assert p.areas[0] == () and "SY20" in p.discard_known and p.attack_total() == 2
    assert "home-synergy-1" not in p.layout()
    while game.position.to_move == "away":
        game.push(next(a for a in game.legal_actions() if not isinstance(a, Adjust)))
    record = write_record(game, {"Options": f"cards={path} {options}"})
    assert "adjust move A2a>A1c" in record and "adjust discard SY20" in record
    record_path = tmp_path / "by-hand.txt"
    record_path.write_text(record, encoding="utf-8")
    result = subprocess.run([sys.executable, "-m", "masume.cli", "record", "check", "--game",
                             "magic-number-eleven", str(record_path)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "ok," in result.stdout
    assert replay(read_record(record_path)).position == game.position


def test_both_seats_pages_offer_both_sides_adjustments(tmp_path: Path) -> None:
    """Issue 14: a by-hand effect can concern either player, so the page of each seat lists
    the adjustments of both sides (those no sensor sees: draw, discard, press, power) as
    choices, whoever is to move; moves and named discards are made by moving the card."""
    from masume.boards import load_board
    from masume.play.cards import for_viewer
    from masume.play.core import TableCore

    data = copy.deepcopy(demo_data())
    entry(data, "H05")["effect"] = {"by_hand": True, "text": "the opponent draws 2"}
    cards = CardSet(data)
    game = Game(RULES.start(cards=cards, home_stars="ST01/ST04/ST07",
                            away_stars="ST02/ST05/ST08", home_bench="H08/H09/H10",
                            away_bench="A07/A06/A05"))
    game.push_notation("H05 H2a")
    board = load_board(RULES.board)
    core = TableCore(RULES, board, game)
    core.tracker.observe(core.tracker.expected_readings(), 0.0)
    core.redraw()
    assert core.tracker.view.state == "in-sync" and game.position.to_move == "away"
    choices = core.choices()
    texts = [game.position.notation(a) for a in choices]
    assert {"adjust home draw 2", "adjust away draw 2", "adjust home press 1"} <= set(texts)
    assert not any(t.startswith("adjust move") for t in texts)  # a move is the card moved
    for viewer in ("home", "away", None):
        seen = for_viewer({"choices": [{"text": t} for t in texts], "pieces": {}},
                          position=game.position, board=board, viewer=viewer, choices=choices)
        shown = {c["text"] for c in seen["choices"]}
        assert {"adjust home draw 2", "adjust away draw 2"} <= shown, viewer
