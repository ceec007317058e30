"""Magic Number Eleven: every rule of the seed and its worked examples.

Rules and readings: docs/rules/magic-number-eleven.md. The positions are built
from the demo card set (host/masume/cards/sets/magic-number-eleven-demo.toml);
``put`` lays cards on the field directly where a test is about what follows.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from masume.games import load_rules
from masume.rules import Game, IllegalAction, NotationError
from masume.rules.base import ANY_CARD
from masume.rules.magic_number_eleven import (
    Bench,
    Clear,
    Done,
    Effect,
    EndTurn,
    Link,
    Penalty,
    Pick,
    Place,
    Press,
    Ready,
    Reveal,
    Shoot,
    Sub,
    Synergy,
)
from masume.rules.magic_number_eleven.position import Position

RULES = load_rules("magic-number-eleven")
HOME, AWAY = 0, 1


def started(home_stars: str = "ST01/ST04/ST07", away_stars: str = "ST02/ST05/ST08",
            home_bench: str = "H08/H09/H10", away_bench: str = "A07/A06/A05",
            **options: object) -> Position:
    """Home's first turn of the first half, the draft and bench given as options."""
    return RULES.start(home_stars=home_stars, away_stars=away_stars, home_bench=home_bench,
                       away_bench=away_bench, **options)


def put(position: Position, cards: dict[str, str]) -> Position:
    """``position`` with ``cards`` (reading cell -> player id) lying on the field."""
    field = tuple(sorted(set(position.field) | set(cards.items())))
    unplaced = tuple(tuple(c for c in side if c not in cards.values())
                     for side in position.unplaced)
    return replace(position, field=field, unplaced=unplaced)


def play(position: Position, *texts: str) -> Position:
    for text in texts:
        position = position.apply(position.parse_action(text))
    return position


def names(actions: object) -> list[str]:
    return [str(a) for a in actions]  # type: ignore[attr-defined]


# The seed's judgement example: home's wing (base attack 3, crack 1) against an
# away defence of 4 (crack makes it 3).
WING_FIELD = {"H1a": "H01", "H1c": "H02", "H2d": "H04", "H1e": "H03"}
WALL_FIELD = {"A4a": "ST08", "A4c": "A10", "A3a": "A09"}


def wing_position(**changes: object) -> Position:
    position = put(put(started(), WING_FIELD), WALL_FIELD)
    return replace(position, **changes)


# ---------------------------------------------------------------- set-up


def test_star_draft_runs_in_the_seeds_order() -> None:
    """④ 3 stars turned up; away picks, home picks, one back to the box; home picks first
    in round 2, away again in round 3."""
    position = RULES.start()
    assert position.status().awaiting == "reveal" and position.to_move == "away"
    assert len(list(position.legal_actions())) == 12
    position = play(position, "reveal ST01", "reveal ST02", "reveal ST03")
    assert names(position.legal_actions()) == ["pick ST01", "pick ST02", "pick ST03"]
    position = play(position, "pick ST02")
    assert position.to_move == "home"
    assert names(position.legal_actions()) == ["pick ST01", "pick ST03"]
    position = play(position, "pick ST03")
    assert position.boxed == ("ST01",) and position.to_move == "home"  # round 2: home first
    assert Reveal("ST01") not in set(position.legal_actions())  # back in the box
    position = play(position, "reveal ST04", "reveal ST05", "reveal ST06", "pick ST04")
    assert position.to_move == "away"
    position = play(position, "pick ST06", "reveal ST07", "reveal ST08", "reveal ST09")
    assert position.to_move == "away"  # round 3: away first again
    position = play(position, "pick ST09", "pick ST07")
    assert position.stars == (("ST03", "ST04", "ST07"), ("ST02", "ST06", "ST09"))
    assert position.boxed == ("ST01", "ST05", "ST08")
    # ⑥ the starting ten: 13 players each, three go to the bench
    assert position.phase == "bench" and len(position.unplaced[HOME]) == 13
    assert position.status().highlights["legal"] == ("home-bench-1",)
    position = play(position, "bench H08", "bench H09", "bench ST07")
    assert position.to_move == "away"
    position = play(position, "bench A08", "bench A09", "bench A10")
    assert position.layout()["home-bench-3"] == (position.cards.copy("ST07").piece,)
    assert len(position.unplaced[HOME]) == len(position.unplaced[AWAY]) == 10
    assert position.to_move == "home" and position.half == 1  # the home team starts


