"""A newcomer's first minutes at each game's table, in headless Chromium (issue 16):
the real TableSession on the simulated board (the firmware on the MicroPython VM over
a real pty), its page served as `masume play` serves it, at 1100 px and at a phone's
400 px. Set-up from an empty board, a legal move, a takeback, an illegal move with
its reason and lit fix, a die rolled at the wrong moment (the die games), resign
(asked first), game over with a new game, and the cable pulled.

The page's buttons, choices and card picker are clicked as a person would; where a
hand moves pieces on the board it goes through the simulated board (the same sensor
path as a hand on a real one). At 400 px every step is measured for contrast and
target size (tests/page_checks.py).

Screenshots go to ``$MASUME_SCREENSHOTS`` (default: the test's tmp folder), named
``GAME-WIDTH-N-STEP.png``, for a person to read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from browser import open_page
from page_checks import readability_problems
from waiting import until

from masume.boards import load_board
from masume.games import load_rules
from masume.link import BoardSession, SerialTransport
from masume.play.cards import set_up
from masume.play.table import TableSession
from masume.rules import Game
from masume.storage import GameStore

pytestmark = [pytest.mark.browser, pytest.mark.slow]

#: A hand step's guard (ms): the page asks the table as soon as it is clicked, so this is
#: no deadline a run is meant to approach, only the end of a wait that would not end.
HAND_STEP_MS = 120_000

GAMES = ["soccer-shogi", "masume-tactics", "shogi-soccer", "eyeshield21", "magic-number-eleven"]


@dataclass
class Walk:
    """One newcomer at one table: the page, the table, and what was seen."""

    game: str
    width: int
    page: Any
    table: TableSession
    sim: Any
    shots: Path
    problems: list[str] = field(default_factory=list)
    taken: list[str] = field(default_factory=list)
    #: The page's requests to the host and their answers, since a hand step's click.
    requests: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        def answered(response: Any) -> None:
            if "/api/" in response.url:
                self.requests.append(f"{response.request.method} {response.url.split('?')[0]}"
                                     f" -> {response.status}")

        self.page.on("response", answered)
        self.page.on("requestfailed", lambda request: self.requests.append(
            f"{request.method} {request.url.split('?')[0]} failed: {request.failure}"))

    def shot(self, step: str) -> None:
        """A screenshot of the whole page; at a phone's width, its readability measured."""
        name = f"{self.game}-{self.width}-{len(self.taken) + 1}-{step}.png"
        self.page.screenshot(path=str(self.shots / name), full_page=True)
        self.taken.append(name)
        if self.width <= 500:
            self.problems += readability_problems(self.page, step)

    def wait(self, check: Callable[[], bool], what: str) -> None:
        until(check, f"{what} ({self.table.state()['tracker']})")

    def actions(self) -> int:
        return len(self.table.game.actions)

    def in_sync(self, actions: int) -> None:
        self.wait(lambda: self.table.tracker.view.state == "in-sync" and self.actions() == actions,
                  f"the board in sync after {actions} actions")

    def click(self, selector: str) -> None:
        self.page.locator(selector).first.click()

    def says(self, text: str) -> None:
        from playwright.sync_api import expect

        expect(self.page.locator("#tracker")).to_contain_text(text)

    def move(self, frm: str, to: str) -> None:
        """A piece carried from one square to another with the page's hands: in the
        hand before it goes down (a click on the next square before the page has the
        piece in hand would be a click on an empty square), and out of it after."""
        self.hand_step(frm, 1, f"the piece on {frm} in the page's hand")
        self.hand_step(to, 0, f"the piece in hand put down on {to}")

    def hand_step(self, cell: str, held: int, what: str) -> None:
        """A click on ``cell`` (a piece lifted into the hand: ``held`` 1; the one in
        hand put down: 0), then the page's hand holding ``held`` pieces.

        First the page shows the square as a person sees it before they click: the
        piece on it, or empty. The page draws what the table sent it, a moment after
        the table has it: a click on a square the page does not yet show a piece on
        lifts nothing. Then the click, and a wait that ends at the first of: the hand
        so, a menu opened on the square instead, a new error shown. Each wait is
        bounded at HAND_STEP_MS (a guard far above any load seen); short of the hand
        so, the step fails with what the page showed (this test once waited 600 s for
        a hand to empty, and said nothing more)."""
        from playwright.sync_api import TimeoutError as PageTimeout

        looks = "with a piece" if held else "empty"
        try:
            self.page.wait_for_function(
                """([cell, held]) => {
                     const pieces = document.querySelector(`[data-cell="${cell}"]`)
                       .dataset.pieces || "";
                     return held ? pieces !== "" : pieces === "";
                   }""", arg=[cell, held], timeout=HAND_STEP_MS)
        except PageTimeout:
            raise AssertionError(f"the page never showed {cell} {looks}, to click it for "
                                 f"{what}:\n" + self.what_the_page_shows()) from None
        error_before = self.page.inner_text("#error")
        self.requests.clear()
        self.click(f'[data-cell="{cell}"]')
        try:
            self.page.wait_for_function(
                """([held, before]) => {
                     const error = document.getElementById("error");
                     return document.querySelectorAll("#hand .hand-piece").length === held
                       || !document.getElementById("cell-menu").hidden
                       || (!error.hidden && error.textContent !== before);
                   }""", arg=[held, error_before], timeout=HAND_STEP_MS)
        except PageTimeout:
            pass  # said below, with the rest
        if self.page.locator("#hand .hand-piece").count() != held:
            raise AssertionError(f"{what} never came after the click on {cell} (shown "
                                 f"{looks}):\n" + self.what_the_page_shows())

    def what_the_page_shows(self) -> str:
        """The page's error, its cell menu, its hand and board (the cells as the page
        drew them) beside the simulated table's stacks, and the requests since the click."""
        page = self.page.evaluate("""() => {
            const error = document.getElementById("error");
            const menu = document.getElementById("cell-menu");
            const cells = {};
            for (const c of document.querySelectorAll("#board [data-cell][data-pieces]")) {
              if (c.dataset.pieces) cells[c.dataset.cell] = c.dataset.pieces.split(" ");
            }
            return {
              error: error.hidden ? null : error.textContent,
              menu: menu.hidden ? null
                : [...menu.querySelectorAll("button")].map((b) => b.textContent),
              hand: [...document.querySelectorAll("#hand .hand-piece")].map(
                (b) => b.dataset.piece + (b.classList.contains("selected") ? " (chosen)" : "")),
              cells,
              conn: document.getElementById("conn").dataset.conn,
            };
        }""")
        stacks = {square: list(stack) for square, stack in self.sim.table.stacks.items() if stack}
        differ = sorted(sq for sq in set(page["cells"]) | set(stacks)
                        if page["cells"].get(sq, []) != stacks.get(sq, []))
        menu = f"open: {page['menu']}" if page["menu"] else "closed"
        return "\n".join([
            f"  the page's error: {page['error']!r}",
            f"  the page's cell menu: {menu}",
            f"  the page's hand: {page['hand']}",
            f"  the page's board: {page['cells']}",
            f"  the simulated table's stacks: {stacks}",
            f"  squares where they differ: {differ or 'none'}",
            f"  the page's link to the host: {page['conn']}",
            f"  requests since the click: {self.requests or 'none'}",
            f"  the tracker: {self.table.state()['tracker']}",
        ])


