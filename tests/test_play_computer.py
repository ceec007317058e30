"""Playing against the computer on the board (issue 18): the real TableSession on the
simulated board (the firmware on the MicroPython VM over a real pty), the computer's
search on its own thread. The test's hands carry out what the board lights: the
computer's action (its colour, blinking where a piece goes), the hints for the other
side, the board's die; a different action where the computer's is lit is flagged and
taken back. Waits are on the table's state, never on the clock."""

from __future__ import annotations

import json
import math
import os
import random
import re
import subprocess
import sys
import threading
import traceback
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_web import at
from waiting import HANG_S, until

from masume.ai import acting_side
from masume.boards import load_board
from masume.games import load_rules
from masume.leds import picture
from masume.link import BoardSession, SerialTransport
from masume.play.cards import from_hand, held_card, set_up
from masume.play.core import NOT_THE_COMPUTERS
from masume.play.table import TableSession
from masume.records import read_record
from masume.rules import Game
from masume.storage import GameStore

pytestmark = pytest.mark.slow

#: Masume Soccer Tactics, home to move with the ball (test_play_tactics.START).
TACTICS = ("home=G2,C4,E3,I3,K4,G5,C8,E6,G6,E11,K7 "
           "away=G16,C14,E14,E12,K14,G13,C13,E13,G14,I13,K13 ball=E6 offence=home move=home")


def search_stack() -> str:
    """Where the process's search thread is (a search that never ends holds every
    table's back): its innermost frames."""
    for thread in threading.enumerate():
        if thread.name.startswith("search") and thread.ident is not None:
            frame = sys._current_frames().get(thread.ident)
            return " < ".join(f"{f.name}:{f.lineno}"
                              for f in traceback.extract_stack(frame)[-6:][::-1])
    return "(no search thread)"


