"""Eyeshield 21 TCG rules engine: one group of tests per part of the seed (004,
docs/rules/eyeshield21.md): deck building, set-up, the turn's phases, the attack
step by step (allocation, the ball cards, the guess, guts refill, abilities,
combination and tactics cards, reactions, power, damage, the character change,
the end of the turn), deck-out; hidden information, notation and position text.
The card-set checks, the records and the property test are in
tests/test_eyeshield21_cards.py and tests/test_eyeshield21_play.py."""

from __future__ import annotations

import pytest
from masume.games import load_rules
from masume.rules import Game, IllegalAction, NotationError
from masume.rules.base import ANY_CARD
from masume.rules.eyeshield21 import Call, Move, Place, Use
from masume.rules.eyeshield21.geometry import character_cells
from masume.rules.eyeshield21.position import Piles, Position

RULES = load_rules("eyeshield21")

HOME3 = ("F01.1", "F02.1", "F05.1")  # Aoki (PASS 3), Kuroda (PASS 4), Goto (LINE 3)
AWAY3 = ("S02.1", "S03.1", "S05.1")  # Fujii (RUN 5), Gondo (RUN 4), Iwata (LINE 5)


def play(game: Game, *texts: str) -> Position:
    for text in texts:
        game.push_notation(text)
    return game.position


def set_up(home: tuple[str, ...] = HOME3, away: tuple[str, ...] = AWAY3, **options: object) -> Game:
    """A game after the set-up: home starts, in its first main phase."""
    game = Game(RULES.start(**options))
    first = options.get("first", "home")
    order = (("home", home), ("away", away)) if first == "home" else (("away", away), ("home", home))
    for side, cards in order:
        play(game, *(f"{c}@{side}-character-{n}" for n, c in enumerate(cards, 1)), "deal")
    play(game, "reveal")
    return game


def attack(game: Game, home: dict[str, str], away: dict[str, str], *, ball: str = "pass",
           guess: str = "run", extra_home: tuple[str, ...] = (), extra_away: tuple[str, ...] = ()) -> Position:
    """home attacks: ``home``/``away`` map character places to play-area places; home's
    ball-mark card goes to ``ball``, away guesses ``guess``; then the reveal."""
    other = "run" if ball == "pass" else "pass"
    play(game, "attack", *(f"{a}>{b}" for a, b in home.items()), *extra_home,
         f"B1.1@home-{ball}-ball", f"B0.1@home-{other}-ball", "ready")
    play(game, *(f"{a}>{b}" for a, b in away.items()), *extra_away, "ready", f"B1.2@away-{guess}-ball")
    return play(game, "reveal")


# --------------------------------------------------------------------------- set-up


def test_registered_and_on_its_mat() -> None:
    from masume.boards import load_board
    from masume.rules.eyeshield21.geometry import ALL_CELLS

    rules = load_rules("eyeshield21")
    assert rules is RULES and rules.board == "eyeshield21"
    board = load_board(rules.board)
    assert "eyeshield21" in board.games
    assert all(board.has_cell(cell) for cell in ALL_CELLS)
    status = set_up().position.status()
    assert all(board.has_cell(cell) for cells in status.highlights.values() for cell in cells)


def test_setup_three_characters_face_down_then_draws_and_guts() -> None:
    """開始準備: 3 characters face down from the deck; hand and guts: first 4, second 5."""
    game = Game(RULES.start())
    p = game.position
    assert p.status().to_move == "home" and p.step == "setup"
    assert {type(a) for a in p.legal_actions()} == {Place}
    p = play(game, "F01.1@home-character-1", "F02.1@home-character-2")
    with pytest.raises(IllegalAction, match="not now"):
        p.parse_action("deal")
    with pytest.raises(IllegalAction, match="Aoki is on home's field already"):
        p.parse_action("F01.2@home-character-3")  # ユニーク処理: 自軍ユニーク
    p = play(game, "F05.1@home-character-3")
    assert list(p.legal_actions()) == [Call("deal")]
    assert not p.face_up("home-character-1")
    p = play(game, "deal")
    assert p.piles[0] == Piles(deck=29, hand=4, guts=4, discard=0)
    assert p.status().to_move == "away"
    p = play(game, *(f"{c}@away-character-{n}" for n, c in enumerate(AWAY3, 1)), "deal")
    assert p.piles[1] == Piles(deck=27, hand=5, guts=5, discard=0)
    assert p.step == "show" and p.status().to_move == "home"
    assert p.seen_by("away").cells["home-character-1"] == ("face down",)
    assert p.seen_by(None).cells["away-character-1"] == ("face down",)
    assert p.seen_by("away").cells["away-character-1"] == ("S02.1 Fujii (RUN 5), face down",)
    p = play(game, "reveal")  # すべて表向きにする
    assert p.seen_by(None).cells["home-character-1"] == ("F01.1 Aoki (PASS 3)",)
    # ファーストドロー制限: the first player's first turn skips the draw and guts phases
    assert p.step == "main" and p.number == 1 and p.piles[0].hand == 4