# ---- each game's first moves: (a legal move, its takeback put right, an illegal move
# put right), as a newcomer makes them ---------------------------------------------------


def soccer_shogi(w: Walk) -> None:
    w.move("A7", "A6")
    w.wait(lambda: w.actions() == 1, "the legal move")
    w.shot("legal-move")
    w.click('[data-button="takeback"]')
    w.says("take back A7-A6: move blue from A6 to A7")
    w.shot("takeback")
    w.move("A6", "A7")
    w.in_sync(0)
    w.move("A7", "A3")
    w.says("A7-A3 is not legal")
    w.says("to put it right: move blue from A3 to A7")
    w.shot("illegal-move")
    # Put right: the piece lifted, the long message gives way to shorter ones, and the
    # board stays where it was under the finger on its way to A7 (it once moved up
    # between the press and the release of the click on A7 at a phone's width, and
    # the click fell on no square).
    board_at = w.page.locator("#board").bounding_box()
    w.move("A3", "A7")
    w.in_sync(0)
    from playwright.sync_api import expect

    expect(w.page.locator("#tracker")).to_have_class(re.compile(r"\bquiet\b"))
    assert w.page.locator("#board").bounding_box() == board_at


def masume_tactics(w: Walk) -> None:
    from playwright.sync_api import expect

    if w.width <= 500:  # a phone: the coordinates along the edges, not in every square
        board = w.page.locator("#board")
        expect(board.locator('[data-cell="A1"] .coord-file')).to_have_text("A")
        expect(board.locator('[data-cell="A1"] .coord-rank')).to_have_text("1")
        expect(board.locator('[data-cell="G1"] .coord-file')).to_have_text("G")  # not the goal's
        expect(board.locator('[data-cell="F0"] .coord-rank')).to_have_text("0")
        expect(board.locator('[data-cell="A16"] .coord-rank')).to_be_visible()
        expect(board.locator('[data-cell="G8"] .cell-name')).to_be_hidden()
    # The die rolled before anyone kicked: refused, with what the game waits for.
    w.click("#roll")
    w.says("die roll")
    w.says("the game is not waiting for a roll")
    w.shot("wrong-roll")
    # The kick-off: inside called, the ball put down one square north.
    w.click('[data-button="inside"]')
    w.says("inside: put the pieces down on a lit square")
    w.shot("kick-called")
    kicker = w.table.sim_lift("G8")
    w.table.sim_lift("G8")
    w.table.sim_place("G8", kicker)
    w.table.sim_place("G9", "ball")
    w.wait(lambda: w.actions() == 1, "the kick")
    w.shot("legal-move")
    w.click('[data-button="takeback"]')
    w.says("take back G8 inside N1: move ball from G9 to G8")
    w.shot("takeback")
    w.table.sim_lift("G9")
    w.table.sim_lift("G8")
    w.table.sim_place("G8", "ball")
    w.table.sim_place("G8", kicker)
    w.in_sync(0)
    w.move("G2", "G10")
    w.says("is not legal")
    w.says("to put it right: move home-1 from G10 to G2")
    w.shot("illegal-move")
    w.move("G10", "G2")
    w.in_sync(0)