class Hands:
    """The players at a table against the computer: they carry out what is lit."""

    def __init__(self, game: str, make_sim: Any, tmp_path: Path, computer: str,
                 start: Game | None = None) -> None:
        self.rules = load_rules(game)
        self.board = load_board(self.rules.board)
        self.sim = make_sim(self.rules.board)
        game_ = start or Game(self.rules.start())
        for square, piece in set_up(game_.position.layout(), game_.position):
            self.sim.place(square, piece)
        self.store = GameStore.new(tmp_path, game, {"Computer": f"{computer} beginner"})
        self.link = BoardSession(SerialTransport(self.sim.port), expect=self.board.id,
                                 resolve=lambda _id: self.board).start()
        self.said: list[str] = []
        self.swapped: list[str] = []  # the computer's cards laid other than it named
        self.played: list[str] = []  # the computer's cards played from its hand slots
        self.session = TableSession(self.rules, self.board, self.link, game=game_,
                                    store=self.store, sim=self.sim, computer=computer,
                                    level="beginner", on_message=self.said.append).start()
        self.computer = computer
        self.rng = random.Random(18)
        self.in_sync(0)

    def close(self) -> None:
        self.session.close()
        self.link.close()

    @property
    def game(self) -> Game:
        return self.session.game

    def wait(self, check: Any, what: str) -> None:
        try:
            until(check, what, limit=float(os.environ.get("HANDS_S", HANG_S)))
        except AssertionError as exc:  # the table as it stood then, not when it began
            state = self.session.state()
            raise AssertionError(f"{exc}: {state['tracker']}, {self.game.notations()[-6:]}; "
                                 f"advice {state.get('advice')}; said {self.said[-4:]}; "
                                 f"search thread at {search_stack()}") from None

    def in_sync(self, actions: int) -> None:
        """The board shows the game after ``actions`` actions (or more: the computer's
        choices that move nothing follow at once)."""
        self.wait(lambda: self.session.tracker.view.state == "in-sync"
                  and len(self.game.actions) >= actions, f"in sync after {actions} actions")

    def choose(self, text: str) -> None:
        """Make a choice once the board shows the game: the events of a hand's last
        pieces may still be on their way (the board read in sync for a moment on the
        way): refused so, it is made again once the board shows the game."""
        for _ in range(100):
            self.in_sync(len(self.game.actions))
            try:
                self.session.act(text)
                return
            except ValueError as exc:
                if "does not match the game yet" not in str(exc):
                    raise
        raise AssertionError(f"{text}: refused 100 times, the board never in sync")

    def lit(self, kind: str) -> Any:
        """Wait for the action lit for the players (the computer's, or a hint); the
        computer's hand laid on its hand slots first when the table asks for it."""
        at = len(self.game.actions)

        def found() -> bool:
            shown = self.session.core.shown
            return (shown is not None and shown.kind == kind and shown.at == at) or \
                len(self.game.actions) > at or "hand slots" in self.session.core.notice
        for _ in range(20):
            self.wait(found, f"the {kind}'s action lit")
            if "hand slots" not in self.session.core.notice:
                break
            self.deal()
        return self.session.core.shown if len(self.game.actions) == at else None

    def slots(self) -> list[str]:
        """The computer's hand slots, slot 1 first."""
        return [c.name for c in sorted(self.board.hand_slots(self.computer),
                                       key=lambda c: int(c.name.rsplit("-", 1)[1]))]

    def deal(self) -> None:
        """Lay the computer's hand face down on its hand slots as the table asks (a person
        draws its cards, not looking): a card off each slot more than the hand holds, a
        card nobody holds on each free slot the hand fills."""
        position = self.game.position
        stacks = self.sim.table.stacks
        taken = [slot for slot in self.slots() if stacks.get(slot)]
        size = position.hand_size(self.computer)
        while len(taken) > size:
            self.sim.lift(taken.pop(self.rng.randrange(len(taken))))
        lying = {piece for stack in stacks.values() for piece in stack}
        cards = position.card_set
        spare = [c for c in position.drawable(self.computer)
                 if cards.copy(c).tag and cards.copy(c).piece not in lying]
        for slot in self.slots():
            if len(taken) >= size:
                break
            if not stacks.get(slot):
                card = spare.pop(self.rng.randrange(len(spare)))
                self.sim.place(slot, cards.copy(card).piece)
                taken.append(slot)
        self.wait(lambda: "hand slots" not in self.session.core.notice, "the hand read")

    def on_slots(self) -> set[str]:
        """The cards lying on the computer's hand slots."""
        cards = self.game.position.card_set
        return {cards.by_tag(stack[-1][4:]).id for slot in self.slots()
                if (stack := self.sim.table.stacks.get(slot))}

    def carry(self, layout: Any) -> None:
        """Lift and put down pieces until the board stands as ``layout``: each
        square that differs emptied, then filled bottom first (a pile of unknown
        top card, ``tag:*``, gets a spare card of the set)."""
        hands = self.board.hand_cells  # (no part of the game: a hand lies there)
        now = {sq: list(stack) for sq, stack in self.sim.table.stacks.items()
               if stack and sq not in hands}
        want = {sq: list(stack) for sq, stack in layout.items() if stack}
        changed = sorted(sq for sq in set(now) | set(want) if now.get(sq, []) != want.get(sq, []))
        for square in changed:
            for _ in now.get(square, []):
                self.sim.lift(square)
        target = {sq: tuple(want.get(sq, ())) for sq in changed}
        # (the cards on the hand slots are no pile's spare card)
        held = {sq: tuple(stack) for sq, stack in self.sim.table.stacks.items() if sq in hands}
        for square, piece in set_up({**held, **target}, self.game.position):
            if square not in hands:
                self.sim.place(square, piece)

    def lights_show(self, shown: Any) -> bool:
        """The board's LEDs show the lit action: where a piece goes, blinking in the
        side's colour (as the firmware shows them)."""
        colour = self.game.position.legend.sides[shown.side]
        return all(self.sim.led_colours.get(sq) == colour for sq in shown.lit.put)

    def step(self, roll: bool = False) -> str:
        """One action, as the players make it; returns who made it. With ``roll``, the
        players' own side makes an action that asks for the die where there is one
        (the hints need not choose one within any number of actions)."""
        position = self.game.position
        count = len(self.game.actions)
        status = position.status()
        if roll and not status.awaiting and acting_side(position) != self.computer:
            choices = self.session.choices()  # (those that move nothing)
            buttons = {b.name for b in self.board.buttons}
            rolls = [a for a in position.legal_actions()
                     if position.apply(a).status().awaiting == "die"
                     and (a in choices or position.apply(a).layout() != position.layout())]
            if rolls:
                action = self.rng.choice(rolls)
                if action in choices:
                    self.choose(position.notation(action))
                else:
                    # The kick called first (its word's button), as the players do: the
                    # ball on its first square reads as a short inside kick too.
                    for word in set(str(action).split()) & buttons:
                        with self.session._lock:  # as the table's thread handles a press
                            self.session.carry_out(self.session.core.button(word, 0.0))
                    self.carry(position.apply(action).layout())
                self.wait(lambda: len(self.game.actions) > count
                          and self.session.tracker.view.state in ("in-sync", "follow"),
                          "an action that asks for the die")
                return acting_side(position)
        if status.awaiting == "die":
            self.sim.roll(self.rng.randint(1, 6))
            self.wait(lambda: len(self.game.actions) > count, "the roll")
            self.carry(self.game.position.layout())  # the pieces follow the lights
            self.in_sync(len(self.game.actions))
            return "die"
        if status.awaiting:  # a card turned up from a pile: a person enters it
            self.in_sync(count)  # (the last action may still be followed)
            self.choose(position.notation(self.rng.choice(self.session.choices())))
            self.in_sync(count + 1)
            return "chance"
        side = acting_side(position)
        if side == self.computer:
            shown = self.lit("computer")
        else:
            self.session.hint()
            shown = self.lit("hint")
        if shown is None:  # the computer's choice that moves nothing: made at once
            self.in_sync(count + 1)
            return side
        assert position.is_legal(shown.action)
        self.wait(lambda: self.lights_show(shown), f"{shown.words} lit on the board")
        action = shown.action
        lit, blind = from_hand(position, position.notation(action))
        others = [a for a in position.legal_actions() if a != action
                  and from_hand(position, position.notation(a))[0] == lit]
        if side == self.computer and shown.card:
            # Its card on a hand slot: the one it chose, taken from that slot.
            assert shown.card in self.on_slots() and shown.slot in shown.lit.take
            self.sim.lift(shown.slot)
            self.played.append(shown.card)
        elif side == self.computer:
            # Its card from the pile is whichever card the hand lays: another one.
            if blind and others:
                action = self.rng.choice(others)
                self.swapped.append(position.notation(action))
        elif blind and held_card(position, action, dict.fromkeys(self.on_slots(), "")):
            # A person's card from the hand is never one lying on the computer's slots.
            action = self.rng.choice([a for a in others if not held_card(
                position, a, dict.fromkeys(self.on_slots(), ""))])
        after = position.apply(action)
        if shown.action in self.session.choices():
            self.choose(position.notation(shown.action))
        else:
            self.carry(after.layout())
        self.wait(lambda: len(self.game.actions) > count
                  and self.session.tracker.view.state in ("in-sync", "follow"),
                  f"{shown.words} carried out")
        return side


@pytest.fixture
def tactics(make_sim: Any, tmp_path: Path) -> Iterator[Hands]:
    hands = Hands("masume-tactics", make_sim, tmp_path, "away",
                  Game(load_rules("masume-tactics").from_text(TACTICS)))
    yield hands
    hands.close()