def test_draft_and_bench_options_are_checked() -> None:
    with pytest.raises(ValueError, match="not a star player"):
        RULES.start(home_stars="H01/ST02/ST03", away_stars="ST04/ST05/ST06")
    with pytest.raises(ValueError, match="both teams"):
        RULES.start(home_stars="ST01/ST02/ST03", away_stars="ST03/ST05/ST06")
    with pytest.raises(ValueError, match="home_bench: give 3"):
        started(home_bench="H08/H09")
    with pytest.raises(ValueError, match="first must be home or away"):
        RULES.start(first="blue")


def test_the_start_lays_only_the_deck() -> None:
    position = started()
    assert position.layout() == {**{f"home-bench-{k}": position.layout()[f"home-bench-{k}"]
                                    for k in (1, 2, 3)},
                                 **{f"away-bench-{k}": position.layout()[f"away-bench-{k}"]
                                    for k in (1, 2, 3)},
                                 "synergy-deck": (ANY_CARD,)}
    assert position.deck == 25 and position.hands == (0, 0) and position.initiative == 4


# ---------------------------------------------------------------- placing players


def test_a_card_covers_two_cells_on_the_rows_its_position_allows() -> None:
    """STEP1: FW rows 1-2, MF 2-3, DF 3-4; the front row only next to another card."""
    position = started()
    places = {a.card: [] for a in position.legal_actions() if isinstance(a, Place)}
    for action in position.legal_actions():
        if isinstance(action, Place):
            places[action.card].append(action.cell)
    assert places["H01"] == [f"H2{c}" for c in "abcde"]  # FW: no card yet, so not the front row
    assert places["H04"] == [f"H{r}{c}" for r in (2, 3) for c in "abcde"]  # MF
    assert places["ST07"] == [f"H{r}{c}" for r in (3, 4) for c in "abcde"]  # DF
    position = play(position, "H04 H2b")
    assert position.layout()["H2b"] == (position.cards.copy("H04").piece,)  # read by its left half
    assert "H2c" not in position.layout()
    position = play(position, "A04 A2a")  # away's turn
    cells = sorted(a.cell for a in position.legal_actions()
                   if isinstance(a, Place) and a.card == "H01")
    assert "H1a" in cells and "H1c" in cells and "H1e" not in cells  # front row: next to H2b-H2c
    assert "H2a" not in cells and "H2c" not in cells  # H2b and H2c are taken
    with pytest.raises(IllegalAction, match="H01 may go on"):
        position.parse_action("H01 H1e")
    with pytest.raises(IllegalAction, match="not a player of home waiting"):
        position.parse_action("A01 H3a")


def test_a_placed_card_shows_where_cards_may_go() -> None:
    position = started()
    legal = position.status().highlights["legal"]
    assert "H2a" in legal and "H4e" in legal and "H1a" not in legal and "H2f" not in legal


# ---------------------------------------------------------------- symbols and the team action


def test_base_attack_of_the_striker_and_the_chance_maker() -> None:
    """Seed: the striker's base attack is 3 (two from the front row, one from the chance
    maker); the chance maker's own is 1 (the shared symbol)."""
    position = put(started(), {"H1b": "H01", "H2b": "H04"})
    assert [s.name for s in position.shot_symbols("H1b")] == ["H1b^", "H1c^", "H1b/H2b"]
    assert [s.name for s in position.shot_symbols("H2b")] == ["H1b/H2b"]


def test_team_action_with_a_full_hand() -> None:
    """Seed: 3 link and 2 press completed, 3 cards in hand: link draws at most 2."""
    position = replace(started(), phase="team", team_symbols=(3, 2), hands=(3, 0))
    actions = names(position.legal_actions())
    assert "link 1" in actions and "link 2" in actions and "link 3" not in actions
    assert "press" in actions and "end" not in actions  # not skipped while one can be used
    with pytest.raises(IllegalAction, match="link draws 1 to 2 cards"):
        position.parse_action("link 3")
    drawn = play(position, "link 2")
    assert drawn.hands == (5, 0) and drawn.deck == 23 and drawn.phase == "player"
    assert drawn.layout() == position.layout()  # the sensors see no change: a button
    pressed = play(position, "press")
    assert pressed.initiative == 6 and pressed.initiative_state("home") == "attacking"
    assert pressed.initiative_state("away") == "defending"


def test_press_is_impossible_at_the_far_end_and_a_full_hand_draws_nothing() -> None:
    """Detailed rules: when the marker cannot move and no card can be drawn, the team
    action is skipped."""
    position = replace(started(), phase="team", team_symbols=(2, 1), hands=(5, 0), initiative=7)
    assert not any(isinstance(a, (Link, Press)) for a in position.legal_actions())
    assert position.is_legal(Sub("H01", "H08"))  # substitutions stay open
    # at a turn's start with nothing to use, the team action is skipped by itself
    turn = play(replace(started(), initiative=7, hands=(5, 0)), "H04 H2b")
    turn = replace(turn, turn=AWAY, phase="player", hands=(5, 0))
    turn = play(turn, "A04 A2a")
    assert turn.to_move == "home" and turn.phase == "player"


