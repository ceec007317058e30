"""The computer's hand, known card by card (issue 18; docs/ai.md, "The computer's hand"):
the card engines' HoldsHands (a side's hand as its hand slots read it), and the search
that plays the hand it holds while the other side's stays hidden from it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

from masume.ai import dealt, search
from masume.ai.search import acting_side, is_chance
from masume.games import load_rules
from masume.rules.magic_number_eleven.actions import Done, Synergy

CARD_GAMES = ("eyeshield21", "magic-number-eleven")
#: The star draft and the benches given (Magic Number Eleven's options), so that the
#: random actions reach the match.
START = {"magic-number-eleven": {"home_stars": "ST01/ST04/ST07", "away_stars": "ST02/ST05/ST08",
                                 "home_bench": "H08/H09/H10", "away_bench": "A08/A09/A10"}}

#: Magic Number Eleven, away attacking (three synergy cards), its shot's base 6 and
#: SY11 (3 stars) on synergy area 1: 9, two short of the magic number; home's hand empty,
#: its defence 10 more than its cards (a by-hand adjustment, ``mods``): only 11 scores.
ATTACK_AT_9 = (
    "mne1;cards=magic-number-eleven-demo;first=home;shootout=0;phase=attack;half=1;turn=1;"
    "additional=0;ran_out=0;field=A1e:A02,A2d:ST02,A3a:A10,A3c:ST08,A3e:A08,H1a:H01,H2a:H02,"
    "H3e:H05,H4e:H10;unplaced=H03,H06,H07,ST07,H09,H08|A01,A04,A05,A07,A09;"
    "bench=home-bench-1:H04:1,home-bench-2:ST04:1,home-bench-3:ST01:1|away-bench-1:ST05:1,"
    "away-bench-2:A06:1,away-bench-3:A03:1;subs=3|3;used=;initiative=2;score=0|0;hands=0|2;"
    "deck=22;discard=;discard_unknown=0;areas=|1:SY11:deck;team_symbols=1|0;placed=A1e;"
    "shot=1:A1e:6:0:A1f^:normal;penalty=|;stars=ST01,ST04,ST07|ST02,ST05,ST08;revealed=;"
    "boxed=ST03,ST06,ST09;ready=0|0;shootout_kicks=|;last=;shown=0|0;then=;resigned=-1;"
    "mods=10|0")


def played_with_hands(game: str, seed: int, actions: int) -> Any:
    """A position some random actions into ``game``, every hand dealt (masume.ai.dealt),
    a player to act and a hand held (None: no hand held in this game)."""
    rng = random.Random(seed)
    position = load_rules(game).start(**START.get(game, {}))
    found = None
    for number in range(600):
        if position.outcome() is not None:
            break
        if not is_chance(position) and any(position.hand_of(s) for s in position.sides):
            found = position
            if number >= actions:
                break
        position = dealt(position.apply(rng.choice(list(position.legal_actions()))), rng)
    return found


def positions_with_hands(game: str, actions: int) -> Iterator[tuple[int, Any, str, str]]:
    """(seed, position, the side to act, the other side) for seeds 0-29, each position
    ``actions + seed`` random actions in (:func:`played_with_hands`), where one was found."""
    for seed in range(30):
        position = played_with_hands(game, seed, actions + seed)
        if position is None:
            continue
        side = acting_side(position)
        yield seed, position, side, next(s for s in position.sides if s != side)


@pytest.mark.parametrize("game", CARD_GAMES)
def test_a_side_plays_only_the_cards_it_holds(game: str) -> None:
    """Held, a hand's cards are the only ones its side may lay from it; the other side's
    draw (sample_unseen) forgets them, seen_by names them to their side alone."""
    checked = 0
    for seed, position, side, other in positions_with_hands(game, 60):
        held = position.hand_of(side)
        if not held or position.hand_size(side) != len(held):
            continue
        for action in position.legal_actions():
            text = position.notation(action)
            named = [c for c in position.drawable(side) if c in text.replace("@", " ").split()]
            # a card of the hand played is a held one; the deck's stay the deck's
            assert not named or "hand" not in text, (text, held)
        mine = position.seen_by(side).hand
        assert all(any(label.startswith(f"{c} ") for label in mine) for c in held)
        theirs = position.seen_by(other)
        assert not any(c in " ".join(theirs.hand) for c in held)
        forgot = position.sample_unseen(other, random.Random(seed))  # type: ignore[attr-defined]
        assert forgot.hand_of(side) == () and forgot.hand_size(side) == len(held)
        assert forgot.seen_by(other) == theirs
        kept = position.sample_unseen(side, random.Random(seed))  # type: ignore[attr-defined]
        assert kept.hand_of(side) == held
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize("game", CARD_GAMES)
def test_a_hand_read_wrong_is_refused_saying_why(game: str) -> None:
    position = next(p for seed in range(30) if (p := played_with_hands(game, seed, 80)))
    side = next(s for s in position.sides if position.hand_of(s))
    held = position.hand_of(side)
    with pytest.raises(ValueError, match="hand holds 0"):
        load_rules(game).start(**START.get(game, {})).holding(side, held[:1])
    with pytest.raises(ValueError, match="read twice|hand holds"):
        position.holding(side, held[:1] * 2)
    elsewhere = next(c.id for c in position.card_set.copies()
                     if c.id not in held + position.drawable(side))
    with pytest.raises(ValueError, match=f"{elsewhere} cannot be in {side}'s hand"):
        position.holding(side, (elsewhere,))


def test_holding_the_card_that_wins_now_the_computer_plays_it() -> None:
    """Magic Number Eleven at 9 of 11, the defence beyond reach: holding a 2-star card
    (11, the magic number: 「最終守備力を無視して得点する」) and a 5-star one (14:
    「12 以上 ラインアウト」), it lays the 2-star card, whichever 2-star card it holds: its
    choice is its hand's."""
    rules = load_rules("magic-number-eleven")
    position = rules.from_text(ATTACK_AT_9)
    assert position.attack_total() == 9 and acting_side(position) == "away"
    for two_stars in ("SY04", "SY06"):
        held = position.holding("away", ("SY24", two_stars))
        found = search(held, "away", 600.0, rng=random.Random(1), iterations=300)
        assert found.action == Synergy(two_stars, 2, "hand"), found.stats
    # Holding two cards that would both take it past 11: a legal action, and a card it
    # lays is one of the two it holds.
    over = position.holding("away", ("SY24", "SY19"))
    found = search(over, "away", 600.0, rng=random.Random(1), iterations=300)
    assert not isinstance(found.action, Synergy) or found.action.card in ("SY24", "SY19")
    assert found.action in set(over.legal_actions()) and Done() in set(over.legal_actions())