def test_a_game_of_masume_tactics_against_the_computer(tactics: Hands) -> None:
    """Home follows the hints, away is the computer, the die is the board's: each lit
    action carried out is recorded, and the record names the computer's side."""
    who = []
    while "away" not in who or who.count("die") < 1 or len(tactics.game.actions) < 12:
        who.append(tactics.step(roll=len(tactics.game.actions) >= 12))
        assert len(who) < 200, who
    played = tactics.game.notations()
    tactics.wait(lambda: GameStore.resume(tactics.store.folder)[1].notations() == played,
                 "the last action saved")
    record = read_record(tactics.store.folder / "record.txt")
    assert record.headers["Computer"] == "away beginner"
    assert any(line.startswith("computer: ") for line in tactics.said)
    assert any(line.startswith("hint for home: ") for line in tactics.said)


def test_another_action_where_the_computers_is_lit_is_flagged(tactics: Hands) -> None:
    while acting_side(tactics.game.position) != "away" or tactics.game.position.status().awaiting:
        tactics.step()
    shown = tactics.lit("computer")
    assert shown is not None
    position = tactics.game.position
    count = len(position.layout())
    other = next(a for a in position.legal_actions()
                 if position.apply(a).layout() != position.apply(shown.action).layout()
                 and len(position.apply(a).layout()) == count
                 and a not in tactics.session.choices())
    tactics.carry(position.apply(other).layout())
    tactics.wait(lambda: NOT_THE_COMPUTERS in tactics.session.state()["tracker"]["message"],
                 "the flag")
    state = tactics.session.state()
    assert state["advice"]["shown"] is None or state["advice"]["shown"]["kind"] == "computer"
    assert tactics.session.core.shown == shown  # the computer's action stays lit
    assert len(tactics.game.actions) == shown.at
    # Put back, the computer's action is lit again and carried out.
    tactics.carry(position.layout())
    tactics.in_sync(shown.at)
    tactics.wait(lambda: tactics.lights_show(shown), "the computer's action lit again")
    assert tactics.session.state()["advice"]["shown"]["text"] == shown.words
    tactics.carry(position.apply(shown.action).layout())
    tactics.wait(lambda: len(tactics.game.actions) == shown.at + 1, "the computer's action")
    assert tactics.game.actions[shown.at] == shown.action


def test_a_hint_lights_a_legal_action_in_the_sides_colour(tactics: Hands) -> None:
    position = tactics.game.position
    tactics.session.hint()
    shown = tactics.lit("hint")
    assert shown is not None and shown.side == "home" and position.is_legal(shown.action)
    leds = picture(tactics.board, position, tactics.session.tracker.view, lit=shown.lit)
    assert all(leds[sq].rgb == position.legend.sides["home"] for sq in shown.lit.put)
    tactics.wait(lambda: tactics.lights_show(shown), "the hint on the board")
    advice = tactics.session.state()["advice"]
    assert advice["shown"]["kind"] == "hint" and advice["shown"]["text"] == shown.words
    assert set(advice["standing"]) == {"home", "away"}
    # The board's hint button asks the same (this table has no pin left for one: the
    # event as the table's thread gets it; soccer-shogi's is pressed below).
    with tactics.session._lock:  # as the table's thread handles a board event
        tactics.session.core.shown = None
        tactics.session.carry_out(tactics.session.core.button("hint", 0.0))
    again = tactics.lit("hint")
    assert again is not None and position.is_legal(again.action)


def test_the_boards_hint_button_lights_a_legal_action(make_sim: Any, tmp_path: Path) -> None:
    """Soccer Shogi's own definition, unchanged: its hint button (the last button pin,
    GP20), pressed on the simulated board, goes through the firmware and the link and
    lights an action for the side to move, in that side's colour, on the board's LEDs."""
    hands = Hands("soccer-shogi", make_sim, tmp_path, "red")
    try:
        assert hands.board.button("hint").pin == 20
        position = hands.game.position
        assert acting_side(position) == "blue" and hands.session.core.shown is None
        hands.sim.press("hint")
        shown = hands.lit("hint")
        assert shown is not None and shown.side == "blue" and position.is_legal(shown.action)
        assert shown.lit.put  # somewhere a piece goes, to light
        hands.wait(lambda: hands.lights_show(shown), "the hint lit in blue on the board")
        assert hands.session.state()["advice"]["shown"]["text"] == shown.words
        assert any(line.startswith("hint for blue: ") for line in hands.said)
    finally:
        hands.close()


@pytest.mark.parametrize("game", ["eyeshield21", "magic-number-eleven"])
def test_a_card_game_against_the_computer(game: str, make_sim: Any, tmp_path: Path) -> None:
    """The computer's cards stay hidden: its hand lies face down on its hand slots, laid
    by a person as the table asks; it plays a card of them by its slot (lit there, said
    as a face-down card and the slot, never the card), the one it chose; its face-down
    card from a pile is whichever card the hand lays; what it plays is recorded."""
    hands = Hands(game, make_sim, tmp_path, "away")
    try:
        who: list[str] = []
        dealt: set[str] = set()
        # Eyeshield 21's computer lays characters from its hand in its first main phase;
        # Magic Number Eleven's plays its hand only in an attack or a defence after a
        # link, rare at the beginner level (its page test plays one: below).
        while (not hands.played and game == "eyeshield21") or who.count("away") < 3:
            if hands.game.position.outcome() is not None:
                break
            who.append(hands.step())
            dealt |= hands.on_slots()
            assert len(who) < 400, who
        computers = [line for line in hands.said if line.startswith("computer: ")]
        assert any("a face-down card, the one on its hand slot away-hand-" in line
                   for line in computers) == bool(hands.played), computers
        if game == "eyeshield21":  # its set-up: characters face down from its deck
            assert hands.swapped and hands.played
        cards = hands.game.position.card_set
        for line in computers:  # never a card of its hand named to the table
            assert "@" not in line or "?@" in line or "from the hand" in line, line
            for card in dealt:
                assert card not in line.split() and cards.copy(card).card.name not in line
        # the card it chose is the card recorded
        assert all(any(card in notation for notation in hands.game.notations())
                   for card in hands.played)
    finally:
        hands.close()