def shogi_soccer(w: Walk) -> None:
    w.click("#choices [data-choice]")  # gote declares a system
    w.wait(lambda: w.actions() == 1, "the system")
    w.table.sim_place("5-K", "sente-king")
    w.wait(lambda: w.actions() == 2, "the king set up")
    w.shot("legal-move")
    w.click('[data-button="takeback"]')
    w.says("take sente-king off 5-K")
    w.shot("takeback")
    w.table.sim_lift("5-K")
    w.in_sync(1)
    w.table.sim_place("1-A", "sente-king")
    w.says("sente-king may not go on 1-A now; it may go on 5-K")
    w.says("to put it right: take sente-king off 1-A")
    w.shot("illegal-move")
    w.table.sim_lift("1-A")
    w.in_sync(1)


def eyeshield21(w: Walk) -> None:
    # A character laid face down with the card picker.
    w.click('#card-list [data-card="F01.1"]')
    w.click('[data-cell="home-character-1"]')
    w.wait(lambda: w.actions() == 1, "the character laid")
    w.shot("legal-move")
    w.click('[data-button="takeback"]')
    w.says("take back ?@home-character-1: take the card off home-character-1")
    w.shot("takeback")
    w.table.sim_lift("home-character-1")
    w.in_sync(0)
    w.table.sim_place_card("away-character-1", "F02.1")
    w.says("it may go to home-character-1")
    w.says("to put it right: take the card off away-character-1")
    w.shot("illegal-move")
    w.table.sim_lift("away-character-1")
    w.in_sync(0)
    # Three characters laid: the deal, lit where the guts go.
    for k, card in enumerate(("F01.1", "F02.1", "F03.1"), start=1):
        w.table.sim_place_card(f"home-character-{k}", card)
        w.wait(lambda k=k: w.actions() == k, f"character {k}")
    from playwright.sync_api import expect

    expect(w.page.locator("#message")).to_contain_text("face down on home-guts (lit)")
    w.shot("deal")