@pytest.mark.parametrize("game", CARD_GAMES)
def test_the_search_never_sees_the_other_sides_hand(game: str) -> None:
    """Two positions that differ only in the other side's hand, held (as a table that read
    every hand would have them): the same search, visit for visit."""
    compared = 0
    for seed, position, side, other in positions_with_hands(game, 50):
        if not position.hand_of(other):
            continue
        rng = random.Random(seed)
        swapped = position.holding(other, ())
        drawn = tuple(rng.sample(sorted(swapped.drawable(other)), len(position.hand_of(other))))
        swapped = swapped.holding(other, drawn)
        if swapped == position:
            continue
        ours = search(position, side, 600.0, rng=random.Random(1), iterations=25,
                      playout_depth=8)
        theirs = search(swapped, side, 600.0, rng=random.Random(1), iterations=25,
                        playout_depth=8)
        assert ours.stats == theirs.stats
        compared += 1
        if compared == 3:
            break
    assert compared == 3


#: Eyeshield 21, away's main phase, five guts (a buy is legal), three characters each
#: side; away's hand of ``{hand}`` cards (``{deck}`` in its deck).
E21_MAIN = ("cards=eyeshield21-demo decks=falcons/sharks first=home step=main move=away turn=away "
            "n=2 home=27/5/5/0 away={deck}/{hand}/5/0 cells=away-character-2:S05.1,"
            "away-character-3:S04.2,away-character-5:S06.2,home-character-1:F08.2,"
            "home-character-3:F05.1,home-character-4:F07.2")