# ---- `masume play --computer` as a person runs it, its page in headless Chromium ----------


def post(url: str, path: str, body: dict) -> dict:
    """A POST to the table's server as the table's page makes it (``url``: its link)."""
    import json
    import urllib.request

    request = urllib.request.Request(at(url, path), data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        answer: dict = json.load(response)
        return answer


def replayed(rules: Any, moves: list) -> Any:
    """The position after the page's moves (each as the table wrote it)."""
    position = rules.start()
    for turn in moves:
        for text in turn["actions"]:
            position = position.apply(position.parse_action(text))
    return position


@pytest.mark.browser
def test_masume_play_against_the_computer_on_the_page(tmp_path: Path, chromium) -> None:
    """`masume play masume-tactics --simulate --computer away --level beginner`: the
    page's hint button lights an action for home and says it, the computer's actions
    are said in words and lit in its colour, the evaluation bar stands; the hands
    (the sim's, through the page's API) carry out what is lit, the die is the board's.
    At a phone's 400 px every step reads well (tests/page_checks.py)."""
    from browser import open_page
    from page_checks import readability_problems
    from playwright.sync_api import expect
    from test_play import Play, steps, wait_state

    rules = load_rules("masume-tactics")
    play = Play("masume-tactics", "--simulate", "--computer", "away", "--level", "beginner",
                "--http-port", "0", "--games-dir", str(tmp_path), stdin=subprocess.DEVNULL)
    problems: list[str] = []
    try:
        assert play.until("the computer plays ") == "the computer plays away (beginner)"
        url = play.until("web view: ").split(": ", 1)[1]
        wait_state(url, lambda s: s["link"]["connected"] and s["tracker"]["state"] == "in-sync")
        with open_page(chromium, url, width=400, height=900) as (page, errors):
            page.wait_for_selector("body[data-ready=true]")
            expect(page.locator("#advice-title")).to_have_text(
                "Computer: plays away (beginner)")
            # The bar says what the server judges (home has the kick-off: it may lead).
            expect(page.locator("#standing-text")).to_have_text(
                standing_text(wait_state(url, lambda s: s["advice"]["standing"])))
            problems += readability_problems(page, "start")

            def carry(before: Any, after: Any) -> None:
                lifts, places = steps(dict(before.layout()), dict(after.layout()))
                for square in lifts:
                    post(url, "api/sim/lift", {"square": square})
                for square, piece in places:
                    post(url, "api/sim/place", {"square": square, "piece": piece})

            computer_said = 0
            for _ in range(60):
                current = wait_state(url, lambda s: s["tracker"]["state"] == "in-sync"
                                     and (s["status"]["awaiting"] or s["advice"]["shown"]
                                          or (s["status"]["deciding"]
                                              or s["status"]["to_move"]) == "home"
                                          and not s["advice"]["thinking"]))
                position = replayed(rules, current["moves"])
                done = sum(len(t["actions"]) for t in current["moves"])
                if current["status"]["awaiting"] == "die":
                    post(url, "api/sim/roll", {})
                    rolled = wait_state(url, lambda s, done=done: sum(
                        len(t["actions"]) for t in s["moves"]) > done)
                    carry(position, replayed(rules, rolled["moves"]))
                    continue
                shown = current["advice"]["shown"]
                if shown is None or shown["kind"] != "computer":
                    page.click("#hint-button")
                    expect(page.locator("#computer-says")).to_contain_text("hint for home: ")
                    if done == 0:
                        problems += readability_problems(page, "hint")
                    shown = wait_state(url, lambda s: s["advice"]["shown"])["advice"]["shown"]
                else:
                    expect(page.locator("#computer-says")).to_contain_text(
                        f"computer: {shown['text']}")
                    computer_said += 1
                    if computer_said == 1:
                        problems += readability_problems(page, "computer")
                        shots = Path(os.environ.get("MASUME_SCREENSHOTS", tmp_path))
                        page.screenshot(path=str(shots / "computer-400.png"), full_page=True)
                colour = "#" + "".join(f"{v:02x}" for v in current["sides"][shown["side"]])
                for square in shown["put"]:
                    cell = page.locator(f'[data-cell="{square}"]')
                    expect(cell).to_have_attribute("data-led", colour)
                    expect(cell).to_have_attribute("data-pattern", "blink")
                action = position.parse_action(shown["text"].split(": ")[0])
                if position.apply(action).layout() == position.layout():
                    post(url, "api/act", {"action": position.notation(action)})
                else:
                    carry(position, position.apply(action))
                wait_state(url, lambda s, done=done: sum(
                    len(t["actions"]) for t in s["moves"]) > done)
                if computer_said >= 3:
                    break
            assert computer_said >= 3
            share = float(page.locator("#standing-bar").get_attribute("data-share"))
            assert 0.0 < share < 1.0
            assert errors == []
    finally:
        play.stop()
    printed = play.printed()
    assert "computer: " in printed and "hint for home: " in printed
    assert not problems, problems
    folder = next(tmp_path.glob("*masume-tactics*"))
    record = read_record(folder / "record.txt")
    assert record.headers["Computer"] == "away beginner"


def standing_text(state: dict[str, Any]) -> str:
    """What the page's evaluation bar should say for ``state``: the side whose share of
    the two values is more than 53 %, with that share, or "level"."""
    first, second = state["sides"]
    values = state["advice"]["standing"]
    share = values[first] / ((values[first] + values[second]) or 1)
    if abs(share - 0.5) < 0.03:
        return "level"
    percent = math.floor(100 * max(share, 1 - share) + 0.5)  # JavaScript's Math.round
    return f"{first if share > 0.5 else second} ({percent} %)"


def test_masume_record_review_names_legal_better_actions(tmp_path: Path) -> None:
    """`masume record review`: the computer's comments on a finished game's biggest
    mistakes, each a legal action where the one played stood."""
    from masume.ai import Level
    from masume.ai.review import mistakes
    from masume.records import replay, rules_for

    record_file = Path(__file__).parent / "records" / "masume-tactics" / "kick-off-and-goal.txt"
    record = read_record(record_file)
    game = replay(record, rules_for(record))
    # So many iterations a position, whatever the load (the time is only a bound).
    level = Level("review", seconds=HANG_S, iterations=60)
    found = mistakes(game.start, game.actions, level, random.Random(3), most=5, least_loss=0.0)
    positions = game.positions()
    assert found and len(found) <= 5
    assert [m.loss for m in found] == sorted((m.loss for m in found), reverse=True)
    for m in found:
        assert positions[m.index].is_legal(m.better) and m.better != m.played
        assert game.actions[m.index] == m.played
    out = subprocess.run([sys.executable, "-m", "masume.cli", "record", "review", "--seconds",
                          "0.05", "--seed", "1", str(record_file)],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith(f"{record_file}: 27 actions, 0.05 s of search a position\n")


@pytest.mark.browser
def test_the_computers_face_down_card_on_the_page(tmp_path: Path, chromium) -> None:
    """`masume play eyeshield21 --simulate --computer home`: the computer lays a character
    face down; the page shows a face-down card and where, names no card, and takes
    whichever card of its hand the person lays there."""
    from browser import open_page
    from playwright.sync_api import expect
    from test_play import Play, wait_state

    position = load_rules("eyeshield21").start()
    play = Play("eyeshield21", "--simulate", "--computer", "home", "--level", "beginner",
                "--http-port", "0", "--games-dir", str(tmp_path), stdin=subprocess.DEVNULL)
    try:
        url = play.until("web view: ").split(": ", 1)[1]
        current = wait_state(url, lambda s: s["advice"]["shown"] is not None)
        shown = current["advice"]["shown"]
        assert shown["kind"] == "computer" and shown["text"].startswith("?@")
        (cell,) = shown["put"]
        assert shown["text"] == f"?@{cell}: a face-down card on {cell}"
        with open_page(chromium, url, width=1100, height=900) as (page, errors):
            says = page.locator("#computer-says")
            expect(says).to_contain_text(f"computer: ?@{cell}: a face-down card on {cell}")
            expect(says.locator(".face-down")).to_have_count(1)
            # The person lays a card of the computer's hand there: any of them.
            cards = [a.copy for a in position.legal_actions()
                     if getattr(a, "cell", None) == cell]
            post(url, "api/sim/card", {"square": cell, "card": cards[-1]})
            done = wait_state(url, lambda s: s["moves"])
            assert done["moves"][0]["actions"] == [f"?@{cell}"]
            expect(page.locator("#moves")).to_contain_text(f"?@{cell}")
            assert errors == []
    finally:
        play.stop()
    assert f"computer: ?@{cell}: a face-down card on {cell}" in play.printed()


def test_a_failed_search_is_said_and_the_game_goes_on(tactics: Hands,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import masume.play.computer

    real = masume.play.computer.advise
    failures: list[int] = []

    def failing_once(position: Any, side: str, *args: Any) -> Any:
        if side == "away" and not failures:
            failures.append(1)
            raise RuntimeError("out of memory")
        return real(position, side, *args)

    monkeypatch.setattr(masume.play.computer, "advise", failing_once)
    while acting_side(tactics.game.position) != "away" or tactics.game.position.status().awaiting:
        tactics.step()
    tactics.wait(lambda: "the search failed" in tactics.session.state()["tracker"]["message"],
                 "the failure said")
    state = tactics.session.state()
    assert state["advice"]["error"] == ("computer: the search failed (RuntimeError: out of "
                                        "memory); make its action by hand, or ask for a hint")
    assert state["health"]["problem"] is None and state["advice"]["thinking"] is None
    assert any("the search failed" in line for line in tactics.said)
    # The players make its action by hand: taken as any action; the computer goes on.
    position = tactics.game.position
    count = len(tactics.game.actions)
    step = next(a for a in position.legal_actions()
                if "-" in position.notation(a) and a not in tactics.session.choices())
    tactics.carry(position.apply(step).layout())
    tactics.wait(lambda: len(tactics.game.actions) > count, "the action made by hand")
    assert tactics.game.actions[count] == step
    while tactics.step() != "away":
        pass
    assert failures == [1]


def test_a_search_that_chooses_an_illegal_action_is_said(tactics: Hands,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A search's bug (an action the rules refuse) is said as its failure, not lit, and
    not passed over in silence: the hint asked for would else never come."""
    import masume.play.computer
    from masume.ai import Advice

    def refused(position: Any, side: str, *args: Any) -> Any:
        return Advice(side, "nowhere", 0.5)

    monkeypatch.setattr(masume.play.computer, "advise", refused)
    home = acting_side(tactics.game.position)
    assert home == "home" and not tactics.game.position.is_legal("nowhere")
    tactics.session.hint()
    tactics.wait(lambda: "the rules refuse" in (tactics.session.state()["advice"]["error"] or ""),
                 "the failure said")
    assert tactics.session.state()["advice"]["error"] == (
        "hint: the search failed (RuntimeError: it chose 'nowhere', which the rules refuse "
        "here); play on")
    assert tactics.session.core.shown is None


@pytest.mark.parametrize(("args", "said"), [
    (["--computer", "nobody"], "error: --computer nobody: masume-tactics's sides are home, away"),
    (["--computer", "away", "--level", "grandmaster"],
     "error: unknown level 'grandmaster'; levels: beginner, casual, club, strong"),
])
def test_masume_play_refuses_an_unknown_side_or_level(args: list, said: str,
                                                      tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "masume.cli", "play", "masume-tactics",
                           "--no-web", "--games-dir", str(tmp_path), *args],
                          capture_output=True, text=True, check=False)
    assert (done.returncode, done.stderr.strip()) == (2, said)
    assert not list(tmp_path.iterdir())  # no game folder made


def play_attack_at_9(tmp_path: Path) -> tuple[Any, list[str], Path]:
    """`masume play magic-number-eleven --simulate --resume FOLDER` at 9 of 11 in away's
    attack, the computer away (the record's header), its hand SY24 and SY04 to be laid on
    its slots: the run (test_play.Play), the ids and names of those two cards, which
    nothing may show, and the game's folder."""
    from test_computer_hand import ATTACK_AT_9
    from test_play import Play

    start = load_rules("magic-number-eleven").from_text(ATTACK_AT_9)
    store = GameStore.new(tmp_path, "magic-number-eleven", {"Computer": "away club"})
    store.save(Game(start))
    cards = start.card_set
    hidden = [word for copy in ("SY24", "SY04") for word in (copy, cards.copy(copy).card.name)]
    return Play("magic-number-eleven", "--simulate", "--resume", str(store.folder),
                "--http-port", "0", "--games-dir", str(tmp_path),
                stdin=subprocess.DEVNULL), hidden, store.folder


@pytest.mark.browser
def test_the_computers_hand_on_its_slots_on_the_page(tmp_path: Path, chromium) -> None:
    """`masume play magic-number-eleven --simulate --resume FOLDER`, the computer away (the
    record's header): at 9 of 11 in its attack, the table asks for its two cards on its
    hand slots; laid face down there (SY24, 5 stars: line out; SY04, 2 stars: the magic
    number 11), it chooses SY04, and the page and the terminal name only its slot, with a
    face-down card. Another card laid there is flagged and taken back; the one chosen is
    recorded."""
    from browser import open_page
    from playwright.sync_api import expect
    from test_play import wait_state

    play, hidden, folder = play_attack_at_9(tmp_path)
    try:
        url = play.until("web view: ").split(": ", 1)[1]
        asked = wait_state(url, lambda s: "hand slots" in s["tracker"]["message"])
        assert ("computer: lay the away hand's 2 card(s) drawn face down on its free hand "
                "slots (away-hand-1 to away-hand-5)") in asked["tracker"]["message"]
        post(url, "api/sim/card", {"square": "away-hand-1", "card": "SY24"})
        post(url, "api/sim/card", {"square": "away-hand-2", "card": "SY04"})
        words = ("hand card on 2: a face-down card, the one on its hand slot away-hand-2, "
                 "laid face down on away-synergy-2")
        current = wait_state(url, lambda s: s["advice"]["shown"] is not None)
        shown = current["advice"]["shown"]
        assert shown["kind"] == "computer" and shown["text"] == words
        assert shown["take"] == ["away-hand-2"] and shown["put"] == ["away-synergy-2"]
        assert current["pieces"]["away-hand-2"] == ["card"]  # face down to the page
        with open_page(chromium, url, width=1100, height=900) as (page, errors):
            says = page.locator("#computer-says")
            expect(says).to_contain_text(f"computer: {words}")
            expect(says.locator(".face-down")).to_have_count(1)
            for where in ("#computer-says", "#board", "#moves"):
                text = page.locator(where).inner_text()
                assert not any(word in text for word in hidden), (where, text)
            # The other card of its hand laid there: flagged, taken back.
            post(url, "api/sim/lift", {"square": "away-hand-1"})
            post(url, "api/sim/card", {"square": "away-synergy-2", "card": "SY24"})
            flagged = wait_state(url, lambda s: NOT_THE_COMPUTERS in s["tracker"]["message"])
            assert "not the card on its hand slot away-hand-2" in flagged["tracker"]["message"]
            assert not any(word in flagged["tracker"]["message"] for word in hidden)
            assert flagged["moves"] == []
            expect(says).to_contain_text("not the card on its hand slot away-hand-2")
            # Put back, then the card chosen laid: the computer's action, recorded.
            post(url, "api/sim/lift", {"square": "away-synergy-2"})
            post(url, "api/sim/card", {"square": "away-hand-1", "card": "SY24"})
            wait_state(url, lambda s: s["tracker"]["state"] == "in-sync"
                       and (s["advice"]["shown"] or {}).get("text") == words)
            post(url, "api/sim/lift", {"square": "away-hand-2"})
            post(url, "api/sim/card", {"square": "away-synergy-2", "card": "SY04"})
            done = wait_state(url, lambda s: s["moves"])
            assert done["moves"][0]["actions"][0] == "hand card on 2"
            expect(page.locator("#moves")).to_contain_text("hand card on 2")
            assert errors == []
    finally:
        play.stop()
    assert f"computer: {words}" in play.printed()
    record = (folder / "record.txt").read_text()
    assert "hand SY04 on 2" in record
    assert not any(word in play.printed() for word in hidden)


@pytest.mark.browser
def test_no_page_shows_the_computers_hand(tmp_path: Path, chromium) -> None:
    """`masume play magic-number-eleven --simulate --resume FOLDER`, the computer away: the
    terminal prints no link for away (its page would show the computer's hand), no page
    offers one, and a page asked for as away is refused. With its two cards on its hand
    slots and its card lit, the state of the table's page, home's and the spectators'
    names neither card (id nor name), and home's page in Chromium shows none of them."""
    import json
    import urllib.error
    import urllib.request

    from browser import open_page
    from playwright.sync_api import expect
    from test_play import wait_state

    play, hidden, _folder = play_attack_at_9(tmp_path)
    try:
        play.until("web view for spectators: ")
        links = {line.split(": ", 1)[0]: line.split(": ", 1)[1] for line in play.lines
                 if line.startswith("web view")}
        assert set(links) == {"web view", "web view for home", "web view for spectators"}
        table, home, spectators = (links["web view"], links["web view for home"],
                                   links["web view for spectators"])
        wait_state(table, lambda s: "hand slots" in s["tracker"]["message"])
        post(table, "api/sim/card", {"square": "away-hand-1", "card": "SY24"})
        post(table, "api/sim/card", {"square": "away-hand-2", "card": "SY04"})
        wait_state(table, lambda s: s["advice"]["shown"] is not None)
        for url in (table, home, spectators):
            for path in ("api/state", "api/access"):
                with urllib.request.urlopen(at(url, path)) as response:
                    text = response.read().decode()
                assert not any(word in text for word in hidden), (url, path)
            with urllib.request.urlopen(at(url, "api/access")) as response:
                offered = {link["role"] for link in json.load(response)["links"]}
            assert "away" not in offered, offered
        assert wait_state(home, lambda s: s["view"]["viewer"] == "home")["pieces"][
            "away-hand-2"] == ["card"]
        base = table.split("?", 1)[0]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}api/state?as=away")
        assert refused.value.code == 403
        assert "away is the computer's side" in refused.value.read().decode()
        with open_page(chromium, home, width=1100, height=900) as (page, errors):
            page.wait_for_selector("body[data-ready=true]")
            expect(page.locator("#role")).to_have_text("this page: home")
            expect(page.locator("#computer-says .face-down")).to_have_count(1)
            expect(page.locator('#links [data-role="home"]')).to_have_count(1)
            expect(page.locator('#links [data-role="away"]')).to_have_count(0)
            text = page.locator("body").inner_text()
            assert not any(word in text for word in hidden), text
            assert not any(word in page.content() for word in hidden)
            assert errors == []
    finally:
        play.stop()
    assert "web view for away" not in play.printed()
    assert not any(word in play.printed() for word in hidden)


def test_a_computers_hand_past_its_slots_is_said(make_sim: Any, tmp_path: Path) -> None:
    """Eyeshield 21, the computer (away) to act in its main phase with nine cards in hand
    (the seed's limit of five is kept only at its turn's end: 「上限は 5枚(自ターン内に調整
    有り)」), eight hand slots: the table asks for eight, then says the ninth is unread and
    the computer does not know it; the computer buys no card more (its hand would grow
    further past its slots), and what it lights is a legal action."""
    from test_computer_hand import E21_MAIN

    start = load_rules("eyeshield21").from_text(E21_MAIN.format(deck=23, hand=9))
    hands = Hands("eyeshield21", make_sim, tmp_path, "away", Game(start))
    try:
        shown = hands.lit("computer")
        assert len(hands.on_slots()) == 8
        said = ("computer: away's hand holds 9 cards, 1 past its 8 slots: keep the card(s) "
                "past them face down beside the slots, unread; the computer does not know "
                "them, and a card it plays from them is said as one kept beside its slots")
        assert said in hands.said
        action = shown.action if shown is not None else hands.game.actions[-1]
        assert start.notation(action) != "buy" and start.is_legal(action)
        if shown is not None and from_hand(start, start.notation(action))[1] \
                and not shown.card:  # its unread card: said so, never named
            assert ("a face-down card, one of those kept beside its slots (unread), laid "
                    in shown.words), shown.words
    finally:
        hands.close()


#: Magic Number Eleven, home's Star ball winner (ST05) just placed, its instant effect
#: to use or not: 「相手の手札のシナジーカードを裏面のまま1枚選んで捨てる」; away (the
#: computer) holds five cards.
BALL_WINNER = (
    "mne1;cards=magic-number-eleven-demo;first=home;shootout=0;phase=effect;half=1;turn=0;"
    "additional=0;ran_out=0;field=A1d:A03,A2a:A06,A2c:A02,A2e:A01,A3b:A04,A3e:A07,A4a:A08,"
    "A4d:ST08,H1b:H02,H2a:ST03,H2c:H07,H2e:H06,H3a:ST05,H3c:H04,H3e:H05,H4a:H09,H4d:ST12;"
    "unplaced=H08|A09,A10;bench=home-bench-1:H03:1,home-bench-2:H10:1,home-bench-3:H01:1|"
    "away-bench-1:ST04:1,away-bench-2:ST02:1,away-bench-3:A05:1;subs=3|3;used=A1d^;"
    "initiative=7;score=0|0;hands=2|5;deck=14;discard=SY02,SY08,SY13,SY17;discard_unknown=0;"
    "areas=|;team_symbols=2|1;placed=H3a;shot=;penalty=|;stars=ST05,ST12,ST03|ST02,ST04,ST08;"
    "revealed=;boxed=ST01,ST06,ST07;ready=0|0;shootout_kicks=|;last=;shown=0|0;then=;"
    "resigned=-1")


def test_a_discard_nobody_sees_from_the_computers_hand(make_sim: Any, tmp_path: Path) -> None:
    """Home's effect discards one of the computer's five cards unseen: the table says that
    one went to the discard pile unseen and to take any one, without looking, off its
    hand slots onto the discard pile (not which: nobody may know), naming no card; done
    so, the computer plays on holding the four left."""
    start = load_rules("magic-number-eleven").from_text(BALL_WINNER)
    hands = Hands("magic-number-eleven", make_sim, tmp_path, "away", Game(start))
    try:
        hands.deal()
        laid = hands.on_slots()
        assert len(laid) == 5
        hands.choose("effect")
        said = ("computer: away's hand holds 4 card(s) and its hand slots 5: 1 went to the "
                "discard pile unseen: take any 1 of them off its hand slots (away-hand-1 to "
                "away-hand-5), without looking, and lay it face down on the discard pile")
        hands.wait(lambda: hands.session.core.notice == said, "the discard said")
        message = hands.session.state()["tracker"]["message"]
        assert said in message
        cards = start.card_set
        assert not any(card in message or cards.copy(card).card.name in message
                       for card in laid)
        slot = hands.slots()[2]
        piece = hands.sim.lift(slot)
        hands.sim.place("synergy-discard", piece)
        shown = hands.lit("computer")  # (a card it drew since: laid on a free slot)
        assert said not in hands.session.core.notice
        assert piece not in hands.sim.table.stacks.get(slot, [])
        left = laid - {cards.by_tag(piece[4:]).id}
        assert len(left) == 4 and left <= hands.on_slots()
        assert hands.game.notations()[0] == "effect"
        if shown is not None and shown.card:  # a card of its hand, held
            assert shown.card in hands.on_slots()
    finally:
        hands.close()


def _named(word: str, text: str) -> bool:
    """Whether ``text`` names ``word`` as a whole (a copy id "S30.2", a card's name): not
    as a part of another word or id ("Jin" in "Jinx")."""
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


@pytest.mark.browser
def test_the_eyeshield21_computers_hand_on_the_page(make_sim: Any, tmp_path: Path,
                                                    chromium) -> None:
    """Eyeshield 21 against the computer (away) on the simulated mat, its web view served
    over the table: the players play until the computer plays a card of its hand from a
    hand slot. The table's page and home's show its slot, beside a face-down card, and
    name no card of its hand (the state neither); another card of its hand laid where
    the lights show is flagged and taken back; put back, the card chosen is laid: its
    action, recorded."""
    from browser import open_page
    from playwright.sync_api import expect

    from masume.web.server import serve

    hands = Hands("eyeshield21", make_sim, tmp_path, "away")
    web = serve(hands.session)

    def laid_on_slots() -> dict[str, str]:
        cards = hands.game.position.card_set
        return {cards.by_tag(stack[-1][4:]).id: slot for slot in hands.slots()
                if (stack := hands.sim.table.stacks.get(slot))}

    def instead(shown: Any) -> str | None:
        """The slot of another card of its hand that the rules would take where its card
        is lit (the same action with that card), if any."""
        position = hands.game.position
        text = position.notation(shown.action)
        for card, slot in laid_on_slots().items():
            try:
                if card != shown.card and position.is_legal(
                        position.parse_action(text.replace(shown.card, card))):
                    return slot
            except ValueError:  # (IllegalAction, NotationError: not one the rules take)
                continue
        return None

    try:
        shown = other = None
        for _ in range(400):
            position = hands.game.position
            if position.outcome() is not None:
                break
            if not position.status().awaiting and acting_side(position) == "away":
                shown = hands.lit("computer")
                if shown is not None and shown.card and (other := instead(shown)):
                    break
            hands.step()
        assert shown is not None and shown.card and other, hands.game.notations()
        slot, (cell,) = shown.slot, shown.lit.put
        held = hands.on_slots()
        position = hands.game.position
        cards = position.card_set
        # A held copy's id is secret; its card's name only while no other copy of that
        # card is public (the demo decks hold up to three): face up on the mat, put away,
        # or named by an action played.
        played = " ".join(hands.game.notations())
        public = ({copy for _, copy, face_up in position.cells if face_up}
                  | {copy for gone in position.gone for copy in gone}
                  | {copy for deck in position.table.decks for copy in deck.copies
                     if _named(copy, played)})
        public_names = {cards.copy(copy).card.name for copy in public - held}
        hidden = [*held, *({cards.copy(copy).card.name for copy in held} - public_names)]
        assert shown.words.startswith("?@") or "?" in shown.words.split(":")[0]
        assert f"a face-down card, the one on its hand slot {slot}, laid " in shown.words
        assert shown.words.endswith(f" on {cell}")
        for role in ("table", "home", "spectator"):
            with urllib.request.urlopen(at(web.link(role), "api/state")) as response:
                text = response.read().decode()
            leaked = {word: text[max(0, text.index(word) - 80):text.index(word) + 80]
                      for word in hidden if _named(word, text)}
            assert not leaked, (role, leaked)
            assert json.loads(text)["advice"]["shown"]["text"] == shown.words
        with open_page(chromium, web.link("home"), width=1100, height=900) as (page, errors):
            page.wait_for_selector("body[data-ready=true]")
            says = page.locator("#computer-says")
            expect(says).to_contain_text(f"computer: {shown.words}")
            expect(says.locator(".face-down")).to_have_count(1)
            for where in ("#computer-says", "#board", "#moves"):
                text = page.locator(where).inner_text()
                assert not any(_named(word, text) for word in hidden), (where, text)
            # Another card of its hand laid there: flagged, taken back.
            count = len(hands.game.actions)
            wrong = hands.sim.lift(other)
            hands.sim.place(cell, wrong)
            hands.wait(lambda: NOT_THE_COMPUTERS in hands.session.core.notice, "the flag")
            message = hands.session.state()["tracker"]["message"]
            assert f"not the card on its hand slot {slot}" in message
            assert not any(_named(word, message) for word in hidden), message
            expect(says).to_contain_text(f"not the card on its hand slot {slot}")
            assert len(hands.game.actions) == count
            # Put back, then the card chosen laid: the computer's action, recorded.
            hands.sim.lift(cell)
            hands.sim.place(other, wrong)
            hands.wait(lambda: hands.session.tracker.view.state == "in-sync"
                       and hands.session.core.shown is not None
                       and hands.session.core.shown.words == shown.words, "lit again")
            hands.sim.place(cell, hands.sim.lift(slot))
            hands.wait(lambda: len(hands.game.actions) > count, "its card recorded")
            assert hands.game.actions[count] == shown.action
            expect(page.locator("#moves")).to_contain_text(f"@{cell}")
            assert errors == []
    finally:
        web.stop()
        hands.close()
    assert shown.card in (store := (hands.store.folder / "record.txt").read_text()), store