def test_away_may_start() -> None:
    game = set_up(first="away")
    p = game.position
    assert p.status().to_move == "away" and p.step == "main"
    assert p.piles[1] == Piles(deck=29, hand=4, guts=4, discard=0)
    assert p.piles[0] == Piles(deck=27, hand=5, guts=5, discard=0)


def test_layout_shows_every_card_as_its_tag_and_piles_as_any_card() -> None:
    p = set_up().position
    layout = p.layout()
    assert layout["home-character-1"] == ("tag:E5000000000001",)
    assert layout["home-deck"] == layout["away-guts"] == (ANY_CARD,)
    assert "home-discard" not in layout  # an empty pile is not there
    assert len(layout) == 6 + 4


# --------------------------------------------------------------------------- the turn


def finish_attack(game: Game) -> Position:
    """Nothing more in the attack: done, the damage, done (to the change)."""
    while game.position.step in ("play-attack", "play-block", "tactics-attack", "tactics-block", "refill"):
        play(game, "done" if game.position.step != "refill" else "refill 0")
    if game.position.step == "damage":
        play(game, f"damage {game.position.damage()}")
    return game.position


def done_until(game: Game, step: str) -> Position:
    """Say done (refill 0) until the attack reaches ``step``."""
    while game.position.step != step:
        play(game, "done" if game.position.step != "refill" else "refill 0")
    return game.position


def tidy(game: Game) -> Position:
    """The change step's done, then both sides clear their play areas (first choices)."""
    play(game, "done")
    while game.position.step == "tidy":
        game.push(next(game.legal_actions()))
    return game.position


def end_first_turn(game: Game) -> Position:
    """home attacks with everything in pass, away blocks in run and guesses run."""
    attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                  "home-character-3": "home-pass-3"},
           {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
            "away-character-3": "away-run-3"})
    finish_attack(game)
    return tidy(game)


def test_draw_phase_then_guts_phase_then_main() -> None:
    """ドローフェイズ: one card; ガッツセットフェイズ: one card face down as guts."""
    game = set_up()
    p = end_first_turn(game)
    assert (p.step, p.status().to_move, p.number) == ("draw", "away", 2)
    assert list(p.legal_actions()) == [Call("draw")]
    assert p.status().highlights["phase"] == ("phase-draw",)
    p = play(game, "draw")  # (home's pass attack did 7 damage)
    assert p.piles[1] == Piles(deck=19, hand=6, guts=5, discard=7) and p.step == "guts"
    p = play(game, "guts")
    assert p.piles[1] == Piles(deck=18, hand=6, guts=6, discard=7) and p.step == "main"


def test_main_phase_characters_limit_uniqueness_and_discard() -> None:
    game = set_up()
    p = play(game, "F03.1@home-character-4")  # from the hand, face up
    assert p.face_up("home-character-4") and p.piles[0].hand == 3
    with pytest.raises(IllegalAction, match="Aoki is on home's field already"):
        p.parse_action("F01.2@home-character-5")
    p = play(game, "F04.1@home-character-5")
    assert not [a for a in p.legal_actions() if isinstance(a, Place) and "character" in a.cell]
    p = play(game, "home-character-5>discard")  # 場のキャラクターカードを捨て場に送る
    assert p.piles[0].discard == 1 and p.gone[0] == ("F04.1",)
    assert "F04.1" not in p.pool("home") and p.layout()["home-discard"] == (ANY_CARD,)
    assert Place("F04.2", "home-character-5") in set(p.legal_actions())
    p = play(game, "F06.1@home-character-5")
    assert p.piles[0].hand == 1


def test_benched_characters_count_in_the_five() -> None:
    """キャラクターカード置場に 5体まで: a benched character keeps its place (a reading)."""
    game = set_up(home=("F03.1", "F02.1", "F05.1"))
    p = play(game, "use home-character-1>home-bench-1", "F01.1@home-character-1", "F04.1@home-character-4")
    assert p.card_at("home-character-5") is None
    with pytest.raises(IllegalAction, match="5 characters and combination cards already"):
        p.parse_action("F06.1@home-character-5")


def test_reactions_face_down_at_most_two() -> None:
    game = set_up()
    p = play(game, "F40@home-reaction-1", "F41@home-reaction-2")
    assert not p.face_up("home-reaction-1") and p.piles[0].hand == 2
    assert p.seen_by("away").cells["home-reaction-1"] == ("face down",)
    game.pop()
    assert game.position.notation_for(Place("F41", "home-reaction-2"), "away") == "?@home-reaction-2"
    assert game.position.notation_for(Place("F41", "home-reaction-2"), "home") == "F41@home-reaction-2"
    assert not [a for a in p.legal_actions() if isinstance(a, Place) and "reaction" in a.cell]