def test_only_symbols_completed_before_the_turn_count() -> None:
    """A symbol completed this turn works from the next turn; a card taken off in this turn
    does not take back what its symbols gave at the turn's start."""
    position = started()
    position = play(position, "H04 H2b")  # the chance maker: no completed link yet
    position = play(position, "A04 A2a")
    assert position.phase == "player"  # no link, no press symbol: team action skipped
    position = play(position, "H01 H1b")  # completes a link symbol (H1c/H2c)
    assert position.count(HOME, "link") == 1
    assert position.phase == "after"  # the striker may shoot; the link is for next turn
    position = play(position, "end", "A10 A4a")
    assert position.to_move == "home" and position.phase == "team"
    assert position.team_symbols[0] == 1 and "link 1" in names(position.legal_actions())
    # 「チーム行動で戦術シンボルの効果を使った後に選手を交代することも可能だ」: a symbol
    # is counted when it is used, so a player subbed out before the team action lends none
    subbed = play(position, "sub out H01 in H08")
    assert subbed.count(HOME, "link") == 0 and subbed.team_symbols == (0, 0)
    assert subbed.phase == "player"  # nothing left to use: the team action is skipped
    # the seed's order: the link used first, then the player subbed out; the cards stay
    used = play(position, "link 1", "sub out H01 in H08")
    assert used.hands == (1, 0) and used.subs == (1, 0) and used.phase == "player"


# ---------------------------------------------------------------- instant effects


def test_instant_effects_apply_once_or_are_skipped() -> None:
    position = started()
    # ST04 Regista: draw one synergy card
    after = play(position, "ST04 H2a")
    assert after.phase == "effect" and names(a for a in after.legal_actions() if not isinstance(a, Sub)) == [
        "effect", "no effect"]
    assert play(after, "effect").hands == (1, 0)
    assert play(after, "no effect").hands == (0, 0)
    # ST07 Libero: push the initiative one space
    assert play(position, "ST07 H4a", "effect").initiative == 5
    # ST05 Ball winner (away): one of home's hand cards discarded, unseen
    away = play(replace(position, hands=(2, 0)), "H04 H2b")
    away = play(away, "ST05 A2a")
    assert away.phase == "effect"
    hit = play(away, "effect")
    assert hit.hands == (1, 0) and hit.discard_unknown == 1
    assert hit.layout()["synergy-discard"] == (ANY_CARD,)
    # with an empty hand opposite, the effect cannot apply: it is skipped by itself
    assert play(play(position, "H04 H2b"), "ST05 A2a").to_move == "home"


def test_tempo_control_needs_room_for_one_card() -> None:
    """Detailed rules: TEMPO CONTROL (draw two, keep one) does nothing with 5 cards in hand,
    and works with 4."""
    position = started(home_stars="ST03/ST04/ST07")
    full = play(replace(position, hands=(5, 0)), "ST03 H2a")
    assert full.phase != "effect" and full.to_move == "away"
    four = play(replace(position, hands=(4, 0)), "ST03 H2a")
    assert four.phase == "effect"
    kept = play(four, "effect")
    assert kept.hands == (5, 0) and kept.deck == 23 and kept.discard_unknown == 1


def test_power_shot_ignores_the_base_defence() -> None:
    """The ⚡ shot: this card shoots, the opponent's base defence is ignored."""
    position = put(started(), WALL_FIELD)
    position = put(position, {"H2a": "H04"})
    position = play(position, "ST01 H1a")  # the ace striker, next to the chance maker
    assert position.phase == "effect"
    shots = names(position.legal_actions())
    assert shots[:2] == ["power shot H1a at H1a^", "power shot H1a at H1b^"]
    position = play(position, "power shot H1a at H1a^")
    assert position.defence_base() == 0  # 4 defence symbols, ignored
    assert position.shot.base == 3  # H1a^, H1b^ and H1a/H2a (shared with the chance maker)
    position = play(position, "deck SY09 on 1")  # 3 stars; no hand: the defence's turn
    assert position.to_move == "away"
    position = play(position, "deck SY24 on 1", "done")  # 4 defence symbols + 5 stars: ignored
    assert position.last == "home attack 6 vs defence 5: goal!"


# ---------------------------------------------------------------- shots


