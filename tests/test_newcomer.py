"""A newcomer's first minutes at each game's table, in headless Chromium (issue 16):
the real TableSession on the simulated board (the firmware on the MicroPython VM over
a real pty), its page served as `masume play` serves it, at 1100 px and at a phone's
400 px. Set-up from an empty board, a legal move, an illegal move with its reason and
lit fix, a takeback, a die rolled at the wrong moment, resign (asked first) and a new
game. Screenshots go to ``$MASUME_SCREENSHOTS`` (default: the test's tmp folder), for
a person to read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_web import launch_chromium
from waiting import HANG_S

from masume.boards import load_board
from masume.games import load_rules
from masume.link import BoardSession, SerialTransport
from masume.play.cards import set_up
from masume.play.table import TableSession
from masume.rules import Game
from masume.storage import GameStore

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GAMES = ["soccer-shogi", "masume-tactics", "shogi-soccer", "eyeshield21", "magic-number-eleven"]

#: A legal move and an illegal one, by hand (from, to), where the game starts with one.
MOVES = {
    "soccer-shogi": (("A7", "A6"), ("A7", "A3")),
    "masume-tactics": (None, ("G2", "G10")),
}


def wait(check: Callable[[], bool], what: str, table: TableSession) -> None:
    deadline = time.monotonic() + HANG_S
    while not check():
        assert time.monotonic() < deadline, f"waited for {what}: {table.state()['tracker']}"
        time.sleep(0.05)


@pytest.mark.parametrize("width", [1100, 400])
@pytest.mark.parametrize("game", GAMES)
def test_a_newcomers_first_minutes(game: str, width: int, make_sim, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    from masume.web.server import serve

    shots = Path(os.environ.get("MASUME_SCREENSHOTS", tmp_path / "shots"))
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
        with sync_playwright() as p:
            browser = launch_chromium(p)
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.on("dialog", lambda dialog: dialog.accept())  # "Start a new game?"
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(web.link("table"))
            expect(page.locator("body[data-ready=true]")).to_have_count(1)

            def shot(step: str) -> None:
                page.screenshot(path=str(shots / f"{game}-{width}-{step}.png"), full_page=True)

            tracker = page.locator("#tracker")
            # 1. An empty board: what to set up, where (lit white, blinking).
            wait(lambda: link.connected.is_set(), "the board", table)
            expect(tracker).to_contain_text("set up the pieces on the lit squares")
            assert any(m.startswith("set up the pieces") for m in said)
            expect(page.locator("#legend")).to_have_count(1)
            shot("1-set-up")
            for square, piece in set_up(dict(table.game.position.layout()), table.game.position):
                sim.place(square, piece)
            wait(lambda: table.tracker.view.state == "in-sync", "the set-up read", table)
            expect(page.locator("#conn")).to_have_attribute("data-conn", "live")

            legal, illegal = MOVES.get(game, (None, None))
            # 2. A legal move, by the page's hands.
            if legal is not None:
                page.locator(f'[data-cell="{legal[0]}"]').click()
                page.locator(f'[data-cell="{legal[1]}"]').click()
                wait(lambda: len(table.game.actions) == 1, "the legal move", table)
                shot("2-legal-move")
                # 3. A takeback: the page says the hand movements.
                page.locator('[data-button="takeback"]').click()
                expect(tracker).to_contain_text(f"take back {legal[0]}-{legal[1]}: move ")
                shot("3-takeback")
                page.locator(f'[data-cell="{legal[1]}"]').click()
                page.locator(f'[data-cell="{legal[0]}"]').click()
                wait(lambda: table.tracker.view.state == "in-sync" and not table.game.actions,
                     "the board put back", table)
            elif table.choices():
                # A game that begins with a choice (a system, a card): made on the page.
                page.locator("#choices [data-choice]").first.click()
                wait(lambda: len(table.game.actions) == 1, "the choice", table)
                shot("2-choice")
            # 4. An illegal move: its reason and the lit fix.
            if illegal is not None:
                page.locator(f'[data-cell="{illegal[0]}"]').click()
                page.locator(f'[data-cell="{illegal[1]}"]').click()
                expect(tracker).to_contain_text("to put it right: move")
                shot("4-illegal-move")
                page.locator(f'[data-cell="{illegal[1]}"]').click()
                page.locator(f'[data-cell="{illegal[0]}"]').click()
                wait(lambda: table.tracker.view.state == "in-sync", "the fix", table)
            # 5. A die rolled at the wrong moment (the die tray's roll, or its button).
            if board.die:
                rolled = page.locator("#roll")
                if rolled.is_visible():
                    rolled.click()
                    expect(tracker).to_contain_text("ignored:")
                    shot("5-wrong-roll")
            # 6. Resign, asked first, then a new game.
            if page.locator('[data-button="resign"]').count():
                page.locator('[data-button="resign"]').click()
                expect(tracker).to_contain_text("press resign again to resign")
                shot("6-resign-asked")
                page.locator('[data-button="resign"]').click()
                expect(page.locator("#outcome")).to_contain_text("resignation")
                expect(page.locator("#new-game")).to_be_visible()
                shot("7-game-over")
                page.locator("#new-game").click()
                expect(page.locator("#outcome")).to_be_hidden()
                wait(lambda: table.store is not store, "the new game", table)
                shot("8-new-game")
            # 7. The cable pulled: the pill turns red.
            sim.close()
            expect(page.locator("#conn")).to_have_attribute("data-conn", "lost")
            shot("9-link-lost")
            assert not errors, errors
            _tap_targets(page, width)
            browser.close()
    finally:
        web.stop()
        table.close()
        link.close()


def _tap_targets(page: Any, width: int) -> None:
    """At a phone's width, the buttons a player taps are at least 40 px tall."""
    if width > 500:
        return
    small = page.evaluate("""() => [...document.querySelectorAll('#buttons button, #new-game')]
        .filter((b) => b.offsetParent && b.getBoundingClientRect().height < 40)
        .map((b) => b.textContent)""")
    assert not small, f"buttons too small to tap at {width} px: {small}"