def test_buying_a_card_pays_guts_back_onto_the_deck() -> None:
    """ガッツを消費して、デッキからカードを引く; ガッツ 1枚をデッキの一番上に戻すごとに 1."""
    game = set_up()
    p = play(game, "buy")
    assert p.piles[0] == Piles(deck=29, hand=5, guts=3, discard=0)
    game2 = set_up(draw_cost=2)
    p = play(game2, "buy", "buy")
    assert p.piles[0] == Piles(deck=31, hand=6, guts=0, discard=0)
    assert Call("buy") not in set(p.legal_actions())


def test_main_phase_ability_with_the_bench_once_a_turn_back_at_the_draw_phase() -> None:
    """Shiraishi: main: to the bench: guts 2. Benched characters return in the draw phase."""
    game = set_up(home=("F03.1", "F02.1", "F05.1"))
    p = game.position
    uses = [a for a in p.legal_actions() if isinstance(a, Use)]
    assert uses == [Use("home-character-1", f"home-bench-{n}") for n in (1, 2, 3)]
    p = play(game, "use home-character-1>home-bench-2")
    assert p.card_at("home-bench-2") == "F03.1" and p.card_at("home-character-1") is None
    assert p.piles[0] == Piles(deck=27, hand=4, guts=6, discard=0)
    assert not [a for a in p.legal_actions() if isinstance(a, Use)]
    # the benched character sits out the attack and comes back in home's next draw phase
    attack(game, {"home-character-2": "home-pass-1", "home-character-3": "home-run-1"},
           {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
            "away-character-3": "away-pass-1"})
    p = game.position
    assert p.card_at("home-bench-2") == "F03.1"


def test_a_guts_cost_must_be_affordable() -> None:
    """Ebisu: main: pay 2 guts: draw 1 (the second player has 5 guts)."""
    game = set_up(home=HOME3, away=("S01.1", "S02.1", "S05.1"), first="away")
    p = game.position
    assert Use("away-character-1") in set(p.legal_actions())
    p = play(game, "use away-character-1")
    assert p.piles[1] == Piles(deck=30, hand=5, guts=2, discard=0)
    assert Use("away-character-1") not in set(p.legal_actions())  # once a turn


# --------------------------------------------------------------------------- the attack


def test_allocation_needs_every_character_and_both_ball_cards_face_down() -> None:
    """カードの割り振り: every character, tactics from the hand, both ball cards, face down."""
    game = set_up()
    p = play(game, "attack", "home-character-1>home-pass-1", "F30.1@home-pass-2")
    with pytest.raises(IllegalAction, match="every character must go"):
        p.parse_action("ready")
    assert p.seen_by("away").cells["home-pass-2"] == ("face down",)
    assert p.notation_for(Place("F30.2", "home-run-1"), "away") == "?@home-run-1"
    assert p.notation_for(Move("home-character-2", "home-run-1"), "away") == "?>home-run-1"
    assert p.notation_for(Move("home-character-2", "home-run-1"), "home") == "home-character-2>home-run-1"
    p = play(game, "home-character-2>home-run-1", "home-character-3>home-run-2", "B0.1@home-pass-ball")
    with pytest.raises(IllegalAction):
        p.parse_action("ready")
    with pytest.raises(IllegalAction, match="home-pass-ball is taken"):
        p.parse_action("B1.1@home-pass-ball")  # one ball card in each area
    p = play(game, "B1.1@home-run-ball", "ready")
    assert p.seen_by(None).cells["home-run-ball"] == ("face down",)
    assert p.seen_by("home").cells["home-run-ball"] == ("B1.1 Ball card (ball mark), face down",)
    assert p.status().to_move == "away" and p.step == "block"
    assert p.status().highlights["area"][0] == "away-pass-ball"
    assert not [a for a in p.legal_actions() if isinstance(a, Place) and a.copy.startswith("B")]


def test_the_defenders_guess_is_face_up_and_the_ball_mark_decides_the_area() -> None:
    game = set_up(home=("F01.1", "F04.1", "F05.1"))  # Midori (RUN) keeps the play-attack step
    play(game, "attack", "home-character-1>home-pass-1", "home-character-2>home-run-1",
         "home-character-3>home-run-2", "B1.1@home-run-ball", "B0.1@home-pass-ball", "ready",
         "away-character-1>away-run-1", "away-character-2>away-pass-1", "away-character-3>away-pass-2",
         "ready")
    p = game.position
    assert p.step == "guess"
    assert list(p.legal_actions()) == [Place("B1.2", "away-pass-ball"), Place("B1.2", "away-run-ball")]
    p = play(game, "B1.2@away-pass-ball")  # guesses pass: wrong
    assert p.face_up("away-pass-ball") and p.step == "flip" and p.status().to_move == "home"
    p = play(game, "reveal")
    assert p.area == "run" and not p.hit
    # the attack area turns face up, the other stays face down
    assert p.face_up("home-run-1") and p.face_up("away-run-1") and p.face_up("home-pass-ball")
    assert not p.face_up("home-pass-1") and not p.face_up("away-pass-1")
    assert p.seen_by("away").cells["home-pass-1"] == ("face down",)
    assert p.status().highlights["area"] == ("home-run-ball",) + tuple(f"home-run-{n}" for n in range(1, 8)) + (
        "away-run-ball",) + tuple(f"away-run-{n}" for n in range(1, 8))