def test_shooting_is_optional_after_a_build_up_and_only_with_the_placed_card() -> None:
    position = put(started(), {"H2b": "H04"})
    position = play(position, "H01 H1b")
    actions = names(position.legal_actions())
    assert "shoot H1b at H1b^" in actions and "end" in actions
    assert not any(a.startswith("shoot H2b") for a in actions)  # not the card placed
    assert play(position, "end").to_move == "away"
    with pytest.raises(IllegalAction, match=r"only the player placed this turn \(H1b\)"):
        position.parse_action("shoot H2b at H1b/H2b")
    with pytest.raises(IllegalAction, match=r"shot symbols: H1b\^, H1c\^, H1b/H2b$"):
        position.parse_action("shoot H1b at H1b|H1c")
    with pytest.raises(IllegalAction, match="only when no card can be placed"):
        position.parse_action("shoot blind")


def test_quick_attack_shoots_with_a_placed_card() -> None:
    position = put(started(), {"H1b": "H01", "H2b": "H04"})
    actions = names(position.legal_actions())
    assert "shoot H2b at H1b/H2b" in actions and "shoot H1b at H1c^" in actions
    shot = play(position, "shoot H2b at H1b/H2b")
    assert shot.phase == "attack" and shot.status().highlights["shooter"] == ("H2b",)


def test_attack_cards_by_initiative() -> None:
    """Attacking: the deck card then up to two from hand; normal: one; defending: none."""
    base = put(started(), {"H1b": "H01", "H2b": "H04"})
    for initiative, most in ((6, 3), (4, 2), (2, 1)):
        position = play(replace(base, initiative=initiative, hands=(4, 0)), "shoot H1b at H1b^")
        assert position.status().highlights["legal"] == ("home-synergy-1",)
        position = play(position, "deck SY20 on 1")
        for area in range(2, most + 1):
            assert position.phase == "attack"
            position = play(position, f"hand SY1{area} on {area}")
        assert position.phase == "defence", initiative  # no more room: the defence
        assert len(position.areas[HOME]) == most
        assert position.hands[HOME] == 4 - (most - 1)
    # a high initiative with an empty hand: the deck card alone
    empty = play(replace(base, initiative=7, hands=(0, 0)), "shoot H1b at H1b^", "deck SY20 on 1")
    assert empty.phase == "defence"


def test_defence_uses_two_areas_and_may_take_the_second_from_the_deck() -> None:
    """Seed: away has no hand card, so its second card comes from the deck too."""
    position = wing_position()
    position = play(position, "shoot H1c at H1c^", "deck SY24 on 1")
    assert position.to_move == "away"  # no card in hand: the attack is complete
    assert position.status().highlights["legal"] == ("away-synergy-1",)
    position = play(position, "deck SY19 on 1")
    actions = names(position.legal_actions())
    assert "deck SY05 on 2" in actions and not any(a.startswith("hand") for a in actions)
    assert "done" in actions


def test_the_seeds_judgement_example_and_the_crack() -> None:
    """Base attack 3 (crack 1) + synergy 7 = 10 against base defence 4-1=3 + synergy 6 = 9:
    goal. Without the wing's crack, 10 against 10 is no goal."""
    position = wing_position(hands=(1, 0))
    assert len(position.shot_symbols("H1c")) == 3 and position.count(AWAY, "defence") == 4
    position = play(position, "shoot H1c at H1c^")
    assert position.shot.base == 3 and position.shot.crack == 1
    position = play(position, "deck SY24 on 1", "hand SY04 on 2")  # 5 + 2 stars
    assert position.attack_total() == 10 and position.to_move == "away"
    position = play(position, "deck SY19 on 1", "deck SY05 on 2")  # 4 + 2 stars
    assert position.phase == "clear"
    assert position.last == "home attack 10 vs defence 9: goal!"
    assert position.score == (1, 0) and position.initiative == 4
    assert position.status().highlights["score"] == ("home-score-1",)
    # the cards stay on the mat, face up, until cleared
    assert position.layout()["home-synergy-2"] == (position.cards.copy("SY04").piece,)
    assert position.seen_by(None).cells["away-synergy-1"] == ("SY19 Synergy 4★",)
    cleared = play(position, "clear")
    assert "home-synergy-1" not in cleared.layout() and cleared.to_move == "away"
    assert cleared.discard_known >= {"SY24", "SY04", "SY19", "SY05"}
    # the shot token: the wing's base attack goes from 3 to 2
    assert [s.name for s in cleared.shot_symbols("H1c")] == ["H1b|H1c", "H1d/H2d"]

    no_crack = replace(wing_position(hands=(1, 0)),
                       field=tuple(p for p in wing_position().field if p[1] != "H03"))
    no_crack = play(no_crack, "shoot H1c at H1c^", "deck SY24 on 1", "hand SY04 on 2",
                    "deck SY19 on 1", "deck SY05 on 2")
    assert no_crack.last == "home attack 10 vs defence 10: saved" and no_crack.score == (0, 0)