#: The searches of the hand-cap test: 100 (not 300) already try each of the root's 21
#: actions (checked in the test), at a third of the CPU.
ROOT_ITERATIONS = 100


def e21_main(hand: int) -> Any:
    """:data:`E21_MAIN` with away holding ``hand`` cards, the first eight of them known."""
    position = load_rules("eyeshield21").from_text(E21_MAIN.format(deck=32 - hand, hand=hand))
    return position.holding("away", tuple(sorted(position.drawable("away"))[:min(hand, 8)]))


def test_the_computer_takes_its_hand_no_further_than_its_slots() -> None:
    """The seed lets a hand pass its limit within its turn (「上限は 5枚(自ターン内に調整有り)」:
    buying cards with guts, 「ガッツを消費して、デッキからカードを引き手札に加える」), but the
    table reads only the cards on the computer's eight hand slots: the computer buys no
    card past them (its search's root leaves such an action out: ``hand_cap``), so no card
    it holds is one it does not know by its own choice. Without the cap it would buy."""
    held = e21_main(8)
    buy = held.parse_action("buy")
    assert held.is_legal(buy)
    free = search(held, "away", 600.0, rng=random.Random(1), iterations=ROOT_ITERATIONS)
    capped = search(held, "away", 600.0, rng=random.Random(1), iterations=ROOT_ITERATIONS,
                    hand_cap=8)
    # Enough iterations for the root's every action to be tried: the buy's absence is
    # the cap's doing, as its presence without the cap shows.
    assert len(free.stats) == len(list(held.legal_actions()))
    assert buy in free.stats and buy not in capped.stats and capped.action != buy
    # Below the cap a buy is one of its choices; past it (a hand of 9 the rules made), it
    # does not grow further.
    assert buy in search(held, "away", 600.0, rng=random.Random(1),
                         iterations=ROOT_ITERATIONS, hand_cap=9).stats
    nine = e21_main(9)
    assert buy not in search(nine, "away", 600.0, rng=random.Random(1),
                             iterations=ROOT_ITERATIONS, hand_cap=8).stats
    # A level's random move keeps to the cap too.
    from masume.ai import Level, advise
    wild = Level("wild", seconds=1.0, iterations=1, blunders=1.0)
    assert all(advise(held, "away", wild, random.Random(seed), hand_cap=8).action != buy
               for seed in range(40))


def test_a_hand_larger_than_its_slots_is_said() -> None:
    """A hand of nine on eight slots (the rules made it so: an ability's draw, a buy made
    by hand): the eight read are held, the ninth counted as unread and said, and the
    search plays it only as a card nobody read (any of the unseen)."""
    from masume.boards import load_board
    from masume.play.cards import hand_read

    nine = e21_main(9).holding("away", ())
    board = load_board(load_rules("eyeshield21").board)
    slots = sorted((c.name for c in board.hand_slots("away")),
                   key=lambda name: int(name.rsplit("-", 1)[1]))
    cards = nine.card_set
    eight = sorted(nine.drawable("away"))[:8]
    readings = {slot: cards.copy(card).tag for slot, card in zip(slots, eight, strict=True)}
    read = hand_read(nine, board, readings, "away")
    assert not read.waiting and (read.capacity, read.unread) == (8, 1)
    assert read.position.hand_of("away") == tuple(eight)
    assert read.unread_said("away") == (
        "away's hand holds 9 cards, 1 past its 8 slots: keep the card(s) past them face "
        "down beside the slots, unread; the computer does not know them, and a card it "
        "plays from them is said as one kept beside its slots")
    eight_held = hand_read(e21_main(8).holding("away", ()), board, readings, "away")
    assert (eight_held.unread, eight_held.unread_said("away")) == (0, "")