def test_a_right_guess_refills_up_to_the_attackers_characters_in_the_area() -> None:
    """ガッツ補充: 0 to the number of the attacker's characters in the attack area."""
    game = set_up()
    p = attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                      "home-character-3": "home-run-1"},
               {"away-character-1": "away-pass-1", "away-character-2": "away-run-1",
                "away-character-3": "away-pass-2"}, ball="pass", guess="pass",
               extra_home=("F30.1@home-pass-3",))
    assert p.hit and p.step == "refill" and p.status().to_move == "away"
    assert [str(a) for a in p.legal_actions()] == ["refill 0", "refill 1", "refill 2"]  # tactics do not count
    p = play(game, "refill 2")
    assert p.piles[1] == Piles(deck=25, hand=5, guts=7, discard=0)


def test_power_counts_only_matching_play_types_and_the_defences_line() -> None:
    """パワー計算: attacker: play type = the area; defender: 守備 (LINE) only."""
    game = set_up(home=("F01.1", "F02.1", "F03.1"), away=("S05.1", "S07.1", "S02.1"))
    p = attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                      "home-character-3": "home-pass-3"},  # Shiraishi (RUN 4) does not count in pass
               {"away-character-1": "away-pass-1", "away-character-2": "away-pass-2",
                "away-character-3": "away-pass-3"})  # Fujii (RUN 5) does not block
    assert p.power("home") == 3 + 4
    assert p.power("away") == 5 + 3  # Iwata LINE 5, Kido RUN/LINE 3
    assert p.damage() == 0


def test_damage_discards_the_defenders_deck() -> None:
    """ダメージ: the difference, when positive, from the defender's deck to its discard pile."""
    game = set_up()
    p = attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                      "home-character-3": "home-run-1"},
               {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
                "away-character-3": "away-run-3"})
    assert (p.power("home"), p.power("away"), p.damage()) == (7, 0, 7)
    p = done_until(game, "damage")
    assert p.step == "damage" and p.status().to_move == "away"
    assert list(p.legal_actions()) == [Call("damage", 7)]
    assert p.status().highlights["damage"] == ("away-deck",)
    assert ("damage", "7") in p.seen_by(None).panel
    with pytest.raises(IllegalAction, match="now damage 7"):
        p.parse_action("damage 6")
    p = play(game, "damage 7")
    assert p.piles[1] == Piles(deck=20, hand=5, guts=5, discard=7)
    assert p.step == "change" and p.layout()["away-discard"] == (ANY_CARD,)


def test_play_abilities_only_for_characters_in_the_play() -> None:
    """Midori (RUN, play: pay 1: power +2) in a run attack; Goto (LINE, play: weaken 1) blocks."""
    game = set_up(home=("F04.1", "F01.1", "F05.1"), away=("S02.1", "F05.1" if False else "S06.1", "S05.1"))
    p = attack(game, {"home-character-1": "home-run-1", "home-character-2": "home-run-2",
                      "home-character-3": "home-run-3"},
               {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
                "away-character-3": "away-pass-1"}, ball="run", guess="pass")
    assert p.step == "play-attack"
    # Aoki's play ability needs PASS; Goto (LINE) does not take part in home's attack
    assert [str(a) for a in p.legal_actions() if isinstance(a, Use)] == ["use home-run-1"]
    assert p.power("home") == 3
    p = play(game, "use home-run-1")
    assert p.power("home") == 5 and p.piles[0].guts == 3 and p.piles[0].deck == 30
    # nothing left to do in play-attack: the step passed by itself
    assert p.step == "play-block" and p.status().to_move == "away"
    # Jin (LINE 3, play: pay 1: power +2) blocks; Fujii (RUN) has no line ability
    assert [str(a) for a in p.legal_actions() if isinstance(a, Use)] == ["use away-run-2"]
    p = play(game, "use away-run-2")
    assert p.power("away") == 5 and p.damage() == 0 and p.step == "change"


