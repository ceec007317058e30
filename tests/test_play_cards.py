"""`masume play` for the card games on the simulated mat, played in headless
Chromium: cards put down through the card picker, choices clicked, the legal zones
lit, each player's page hiding the other's face-down cards, the record saved."""

from __future__ import annotations

import subprocess
import urllib.request
from pathlib import Path

import pytest
from masume.games import load_rules
from masume.play.cards import cards_of
from masume.rules.base import ANY_CARD
from test_play import Play, state, steps, wait_state
from test_web import at

pytestmark = [pytest.mark.slow, pytest.mark.browser]

GREEN = "#00ff3c"  # masume.leds.GREEN as the page shows it


def comparable(layout) -> dict:
    return {cell: tuple(pieces) for cell, pieces in layout.items() if pieces}


class Table:
    """One page per viewer (home, away, a spectator) on one `masume play`, each
    opened from its own printed link in a browser of its own (its own cookies)."""

    def __init__(self, browser, links: dict, position, tmp_path: Path) -> None:
        self.url = links[None]
        self.position = position
        self.cards = cards_of(position)
        self.tmp_path = tmp_path
        self.pages = {}
        for viewer in (*position.sides, None):
            page = browser.new_context(viewport={"width": 1300, "height": 1000}).new_page()
            page.goto(links[viewer])
            page.wait_for_selector("body[data-ready=true]")
            self.pages[viewer] = page
        self.played: list[str] = []
        self.spares = [c for c in reversed(self.cards.copies()) if c.tag]

    def page(self, viewer):
        return self.pages[viewer]

    def close(self) -> None:
        for page in self.pages.values():
            page.context.close()

    def label(self, viewer, cell: str) -> str | None:
        return self.pages[viewer].locator(f'[data-cell="{cell}"]').get_attribute("data-card")

    def led(self, viewer, cell: str) -> str | None:
        return self.pages[viewer].locator(f'[data-cell="{cell}"]').get_attribute("data-led")

    def play(self, text: str | None = None) -> str:
        """Play ``text`` (the game's notation; None: the first legal action) on the
        mover's page: a choice is clicked, a card put down with the picker."""
        position = self.position
        action = position.parse_action(text) if text else next(iter(position.legal_actions()))
        notation = position.notation(action)
        after = position.apply(action)
        mover = position.status().to_move
        page = self.pages[mover]
        if comparable(after.layout()) == comparable(position.layout()):
            page.wait_for_selector(f'#choices [data-choice="{notation}"], #choice-form:not([hidden])')
            button = page.locator(f'#choices [data-choice="{notation}"]')
            if button.count():
                button.click()
            else:  # many choices: typed
                page.fill("#choice-text", notation)
                page.press("#choice-text", "Enter")
        else:
            lifts, places = steps(position.layout(), after.layout())
            for cell in lifts:
                count = len(state(self.url)["pieces"].get(cell, []))
                page.click(f'[data-cell="{cell}"]')
                wait_state(self.url, lambda s: len(s["pieces"].get(cell, [])) == count - 1)
            for cell, piece in places:
                if piece == ANY_CARD:  # a pile: any card of the set
                    piece = self.spares.pop(0).piece
                copy = self.cards.by_tag(piece[4:])
                page.fill("#card-find", copy.id)
                page.click(f'#card-list [data-card="{copy.id}"]')
                page.wait_for_selector(f'#card-list [data-card="{copy.id}"].selected')
                count = len(state(self.url)["pieces"].get(cell, []))
                page.click(f'[data-cell="{cell}"]')
                wait_state(self.url, lambda s: len(s["pieces"].get(cell, [])) == count + 1)
        self.played.append(notation)
        n = len(self.played)
        page.wait_for_function(f"document.querySelectorAll('#moves .action').length === {n}")
        self.position = after
        return notation

    def legal_zones_lit(self, meaning: str) -> list[str]:
        """The cells the engine highlights as ``meaning``, checked green on the mover's page."""
        cells = list(self.position.status().highlights.get(meaning, ()))
        assert cells, self.position.status()
        page = self.pages[self.position.status().to_move]
        first = cells[0]
        page.wait_for_function(
            f"document.querySelector('[data-cell=\"{first}\"]').dataset.led === '{GREEN}'")
        for cell in cells:
            assert self.led(self.position.status().to_move, cell) == GREEN, cell
        return cells


def state_as(links: dict, viewer: str | None) -> str:
    """The state JSON as ``viewer`` gets it with their own link (None: a spectator's)."""
    with urllib.request.urlopen(at(links[viewer], "api/state")) as r:
        return r.read().decode()


def start(game: str, tmp_path: Path, *options: str) -> tuple[Play, dict]:
    """`masume play` on the simulated mat; its printed links: the table's ("table"),
    each side's, and the spectators' (None)."""
    args = [a for o in options for a in ("--option", o)]
    play = Play(game, "--simulate", "--http-port", "0", "--games-dir", str(tmp_path), *args,
                stdin=subprocess.DEVNULL)
    links = {"table": play.until("web view: ").split(": ", 1)[1]}
    while None not in links:
        label, url = play.until("web view for ").split(": ", 1)
        who = label.removeprefix("web view for ")
        links[None if who == "spectators" else who] = url
    wait_state(links["table"], lambda s: s["link"]["connected"]
               and s["tracker"]["state"] == "in-sync")
    return play, links