def magic_number_eleven(w: Walk) -> None:
    w.click("#choices [data-choice]")  # away reveals a star
    w.wait(lambda: w.actions() == 1, "the star revealed")
    w.shot("legal-move")
    w.click('[data-button="takeback"]')
    w.wait(lambda: w.actions() == 0, "the reveal taken back")
    w.says("took back reveal ST01: nothing to move on the board")
    w.shot("takeback")
    w.table.sim_place_card("H4a", "H01")
    w.says("not now: star draft round 1")
    w.says("to put it right: take the card off H4a")
    from playwright.sync_api import expect

    key = w.page.locator("#key")
    expect(key).to_contain_text("whose turn: away's lamp")
    expect(key).to_contain_text("initiative: lamp 4 of 7: home normal, away normal")
    w.shot("illegal-move")
    w.table.sim_lift("H4a")
    w.in_sync(0)


FIRST_MOVES = {"soccer-shogi": soccer_shogi, "masume-tactics": masume_tactics,
               "shogi-soccer": shogi_soccer, "eyeshield21": eyeshield21,
               "magic-number-eleven": magic_number_eleven}


@pytest.mark.parametrize("width", [1100, 400])
@pytest.mark.parametrize("game", GAMES)
def test_a_newcomers_first_minutes(game: str, width: int, chromium: Any, make_sim,
                                   tmp_path: Path) -> None:
    from playwright.sync_api import expect

    from masume.web.server import serve

    shots = Path(os.environ.get("MASUME_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    rules = load_rules(game)
    board = load_board(rules.board)
    sim = make_sim(board.id)
    link = BoardSession(SerialTransport(sim.port), expect=board.id,
                        resolve=lambda _id: board).start()
    said: list[str] = []
    store = GameStore.new(tmp_path / "games", game, {})
    table = TableSession(rules, board, link, game=Game(rules.start()), store=store, sim=sim,
                         on_message=said.append).start()
    web = serve(table)
    try:
        with open_page(chromium, web.link("table"), width=width, height=900) as (page, errors):
            page.on("dialog", lambda dialog: dialog.accept())  # "Start a new game?"
            expect(page.locator("body[data-ready=true]")).to_have_count(1)
            w = Walk(game, width, page, table, sim, shots)

            # An empty board: what to set up, where (lit white, blinking).
            until(link.connected.is_set, "the board")
            w.says("set up the pieces on the lit squares")
            assert any(m.startswith("set up the pieces") for m in said)
            expect(page.locator("#legend")).to_have_count(1)
            w.shot("set-up")
            for square, piece in set_up(dict(table.game.position.layout()), table.game.position):
                sim.place(square, piece)
            w.in_sync(0)
            expect(page.locator("#conn")).to_have_attribute("data-conn", "live")

            FIRST_MOVES[game](w)
            # The key and the score in people's words: no lamp's or pile's cell name where
            # the game's legend has a word for it, and what the score counts.
            legend = table.game.position.legend
            key = page.inner_text("#key")
            named = [c for c in legend.places if re.search(rf"(?<![\w-]){re.escape(c)}(?![\w-])", key)]
            assert not named, (named, key)
            expect(page.locator("#score-label")).to_have_text(legend.score)

            # Resign, asked first; the result, the score and a new game.
            w.click('[data-button="resign"]')
            w.says("press resign again to resign")
            w.shot("resign-asked")
            w.click('[data-button="resign"]')
            expect(page.locator("#outcome")).to_contain_text("resignation")
            expect(page.locator("#outcome .final-score")).to_contain_text(f"{legend.score}:")
            expect(page.locator("#new-game")).to_be_visible()
            expect(page.locator("#turn")).to_have_text("nobody: the game is over")
            expect(page.locator("#choices-card")).to_be_hidden()  # nothing left to choose
            # Nothing left to resign or confirm; takeback goes back into the game.
            # (a card mat's confirm buttons are named for a side: confirm-home)
            expect(page.locator('[data-button="resign"]')).to_be_disabled()
            expect(page.locator('[data-button^="confirm"]:enabled')).to_have_count(0)
            expect(page.locator('[data-button="takeback"]')).to_be_enabled()
            w.shot("game-over")
            w.click("#new-game")
            expect(page.locator("#outcome")).to_be_hidden()
            until(lambda: table.store is not store, "the new game")
            w.shot("new-game")

            # The cable pulled: the pill turns red.
            sim.close()
            expect(page.locator("#conn")).to_have_attribute("data-conn", "lost")
            w.shot("link-lost")
            assert not errors, errors
            assert not w.problems, "\n".join(w.problems)
    finally:
        web.stop()
        table.close()
        link.close()


def test_magic_number_elevens_card_edge_symbols_are_drawn(chromium: Any, make_sim,
                                                          tmp_path: Path) -> None:
    """A player card laid on the field shows its half symbols on its two cells' edges,
    turned with its team (home's front north), each a glyph named on hover."""
    from playwright.sync_api import expect

    from masume.web.server import serve

    shots = Path(os.environ.get("MASUME_SCREENSHOTS") or tmp_path / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    rules = load_rules("magic-number-eleven")
    board = load_board(rules.board)
    start = rules.start(home_stars="ST01/ST04/ST07", away_stars="ST02/ST05/ST08",
                        home_bench="H08/H09/H10", away_bench="A08/A09/A10")
    sim = make_sim(board.id)
    for square, piece in set_up(dict(start.layout()), start):
        sim.place(square, piece)
    link = BoardSession(SerialTransport(sim.port), expect=board.id,
                        resolve=lambda _id: board).start()
    table = TableSession(rules, board, link, game=Game(start), sim=sim).start()
    web = serve(table)
    try:
        with open_page(chromium, web.link("table"), width=1100, height=900) as (page, _):
            until(lambda: table.tracker.view.state == "in-sync" and link.connected.is_set(),
                  "the set-up read")
            table.sim_place_card("H2b", "H01")  # H01: top shot/shot, bottom shot/link, crack|shot
            until(lambda: len(table.game.actions) == 1, "the card laid")
            marks = {"H2b": {"n": "shot", "s": "shot", "w": "crack"},
                     "H2c": {"n": "shot", "s": "link", "e": "shot"}}
            for cell, edges in marks.items():
                for edge, name in edges.items():
                    mark = page.locator(f'[data-cell="{cell}"] .mark-{edge}[data-mark="{name}"]')
                    expect(mark).to_have_count(1)
                    expect(mark).to_have_attribute("title", re.compile(f"^{name} "))
            page.screenshot(path=str(shots / "magic-number-eleven-1100-symbols.png"), full_page=True)
            # Flipped, the compass turns round.
            page.locator("#flip").click()
            expect(page.locator('[data-cell="H2b"] .mark-w[data-mark="crack"]')).to_have_count(0)
            expect(page.locator('[data-cell="H2b"] .mark-e[data-mark="crack"]')).to_have_count(1)
            page.locator("#flip").click()
    finally:
        web.stop()
        table.close()
        link.close()