def test_combination_replaces_its_characters_and_returns_to_the_hand() -> None:
    """Falcon Bomb (Aoki + Kuroda, PASS 11): the two go to the discard, the card takes a place."""
    game = set_up()
    p = attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                      "home-character-3": "home-run-1"},
               {"away-character-1": "away-pass-1", "away-character-2": "away-pass-2",
                "away-character-3": "away-pass-3"})
    combos = sorted({a.cell for a in p.legal_actions() if isinstance(a, Place) and a.copy == "F20.1"})
    assert combos == [f"home-pass-{n}" for n in range(1, 8)]
    assert not [a for a in p.legal_actions() if isinstance(a, Place) and a.copy.startswith("F21")]
    p = play(game, "F20.1@home-pass-1")
    assert p.card_at("home-pass-1") == "F20.1" and p.card_at("home-pass-2") is None
    assert p.gone[0] == ("F01.1", "F02.1") and p.piles[0] == Piles(29, 3, 4, 2)
    assert p.power("home") == 11 and p.power("away") == 5
    assert p.seen_by(None).cells["home-pass-1"] == ("F20.1 Falcon Bomb (PASS 11)",)
    assert done_until(game, "damage").step == "damage"
    p = play(game, "damage 6", "done")
    assert p.step == "tidy"
    moves = {str(a) for a in p.legal_actions()}
    assert "home-pass-1>hand" in moves
    p = play(game, "home-pass-1>hand")
    assert p.piles[0].hand == 4 and p.known[0] == ("F20.1",)
    assert p.seen_by("home").hand == ("F20.1 Falcon Bomb (PASS 11)",)
    assert p.seen_by("away").hand == ()


def test_tactics_used_go_to_the_discard_unused_and_the_other_areas_to_the_hand() -> None:
    game = set_up()
    p = attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                      "home-character-3": "home-run-1"},
               {"away-character-1": "away-pass-1", "away-character-2": "away-pass-2",
                "away-character-3": "away-pass-3"},
               extra_home=("F30.1@home-pass-3", "F30.2@home-pass-4", "F31.1@home-run-2"),
               extra_away=("S31.1@away-pass-4", "S30.1@away-run-1"))
    p = done_until(game, "tactics-attack")
    # Blitz is a blocking tactic: home cannot use it; it lies in the other area anyway
    assert [str(a) for a in p.legal_actions()] == ["use home-pass-3", "use home-pass-4", "done"]
    p = play(game, "use home-pass-3", "done")
    assert p.power("home") == 7 + 2
    assert [str(a) for a in p.legal_actions()] == ["use away-pass-4", "done"]
    p = play(game, "use away-pass-4")  # Sack: pay 1 guts: weaken 3; nothing else: on
    assert (p.power("home"), p.power("away"), p.damage()) == (6, 5, 1)
    p = play(game, "damage 1")
    assert p.step == "change"
    # 「ボール無し」のエリアの公開: the run area turns face up
    assert p.face_up("home-run-2") and p.face_up("away-run-1")
    p = play(game, "done")
    moves = {str(a) for a in p.legal_actions()
             if isinstance(a, Move) and "character" not in a.to and a.frm.startswith("home")}
    assert moves == {"home-pass-3>discard", "home-pass-4>hand", "home-run-2>hand",
                     "home-pass-ball>off", "home-run-ball>off"}


def test_reactions_turn_face_up_when_their_timing_comes() -> None:
    """Timeout (block: guts 2) is spent; Home Crowd (lasting, attack: power +1) stays."""
    game = set_up()
    play(game, "F41@home-reaction-1")
    p = end_first_turn(game)
    p = play(game, "draw", "guts", "F40@away-reaction-1" if False else "S40@away-reaction-1")
    # away attacks home: home's reactions of the block timing may be used
    play(game, "attack", "away-character-1>away-run-1", "away-character-2>away-run-2",
         "away-character-3>away-pass-1", "B1.2@away-run-ball", "B0.2@away-pass-ball", "ready",
         "home-character-1>home-pass-1", "home-character-2>home-pass-2", "home-character-3>home-run-1",
         "ready", "B1.1@home-pass-ball")
    p = play(game, "reveal")
    assert p.area == "run" and p.step == "play-attack"
    assert Use("away-reaction-1") in set(p.legal_actions())  # Penalty Flag: attack: mill 1
    p = play(game, "use away-reaction-1")
    assert p.face_up("away-reaction-1") and p.piles[0].deck == 28 and p.piles[0].discard == 1
    p = play(game, "done")
    # home blocks: Goto's line ability, but not Home Crowd (an attack reaction)
    assert [str(a) for a in p.legal_actions()] == ["use home-run-1", "done"]
    assert (p.power("home"), p.power("away")) == (3, 9)
    p = play(game, "use home-run-1")  # Goto: weaken 1
    assert p.step == "damage" and p.damage() == 5
    p = play(game, "damage 5", "done")
    assert Move("away-reaction-1", "discard") in set(p.legal_actions())  # spent
    assert p.face_up("away-reaction-1")


def test_a_lasting_reaction_adds_to_every_attack_of_its_owner() -> None:
    game = set_up()
    play(game, "F41@home-reaction-1")
    play(game, "attack", "home-character-1>home-pass-1", "home-character-2>home-pass-2",
         "home-character-3>home-run-1", "B1.1@home-pass-ball", "B0.1@home-run-ball", "ready",
         "away-character-1>away-run-1", "away-character-2>away-run-2", "away-character-3>away-run-3",
         "ready", "B1.2@away-run-ball")
    p = play(game, "reveal")
    assert p.power("home") == 7
    p = play(game, "use home-reaction-1")
    assert p.power("home") == 8 and p.face_up("home-reaction-1")
    p = play(game, "done", "damage 8", "done")
    assert Move("home-reaction-1", "discard") not in set(p.legal_actions())  # it stays