@pytest.mark.parametrize("cards, result", [
    (("SY24", "SY20"), "home attack 12: line out"),  # 3 + 5 + 4
    (("SY24", "SY09"), "home attack 11: wonder goal!"),  # 3 + 5 + 3
])
def test_eleven_is_the_wonder_goal_and_twelve_a_line_out(cards: tuple[str, str],
                                                         result: str) -> None:
    position = wing_position(hands=(1, 0))
    position = play(position, "shoot H1c at H1c^", f"deck {cards[0]} on 1", f"hand {cards[1]} on 2",
                    "deck SY25 on 1", "deck SY23 on 2")  # defence 3 + 5 + 4 = 12
    assert position.last == result
    assert position.score == ((1, 0) if "wonder" in result else (0, 0))
    # line out: the defence's cards are discarded without being shown
    spectator = position.seen_by(None).cells
    hidden = spectator["away-synergy-1"] == ("face down",)
    assert hidden == ("line out" in result)
    assert spectator["home-synergy-1"] != ("face down",)


def test_a_tackle_calls_a_penalty_kick_even_against_the_wonder_goal() -> None:
    position = wing_position(hands=(1, 0))
    position = play(position, "shoot H1c at H1c^", "deck SY24 on 1", "hand SY09 on 2",
                    "deck SY01 on 1", "done")
    assert position.last == "home attack 11: tackle! penalty kick" and position.score == (0, 0)
    position = play(position, "clear")
    assert position.phase == "pk" and position.to_move == "home"
    assert position.status().highlights["legal"] == ("penalty-home",)
    assert [a for a in names(position.legal_actions()) if not a.startswith("sub ")] == [
        f"kick PK0{k}" for k in range(1, 6)]
    kicked = play(position, "kick PK01")  # left-high
    assert kicked.to_move == "away"
    assert kicked.seen_by("away").cells["penalty-home"] == ("face down",)  # laid at once
    assert names(kicked.legal_actions())[0] == "save PK06"
    saved = play(kicked, "save PK06")  # left-high: the keeper guessed the course
    assert saved.last == "penalty kick left-high vs save left-high: saved" and saved.score == (0, 0)
    scored = play(kicked, "save PK07")  # left-low
    assert scored.last.endswith("goal! home scores") and scored.score == (1, 0)
    assert set(scored.layout()) >= {"penalty-home", "penalty-away"}
    assert play(scored, "clear").to_move == "away"


def test_a_tackle_by_the_attacker_does_nothing_and_a_line_out_hides_the_defences_tackle() -> None:
    position = wing_position(hands=(1, 0))
    attack_tackle = play(position, "shoot H1c at H1c^", "deck SY01 on 1", "hand SY02 on 2",
                         "deck SY03 on 1", "done")
    assert attack_tackle.last == "home attack 5 vs defence 4: goal!"
    line_out = play(position, "shoot H1c at H1c^", "deck SY24 on 1", "hand SY25 on 2",
                    "deck SY01 on 1", "done")
    assert line_out.last == "home attack 13: line out" and line_out.phase == "clear"
    assert play(line_out, "clear").phase != "pk"


def test_blind_shot_when_nothing_else_is_possible() -> None:
    """Detailed rules: no card can be placed and none can shoot: a shot without base
    attack, synergy cards by the initiative as usual, no magic number (11 is an ordinary
    total, 12 no line out)."""
    position = put(put(started(), {"H1a": "H02", "H1c": "H03"}), WALL_FIELD)
    position = replace(position, unplaced=((), position.unplaced[AWAY]), initiative=6, hands=(2, 0),
                       used=frozenset(s.name for s in position.symbols(HOME)))
    assert names(a for a in position.legal_actions() if not isinstance(a, Sub)) == ["shoot blind"]
    shot = play(position, "shoot blind")
    assert shot.shot is not None and shot.shot.base == 0 and shot.shot.kind == "blind"
    eleven = play(shot, "deck SY24 on 1", "hand SY10 on 2", "hand SY11 on 3")  # 5 + 3 + 3
    saved = play(eleven, "deck SY25 on 1", "deck SY23 on 2")  # 4 base + 5 + 4
    assert saved.last == "home attack 11 vs defence 13: saved"
    twelve = play(shot, "deck SY24 on 1", "hand SY10 on 2", "hand SY21 on 3")  # 5 + 3 + 4
    scored = play(twelve, "deck SY03 on 1", "done")  # 4 base + 1
    assert scored.last == "home attack 12 vs defence 5: goal!"


# ---------------------------------------------------------------- additional time, half time, end