def test_magic_number_eleven_played_on_the_simulated_mat(tmp_path: Path, chromium) -> None:
    options = ("cards=magic-number-eleven-demo", "home_stars=ST01/ST02/ST03",
               "away_stars=ST04/ST05/ST06")
    play, links = start("magic-number-eleven", tmp_path, *options)
    try:
        position = load_rules("magic-number-eleven").start(
            **dict(o.split("=", 1) for o in options))
        table = Table(chromium, links, position, tmp_path)
        try:
            # The substitutes, through the picker; the next bench place lights green.
            for _ in range(6):
                (cell,) = table.legal_zones_lit("legal")
                assert "bench" in cell
                table.play()
            # Placements light every cell a player card may go.
            assert "H2c" in table.legal_zones_lit("legal")
            table.play("H07 H2c")
            table.play("A08 A3b")
            table.play("ST02 H1c")
            table.play("no effect")  # a choice: the star's instant effect
            table.play("shoot H1c at H1c^")
            # The attack's synergy card from the deck, face down on home's area 1.
            assert table.legal_zones_lit("legal") == ["home-synergy-1"]
            synergy = table.play()
            assert synergy.startswith("deck ")
            card = synergy.split()[1]
            name = table.cards.copy(card).card.name
            table.page("home").wait_for_function(
                "(document.querySelector('[data-cell=\"home-synergy-1\"]').dataset.card || '')"
                f".startsWith('{card} ')")
            for viewer in ("away", None):
                table.page(viewer).wait_for_function(
                    "document.querySelector('[data-cell=\"home-synergy-1\"]').dataset.card"
                    " === 'face down'")
                assert name not in table.page(viewer).content()
                assert card not in state_as(links, viewer)
            assert name in table.page("home").content()
            # The panel: the engine's lines for each page.
            assert "deck" in table.page(None).inner_text("#cards-panel")
            table.page(None).screenshot(path=str(tmp_path / "mne.png"))
        finally:
            table.close()
        record = next(tmp_path.glob("*/record.txt")).read_text()
        for notation in ("H07 H2c", "shoot H1c at H1c^", synergy):
            assert notation in record
    finally:
        play.stop()


def test_eyeshield21_played_on_the_simulated_mat(tmp_path: Path, chromium) -> None:
    play, links = start("eyeshield21", tmp_path, "cards=eyeshield21-demo")
    try:
        position = load_rules("eyeshield21").start(cards="eyeshield21-demo")
        table = Table(chromium, links, position, tmp_path)
        try:
            # Set-up: three characters face down; where they may go lights green.
            assert "home-character-1" in table.legal_zones_lit("place")
            first = table.play()
            cell = first.split("@")[1]
            copy = first.split("@")[0]
            name = table.cards.copy(copy).card.name
            table.page("home").wait_for_function(
                f"(document.querySelector('[data-cell=\"{cell}\"]').dataset.card || '')"
                f".startsWith('{copy} ')")
            for viewer in ("away", None):
                table.page(viewer).wait_for_function(
                    f"document.querySelector('[data-cell=\"{cell}\"]').dataset.card"
                    " === 'face down'")
                assert copy not in table.page(viewer).inner_text("#moves")
            for viewer in ("away", None):
                text = state_as(links, viewer)
                assert table.cards.copy(copy).tag not in text and name not in text
            for _ in range(7):
                table.play()  # two more, the deal (guts from the picker), away's set-up
            table.play("reveal")  # a choice: every character turns face up
            table.page("away").wait_for_function(
                f"(document.querySelector('[data-cell=\"{cell}\"]').dataset.card || '')"
                f".startsWith('{copy} ')")
            assert name in table.page(None).content()
            # The main phase: a character from the hand, then a reaction card.
            assert table.legal_zones_lit("place")
            for _ in range(3):
                table.play()
            assert "hand" in table.page("home").inner_text("#cards-card").lower()
            table.page("home").screenshot(path=str(tmp_path / "eyeshield21.png"))
        finally:
            table.close()
        record = next(tmp_path.glob("*/record.txt")).read_text()
        for notation in table.played:
            assert notation in record
    finally:
        play.stop()


def test_eyeshield21_on_a_mat_at_a_serial_port(tmp_path: Path) -> None:
    """A real mat's path: `masume sim --setup` is the mat (set out as a person would),
    `masume play --port` reads it; the shared terminal never names a face-down card."""
    import sys

    sim = subprocess.Popen([sys.executable, "-m", "masume.cli", "sim", "--board", "eyeshield21",
                            "--setup", "eyeshield21"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        port = sim.stdout.readline().split(": ", 1)[1].strip()
        play = Play("eyeshield21", "--port", port, "--no-web", "--games-dir", str(tmp_path))
        try:
            play.until("board: eyeshield21 on ")
            cards = cards_of(load_rules("eyeshield21").start())
            for n, copy_id in enumerate(("F01.1", "F02.1", "F03.1"), 1):
                sim.stdin.write(f"place home-character-{n} {cards.copy(copy_id).piece}\n")
                sim.stdin.flush()
                assert sim.stdout.readline().startswith("ok place")
                assert play.until("home: ") == f"home: ?@home-character-{n}"
        finally:
            play.stop()
    finally:
        sim.stdin.close()
        sim.wait(timeout=10)
    record = next(tmp_path.glob("*/record.txt")).read_text()
    assert "F01.1@home-character-1, F02.1@home-character-2, F03.1@home-character-3" in record