def test_attack_end_and_turn_end_abilities_apply_by_themselves() -> None:
    """Ishida: attack-end: guts 1; Nomura: turn-end: draw 1 (both on home's field)."""
    game = set_up(home=("F07.1", "F09.1", "F05.1"))
    attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-run-1",
                  "home-character-3": "home-run-2"},
           {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
            "away-character-3": "away-run-3"})
    p = play(game, "damage 2")
    before = p.piles[0]
    p = play(game, "done")
    assert p.piles[0] == Piles(before.deck - 2, before.hand + 1, before.guts + 1, 0)


def test_character_change_after_the_attack() -> None:
    """攻撃側のキャラクターカード交代: discard any, lay from the hand, at most 5 in all."""
    game = set_up()
    attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                  "home-character-3": "home-run-1"},
           {"away-character-1": "away-pass-1", "away-character-2": "away-pass-2",
            "away-character-3": "away-pass-3"})
    p = finish_attack(game)
    assert p.step == "change" and p.status().to_move == "home"
    discards = {str(a) for a in p.legal_actions() if isinstance(a, Move)}
    assert discards == {"home-pass-1>discard", "home-pass-2>discard", "home-run-1>discard"}
    p = play(game, "home-run-1>discard", "F03.1@home-character-1", "F04.1@home-character-2")
    p = play(game, "F06.1@home-character-3")
    assert not [a for a in p.legal_actions() if isinstance(a, Place)]  # 5 on the field
    p = play(game, "done")
    assert p.step == "tidy"
    spots = {a.to for a in p.legal_actions() if isinstance(a, Move) and a.frm == "home-pass-1"}
    assert spots == {"home-character-4", "home-character-5"}


def test_tidy_then_the_attackers_hand_limit() -> None:
    """ターンの終了: the attacker discards down to 5; the defender's hand is not limited."""
    game = set_up(away=("S09.1", "S02.1", "S05.1"))  # Nagi: attack-end: draw 1
    p = end_first_turn(game)
    assert p.step == "draw" and p.status().to_move == "away"
    assert p.piles[1].hand == 6 and p.piles[1].discard == 7  # (7 damage, nothing discarded)


def test_hand_limit_discard_is_a_counted_action() -> None:
    game = set_up()
    play(game, "buy", "buy", "buy")  # 4 + 3 = 7 in hand
    attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                  "home-character-3": "home-pass-3"},
           {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
            "away-character-3": "away-run-3"})
    finish_attack(game)
    p = play(game, "done", "home-pass-1>home-character-1", "home-pass-2>home-character-2",
             "home-pass-3>home-character-3", "home-pass-ball>off", "home-run-ball>off")
    assert [a for a in p.legal_actions() if isinstance(a, Call)] == [Call("discard", 2)]
    assert p.status().message == "home: discard 2 to keep 5 cards in hand"
    # meanwhile away may clear its half too: still home's move until it has discarded
    p = play(game, "away-run-ball>off")
    assert p.status().to_move == "home" and "away-run-ball" not in p.layout()
    p = play(game, "discard 2")
    assert p.piles[0].hand == 5 and p.piles[0].discard == 2
    assert p.status().to_move == "away" and p.step == "tidy"
    assert {a.frm for a in p.legal_actions()} == {"away-run-1", "away-run-2", "away-run-3"}


def test_deck_out_wins() -> None:
    """ライブラリ破壊戦: a side whose deck runs out loses."""
    text = set_up().position.to_text().replace("away=27/5/5/0", "away=3/5/29/0")
    p = RULES.from_text(text)
    game = Game(p)
    attack(game, {"home-character-1": "home-pass-1", "home-character-2": "home-pass-2",
                  "home-character-3": "home-run-1"},
           {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
            "away-character-3": "away-run-3"})
    done_until(game, "damage")
    p = play(game, "damage 7")
    assert p.piles[1].deck == 0 and p.piles[1].discard == 3
    assert str(p.outcome()) == "home wins (deck-out)"
    assert list(p.legal_actions()) == [] and p.status().message == "home wins (deck-out)"


def test_resign() -> None:
    p = RULES.resign(set_up().position, "home")
    assert p.outcome().winner == "away" and p.outcome().reason == "resignation"
    with pytest.raises(IllegalAction):
        RULES.resign(p, "away")


# --------------------------------------------------------------------------- notation and text


def test_notation_round_trips_and_errors_say_why() -> None:
    p = set_up().position
    for action in p.legal_actions():
        assert p.parse_action(p.notation(action)) == action
    with pytest.raises(NotationError, match="not eyeshield21 notation"):
        p.parse_action("kick")
    with pytest.raises(NotationError, match="damage needs a number"):
        p.parse_action("damage")
    with pytest.raises(IllegalAction, match="S02.2 is away's card"):
        p.parse_action("S02.2@home-character-4")
    with pytest.raises(IllegalAction, match="home-character-4 is taken|no card"):
        p.parse_action("home-character-4>discard")