def test_additional_time_after_the_deck_runs_out() -> None:
    """Seed: the deck runs out during away's turn: it is rebuilt from the discard pile,
    home's next turn is the additional time (no team action) and ends the half."""
    position = put(put(started(), {"H1b": "H01", "H2b": "H04"}), {"A1a": "A01", "A2a": "A04"})
    position = replace(position, turn=AWAY, phase="player", deck=2, initiative=2,
                       discard_known=frozenset({"SY20", "SY21"}), hands=(3, 0), team_symbols=(0, 0))
    position = play(position, "shoot A1a at A1a^", "deck SY03 on 1")
    assert position.deck == 1 and not position.ran_out
    position = play(position, "deck SY25 on 1")  # the last card: the discard pile is the new deck
    assert position.ran_out and position.deck == 2 and not position.discard_known
    position = play(position, "done", "clear")
    assert position.to_move == "home" and position.additional
    assert position.status().message == ("away attack 4 vs defence 5: saved; home, first half, "
                                         "additional time: player action (place a player or shoot)")
    assert position.phase == "player"  # no team action in the additional time
    assert position.initiative_state("home") == "defending"
    position = play(position, "shoot H1b at H1b^", "deck SY01 on 1")
    assert position.phase == "defence"  # defending: no card from the hand, though it holds 3
    position = play(position, "deck SY05 on 1", "done", "clear")
    assert position.phase == "clear" and position.then == "half"  # the half is over
    half = play(position, "clear")
    assert half.phase == "half" and half.field == () and half.deck == 25 and half.hands == (0, 0)
    assert half.initiative == 4 and not half.used and len(half.unplaced[HOME]) == 10
    second = play(half, "ready", "ready")
    assert second.half == 2 and second.to_move == "away"  # away starts the second half


def test_the_match_ends_after_the_second_half_and_a_draw_may_go_to_a_shoot_out() -> None:
    base = replace(put(started(), {"H1b": "H01"}), half=2, additional=True, score=(1, 1))
    over = play(base, "shoot H1b at H1b^", "deck SY03 on 1", "deck SY24 on 1", "done", "clear")
    assert over.outcome() is not None and over.outcome().winner is None
    assert str(over.outcome()) == "draw (full time)"
    assert not list(over.legal_actions())
    shootout = replace(base, options=replace(base.options, shootout=True))
    position = play(shootout, "shoot H1b at H1b^", "deck SY03 on 1", "deck SY24 on 1", "done",
                    "clear")
    assert position.phase == "shootout" and position.to_move == "home"
    kicks = 0
    while position.outcome() is None:  # home always scores, away is always saved
        if position.to_move == "home" and not position.penalty[0]:
            position = play(position, "kick PK01", "save PK07", "clear")
        else:
            position = play(position, "kick PK01", "save PK06", "clear")
        kicks += 1
    assert position.outcome().winner == "home" and position.outcome().reason == "shoot-out"
    assert position.shootout == ("111", "000") and kicks == 6


def test_more_goals_win() -> None:
    base = replace(put(started(), {"H1b": "H01"}), half=2, additional=True, score=(2, 1))
    over = play(base, "shoot H1b at H1b^", "deck SY03 on 1", "deck SY04 on 1", "done", "clear")
    assert str(over.outcome()) == "home wins (goals)"
    assert RULES.resign(started(), "home").outcome().winner == "away"


# ---------------------------------------------------------------- substitutions


def test_substitutions_the_seeds_example() -> None:
    """The striker has shot three times (base attack 1 left): he goes off, face down on the
    bench cell the substitute left, and his shot tokens go back to the supply."""
    position = put(started(), {"H1b": "H01", "H2b": "H04"})
    position = replace(position, used=frozenset({"H1b^", "H1c^"}))
    assert len(position.shot_symbols("H1b")) == 1
    after = play(position, "sub out H01 in H08")
    assert after.bench[HOME][0] == ("home-bench-1", "H01", True)
    assert "H08" in after.unplaced[HOME] and "H1b" not in dict(after.field)
    assert after.used == frozenset() and after.subs == (1, 0)
    assert after.seen_by("away").cells["home-bench-1"] == (
        "H01 Home striker (FW) (substituted out)",)
    assert after.layout()["home-bench-1"] == (after.cards.copy("H01").piece,)
    assert after.to_move == "home" and after.phase == "player"  # not an action of the turn
    assert not any(isinstance(a, Sub) and a.into == "H01" for a in after.legal_actions())
    after = play(after, "sub out H02 in H09", "sub out H03 in H10")
    assert after.subs == (3, 0) and not any(isinstance(a, Sub) for a in after.legal_actions())


def test_substitutions_any_time_in_ones_own_turn() -> None:
    """「選手交代は自分のターン中いつでも、そしてハーフタイムで行える」: during one's own
    attack, and for the card just placed (before or after its instant effect)."""
    attack = play(wing_position(hands=(1, 0)), "shoot H1c at H1c^", "deck SY24 on 1")
    assert attack.phase == "attack" and attack.is_legal(Sub("H03", "H08"))
    # the shooter himself may leave: the shot stands, his token goes back to the supply
    gone = play(attack, "sub out H02 in H08")
    assert gone.shot is not None and gone.shot.token == "" and gone.attack_total() == \
        attack.attack_total()
    judged = play(gone, "done", "deck SY01 on 1", "done")
    assert "H1c^" not in judged.used
    # the card just placed, while its instant effect waits
    placed = play(replace(started(), hands=(0, 1)), "ST07 H3a")
    assert placed.phase == "effect" and placed.is_legal(Sub("ST07", "H08"))
    off = play(placed, "sub out ST07 in H08")
    assert off.placed == "" and "H3a" not in dict(off.field) and off.to_move == "away"
    # not in the opponent's turn, and the refusal says why
    assert not attack.is_legal(Sub("A09", "A07"))
    with pytest.raises(IllegalAction, match="H01 was substituted out"):
        play(play(started(), "sub out H01 in H08"), "sub out H02 in H01")


def test_substitutions_through_the_whole_turn_the_defence_and_the_penalty_kick_too() -> None:
    """「選手交代は自分のターン中いつでも」 and 「得点判定が全部終わるとターンが終了する」: the
    opponent's defence and a tackle's penalty kick are part of the attacker's turn, so the
    attacker may substitute then too (the sub goes into the record's line of the side
    placing cards); the defender may not, it is not its turn."""
    defence = play(wing_position(hands=(1, 0)), "shoot H1c at H1c^", "deck SY24 on 1",
                   "hand SY09 on 2")
    assert defence.phase == "defence" and defence.to_move == "away"
    assert defence.is_legal(Sub("H03", "H08")) and not defence.is_legal(Sub("A09", "A07"))
    subbed = play(defence, "sub out H03 in H08")
    assert subbed.to_move == "away" and subbed.subs == (1, 0) and "H03" not in dict(
        subbed.field).values()
    tackled = play(subbed, "deck SY01 on 1", "done")
    assert tackled.last.endswith("tackle! penalty kick") and tackled.phase == "clear"
    assert tackled.is_legal(Sub("H04", "H09"))
    kick = play(tackled, "clear")
    assert kick.phase == "pk" and kick.is_legal(Sub("H04", "H09"))
    laid = play(kick, "sub out H04 in H09", "kick PK01")
    assert laid.subs == (2, 0) and laid.to_move == "away"
    assert laid.is_legal(Sub("H01", "H10"))  # still home's turn while away guesses
    over = play(laid, "save PK07", "clear")
    assert over.to_move == "away" and over.turn == 1  # away's turn now
    assert not any(isinstance(a, Sub) and a.out.startswith("H") for a in over.legal_actions())
    # a shoot-out is no one's turn: no substitution there
    shootout = replace(started(), phase="shootout", turn=HOME)
    assert not any(isinstance(a, Sub) for a in shootout.legal_actions())


def test_substitutions_at_half_time() -> None:
    position = replace(started(), phase="half", turn=HOME)
    assert "sub out H01 in H08" in names(position.legal_actions())
    position = play(position, "sub out H01 in H08", "ready")
    assert position.to_move == "away" and position.subs == (1, 0)


# ---------------------------------------------------------------- views and notation


def test_face_down_synergy_cards_are_seen_by_their_owner_only() -> None:
    position = play(wing_position(hands=(1, 0)), "shoot H1c at H1c^", "deck SY24 on 1")
    assert position.seen_by("home").cells["home-synergy-1"] == ("SY24 Synergy 5★",)
    assert position.seen_by("away").cells["home-synergy-1"] == ("face down",)
    assert position.seen_by(None).cells["home-synergy-1"] == ("face down",)
    home = dict(position.seen_by("home").panel)
    away = dict(position.seen_by("away").panel)
    assert home["attack"] == "8 (3 base + 5 stars)"
    assert away["attack"] == "3 base + 1 face-down cards"
    assert away["defence"] == "3 (3 base (crack 1) + 0 stars)"
    assert home["defence"] == "3 base (crack 1) + 0 face-down cards"
    assert home["home symbols"] == "shot 6, defence 0, link 0, press 0, crack 1"
    action = Synergy("SY04", 2, "hand")
    assert position.notation_for(action, "home") == "hand SY04 on 2"
    assert position.notation_for(action, "away") == "hand card on 2"
    assert position.notation_for(action, None) == "hand card on 2"
    assert position.seen_by("home").hand[0].startswith("H05 Home playmaker")
    assert position.seen_by(None).hand == ()