def test_position_text_round_trips_and_rejects_nonsense() -> None:
    game = set_up()
    play(game, "F40@home-reaction-1", "buy")
    p = game.position
    assert RULES.from_text(p.to_text()) == p
    assert RULES.from_text(p.to_text()).to_text() == p.to_text()
    with pytest.raises(NotationError, match="do not add up"):
        RULES.from_text(p.to_text().replace("away=27/5/5/0", "away=27/5/6/0"))
    with pytest.raises(NotationError, match="unknown field"):
        RULES.from_text(p.to_text() + " colour=blue")
    with pytest.raises(NotationError, match="is home's card"):
        RULES.from_text(p.to_text().replace("home-character-1:F01.1", "away-character-4:F01.1"))
    assert RULES.from_text(p.to_text(), draw_cost=2).options.draw_cost == 2


def test_start_options_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown eyeshield21 option"):
        RULES.start(colour="blue")
    with pytest.raises(ValueError, match="no deck list 'bats'"):
        RULES.start(deck_home="bats")
    with pytest.raises(ValueError, match="both sides cannot play deck"):
        RULES.start(deck_home="sharks", deck_away="sharks")
    with pytest.raises(ValueError, match="first must be home or away"):
        RULES.start(first="blue")


def test_the_main_phase_may_discard_a_benched_character() -> None:
    """「場のキャラクターカードを捨て場に送る」, and 「それぞれの場はキャラクターカード置場、
    ベンチ、パスエリア、ランエリアに大別される」: a benched character is on 場 too."""
    game = set_up(home=("F03.1", "F02.1", "F05.1"))  # Shiraishi: main: to the bench
    p = play(game, "use home-character-1>home-bench-2")
    assert p.step == "main" and p.is_legal(Move("home-bench-2", "discard"))
    p = play(game, "home-bench-2>discard")
    assert p.card_at("home-bench-2") is None and p.piles[0].discard == 1
    assert "F03.1" in p.gone[0]


def test_benched_characters_come_back_in_their_sides_draw_phase() -> None:
    """ドローフェイズ: ベンチに存在するキャラクターカードを、すべてキャラクターカード置場に移動する."""
    game = set_up(home=("F03.1", "F02.1", "F05.1"))
    play(game, "use home-character-1>home-bench-2")
    end_first_turn_without(game, "home-character-1")
    # away's turn: home's bench stays as it is
    p = game.position
    assert p.step == "draw" and p.status().to_move == "away" and p.card_at("home-bench-2") == "F03.1"
    home = [c for c in character_cells("home") if p.card_at(c)]
    assert len(home) == 2
    play(game, "draw", "guts", "attack", "away-character-1>away-run-1", "away-character-2>away-run-2",
         "away-character-3>away-run-3", "B1.2@away-run-ball", "B0.2@away-pass-ball", "ready",
         f"{home[0]}>home-pass-1", f"{home[1]}>home-pass-2", "ready", "B1.1@home-pass-ball", "reveal")
    finish_attack(game)
    p = tidy(game)
    assert p.step == "draw" and p.status().to_move == "home"
    free = [c for c in character_cells("home") if not p.card_at(c)]
    assert list(p.legal_actions()) == [Move("home-bench-2", c) for c in free]
    with pytest.raises(IllegalAction):
        p.parse_action("draw")  # the bench first
    p = play(game, f"home-bench-2>{free[0]}", "draw")
    assert p.card_at(free[0]) == "F03.1" and p.step == "guts"


def end_first_turn_without(game: Game, missing: str) -> Position:
    """Like end_first_turn, for a home side that lacks the character on ``missing``."""
    home = {f"home-character-{n}": f"home-pass-{n}" for n in (1, 2, 3) if f"home-character-{n}" != missing}
    attack(game, home, {"away-character-1": "away-run-1", "away-character-2": "away-run-2",
                        "away-character-3": "away-run-3"})
    finish_attack(game)
    return tidy(game)


def test_team_power_counts_the_teams_cards_in_the_play() -> None:
    """Kaneko (LINE 2, play: +1 per Falcons card counted) blocking with Goto and Hayashi."""
    game = set_up(home=("F08.1", "F05.1", "F06.1"), away=("S02.1", "S03.1", "S04.1"), first="away")
    play(game, "attack", "away-character-1>away-run-1", "away-character-2>away-run-2",
         "away-character-3>away-pass-1", "B1.2@away-run-ball", "B0.2@away-pass-ball", "ready",
         "home-character-1>home-run-1", "home-character-2>home-run-2", "home-character-3>home-run-3",
         "ready", "B1.1@home-pass-ball")
    p = play(game, "reveal")
    assert not p.hit and p.step == "play-attack"  # a wrong guess: no refill step
    p = done_until(game, "play-block")
    assert p.power("home") == 2 + 3 + 4
    assert [str(a) for a in p.legal_actions() if isinstance(a, Use)] == ["use home-run-1", "use home-run-2"]
    p = play(game, "use home-run-1")  # (Falcon Wall, Goto + Hayashi, could replace them: not taken)
    assert p.power("home") == 9 + 3