def test_status_lights_the_initiative_and_the_turn() -> None:
    status = replace(started(), initiative=6).status()
    assert status.highlights["initiative"] == ("initiative-6",)
    assert status.highlights["turn"] == ("turn-home",)
    assert status.message == "home, first half: player action (place a player or shoot)"


@pytest.mark.parametrize("action", [
    Reveal("ST03"), Pick("ST03"), Bench("H09"), Link(2), Press(), Place("H07", "H2b"),
    Effect(True), Effect(False), Shoot("H2b", "H1b^"), Shoot("H2b", "H1b/H2b"),
    Shoot("H1b", "H1b|H1c"), Shoot("H2a", "H2a*1", "power"), Shoot("H2a", "", "power"),
    Shoot(kind="blind"), EndTurn(), Synergy("SY05", 1, "deck"), Synergy("SY05", 2, "hand"),
    Done(), Penalty("kick", "PK03"), Penalty("save", "PK08"), Sub("H04", "ST02"), Ready(), Clear(),
])
def test_notation_round_trips(action: object) -> None:
    from masume.rules.magic_number_eleven import parse
    assert parse(str(action)) == action
    assert parse("  " + str(action).swapcase() + " ") == action  # case and spaces forgiven


def test_notation_errors() -> None:
    position = started()
    with pytest.raises(NotationError, match="not magic-number-eleven notation"):
        position.parse_action("kick the ball")
    with pytest.raises(IllegalAction, match="not now"):
        position.parse_action("press")


def test_position_text_round_trips_and_rejects_nonsense() -> None:
    position = play(wing_position(hands=(1, 0)), "shoot H1c at H1c^", "deck SY24 on 1")
    assert RULES.from_text(position.to_text()) == position
    with pytest.raises(NotationError):
        RULES.from_text("mne1;cards=magic-number-eleven-demo;phase=nowhere")
    with pytest.raises(NotationError):
        RULES.from_text(position.to_text().replace("H02", "H99"))
    with pytest.raises(NotationError):
        RULES.from_text("hello")


def test_game_push_pop() -> None:
    game = Game(started())
    game.push_notation("H04 H2b")
    assert game.pop() == Place("H04", "H2b") and game.position == started()


# ---------------------------------------------------------------- more of the rules


def test_a_press_pushes_by_the_press_symbols_and_stops_at_the_end() -> None:
    position = replace(started(), phase="team", team_symbols=(0, 3), initiative=6)
    assert play(position, "press").initiative == 7
    away = replace(started(), phase="team", turn=AWAY, team_symbols=(0, 2), initiative=4)
    assert play(away, "press").initiative == 2  # away pushes towards home's end
    assert play(away, "press").initiative_state("away") == "attacking"


def test_the_speedsters_instant_effect_pushes_two_spaces() -> None:
    position = started(home_stars="ST02/ST04/ST07", away_stars="ST01/ST05/ST08")
    position = play(position, "ST02 H2a")
    assert names(a for a in position.legal_actions() if not isinstance(a, Sub)) == [
        "effect", "no effect"]
    assert play(position, "effect").initiative == 6
    at_end = play(replace(started(home_stars="ST02/ST04/ST07", away_stars="ST01/ST05/ST08"),
                          initiative=7), "ST02 H2a")
    assert at_end.phase != "effect"  # cannot apply: skipped


def test_a_shared_symbol_used_by_one_shot_is_gone_for_both_cards() -> None:
    position = put(started(), {"H1b": "H01", "H2b": "H04"})
    position = play(position, "shoot H2b at H1b/H2b", "deck SY03 on 1", "deck SY04 on 1", "done",
                    "clear")
    assert [s.name for s in position.shot_symbols("H1b")] == ["H1b^", "H1c^"]
    assert position.shot_symbols("H2b") == ()


def test_a_link_draw_that_empties_the_deck_brings_the_additional_time() -> None:
    position = replace(started(), phase="team", team_symbols=(3, 0), deck=2,
                       discard_known=frozenset({"SY20"}), discard_unknown=1)
    drawn = play(position, "link 3")
    assert drawn.hands == (3, 0) and drawn.ran_out and drawn.deck == 1
    assert drawn.layout().get("synergy-discard") is None
    assert play(drawn, "H04 H2b").additional  # away's turn is the last of the half


def test_the_clear_step_lights_what_to_take_off() -> None:
    position = play(wing_position(hands=(1, 0)), "shoot H1c at H1c^", "deck SY24 on 1",
                    "hand SY04 on 2", "deck SY19 on 1", "deck SY05 on 2")
    assert position.status().highlights["clear"] == (
        "away-synergy-1", "away-synergy-2", "home-synergy-1", "home-synergy-2")
    assert names(position.legal_actions()) == ["clear"]