def test_a_side_that_draws_its_last_card_loses() -> None:
    game = set_up()
    p = end_first_turn(game)
    text = p.to_text().replace("away=20/5/5/7", "away=1/5/24/7")
    p = RULES.from_text(text).apply(Call("draw"))
    assert p.piles[1].deck == 0 and str(p.outcome()) == "home wins (deck-out)"


def test_no_summoning_sickness_a_character_laid_now_attacks_now() -> None:
    """召喚酔い: 無し; laying a card costs nothing (カードを本来の目的で使用する分にはコストは不要)."""
    game = set_up()
    p = play(game, "F04.1@home-character-4", "attack")
    assert p.piles[0].guts == 4
    assert {a.frm for a in p.legal_actions() if isinstance(a, Move)} == {
        "home-character-1", "home-character-2", "home-character-3", "home-character-4"}


def test_both_decks_running_out_at_once_is_a_draw() -> None:
    """Ishida (attack-end: guts 1) and Nagi (attack-end: draw 1) take both last cards."""
    p = RULES.from_text("cards=eyeshield21-demo decks=falcons/sharks first=home step=change move=home "
                        "turn=home n=9 home=1/5/5/28 away=1/5/5/28 "
                        "cells=home-pass-1:F07.1,away-pass-1:S09.1 area=pass hit=0")
    p = p.apply(Call("done"))
    assert (p.piles[0].deck, p.piles[1].deck) == (0, 0)
    assert str(p.outcome()) == "draw (deck-out)" and p.outcome().winner is None


def test_a_misplaced_card_says_where_it_may_go() -> None:
    game = set_up()
    p = game.position
    with pytest.raises(IllegalAction, match="F03.1 may go to home-character-4, home-character-5 now"):
        p.parse_action("F03.1@home-reaction-1")
    p = play(game, "attack")
    with pytest.raises(IllegalAction, match="home-character-1 may go to home-pass-1, .*home-run-7 now"):
        p.parse_action("home-character-1>home-bench-1")


def test_a_half_area_holds_every_card_the_side_allots() -> None:
    """「ボールカード以外のカードは、どちらのエリアに割り振ってもよい(全部を片方に寄せてもよい)」:
    no cap of 7 on a half; past the mat's 7 places a card takes the next number."""
    cells = ",".join(f"home-pass-{n}:{c}:down" for n, c in enumerate(
        ("F01.1", "F02.1", "F04.1", "F05.1", "F06.1", "F30.1", "F30.2"), 1))
    p = RULES.from_text("cards=eyeshield21-demo decks=falcons/sharks first=home step=allot move=home "
                        f"turn=home n=3 home=25/3/5/0 away=30/5/5/0 cells={cells}")
    assert p.is_legal(Place("F31.1", "home-pass-8"))
    p = p.apply(Place("F31.1", "home-pass-8"))
    assert p.is_legal(Place("F31.2", "home-pass-9"))
    assert RULES.from_text(p.to_text()) == p and p.card_at("home-pass-8") == "F31.1"


def test_a_tactics_card_never_waits_for_a_place_a_character_needs() -> None:
    """「手札の任意のタクティクスカード」 with 「全部を片方に寄せてもよい」: a half has no last
    place (the next one opens when its places are taken), so a tactics card is offered even
    when the free places are no more than the characters still waiting; every character
    still finds a place."""
    fill = ("F03.1", "F03.2", "F03.3", "F04.1", "F04.2", "F04.3", "F06.1", "F06.2", "F06.3",
            "F07.1", "F07.2", "F08.1", "F08.2")
    cells = [f"home-pass-{n}:{c}:down" for n, c in enumerate(fill[:7], 1)]
    cells += [f"home-run-{n}:{c}:down" for n, c in enumerate(fill[7:], 1)]
    cells += [f"home-character-{n}:{c}" for n, c in enumerate(("F01.1", "F02.1", "F05.1"), 1)]
    p = RULES.from_text("cards=eyeshield21-demo decks=falcons/sharks first=home step=allot "
                        "move=home turn=home n=1 home=16/4/4/0 away=30/5/5/0 "
                        f"cells={','.join(cells)}")
    spots = {a.to for a in p.legal_actions() if isinstance(a, Move)}
    assert spots == {"home-pass-8", "home-run-7"}  # two free places, three characters
    assert p.is_legal(Place("F30.1", "home-run-7"))
    p = p.apply(Place("F30.1", "home-run-7"))
    for character in ("home-character-1", "home-character-2", "home-character-3"):
        target = next(a.to for a in p.legal_actions()
                      if isinstance(a, Move) and a.frm == character)
        p = p.apply(Move(character, target))
    assert not p.cards_on(character_cells("home"))
