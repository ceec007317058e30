"""`masume play` as players use it: the simulated board through the page in
headless Chromium, a real serial port, saving, a crash and resuming."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from masume.games import load_rules
from browser import open_page
from test_web import at
from waiting import HANG_S

pytestmark = pytest.mark.slow
MASUME = [sys.executable, "-m", "masume.cli"]


class Play:
    """A running `masume play`, read line by line."""

    def __init__(self, *args: str, stdin=subprocess.PIPE) -> None:
        self.proc = subprocess.Popen([*MASUME, "play", *args], stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines: list[str] = []
        # A reader thread, so that a silent `masume play` fails the test at its
        # timeout instead of blocking it in readline for ever.
        self._out: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._out.put(line)
        self._out.put("")  # end of output

    def until(self, prefix: str, timeout: float = HANG_S) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._out.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not line:
                self._out.put("")  # stays at the end for the next call
                raise AssertionError(f"play ended before {prefix!r}: {self.proc.stderr.read()}")
            self.lines.append(line.rstrip("\n"))
            if line.startswith(prefix):
                return line.rstrip("\n")
        raise AssertionError(f"no {prefix!r} in {self.lines}")

    def command(self, line: str, hold: float = 0.5) -> str:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.until("ok" if not line.startswith("x") else "")
        time.sleep(hold)  # a hand rests: the tracker reads a still board
        return answer

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=20)

    def printed(self, timeout: float = 5.0) -> str:
        """Every line printed, up to the end of the output once the process ended."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self._out.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if not line:
                self._out.put("")
                break
            self.lines.append(line.rstrip("\n"))
        return "\n".join(self.lines)


def state(url: str) -> dict:
    with urllib.request.urlopen(at(url, "api/state")) as response:
        return json.load(response)


def wait_state(url: str, check, timeout: float = HANG_S) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        current = state(url)
        if check(current):
            return current
        assert time.monotonic() < deadline, json.dumps(
            {k: v for k, v in current.items() if k != "board"})[:4000]  # not the board's cells
        time.sleep(0.05)


# ---- in the browser -----------------------------------------------------------


def steps(before: dict, after: dict) -> tuple[list[str], list[tuple[str, str]]]:
    """The hand movements that turn layout ``before`` into ``after``: the squares
    to lift the top piece off (in order), then (square, piece) to put down."""
    lifts, places = [], []
    for square in sorted(set(before) | set(after)):
        was, now = list(before.get(square, ())), list(after.get(square, ()))
        keep = 0
        while keep < min(len(was), len(now)) and was[keep] == now[keep]:
            keep += 1
        lifts += [square] * (len(was) - keep)
        places += [(square, piece) for piece in now[keep:]]
    return lifts, places


class Page:
    """The players' hands on the page: click pieces, the hand and squares."""

    def __init__(self, page, url: str) -> None:
        self.page = page
        self.url = url

    def hand_count(self) -> int:
        return self.page.locator("#hand .hand-piece").count()

    def lift(self, square: str) -> None:
        n = self.hand_count()
        self.page.click(f'[data-cell="{square}"]')
        if self.page.locator("#cell-menu:not([hidden])").count():
            self.page.click('#cell-menu [data-menu="lift"]')
        self.page.wait_for_function(f"document.querySelectorAll('#hand .hand-piece').length > {n}")

    def place(self, square: str, piece: str) -> None:
        held = self.page.locator(f'#hand .hand-piece[data-piece="{piece}"]')
        if held.count():
            if "selected" not in (held.last.get_attribute("class") or ""):
                held.last.click()
        else:
            self.page.click(f'[data-piece-choice="{piece}"]')  # from the box of spare pieces
        # The piece chosen before the square is clicked, either way: once, beside
        # busy-machine, the click on the knight in hand chose nothing (the page had
        # moved under it, most likely), the pawn lifted last stayed chosen and went
        # down instead, and the test waited 600 s for a state that could not come.
        self.page.wait_for_selector(f'#hand .hand-piece.selected[data-piece="{piece}"]')
        count = len(state(self.url)["pieces"].get(square, []))
        held = self.hand_count()
        self.page.click(f'[data-cell="{square}"]')
        if self.page.locator("#cell-menu:not([hidden])").count():
            self.page.click('#cell-menu [data-menu="place"]')
        wait_state(self.url, lambda s: len(s["pieces"].get(square, [])) == count + 1)
        self.page.wait_for_function(
            f"document.querySelectorAll('#hand .hand-piece').length === {held - 1}")

    def play(self, position, action) -> None:
        lifts, places = steps(position.layout(), position.apply(action).layout())
        for square in lifts:
            self.lift(square)
        for square, piece in places:
            self.place(square, piece)
        # Put away what the hand still holds (a player turned over shows its other face).
        while self.page.locator("#hand .hand-piece").count():
            if not self.page.locator("#hand .hand-piece.selected").count():
                self.page.locator("#hand .hand-piece").first.click()
            self.page.click("#hand-return")

    def led(self, square: str) -> tuple[str | None, str | None]:
        cell = self.page.locator(f'[data-cell="{square}"]')
        return cell.get_attribute("data-led"), cell.get_attribute("data-pattern")


@pytest.mark.browser
def test_a_steal_and_a_goal_played_by_clicking(tmp_path: Path, chromium) -> None:

    play = Play("soccer-shogi", "--simulate", "--http-port", "0", "--games-dir", str(tmp_path),
                stdin=subprocess.DEVNULL)
    try:
        url = play.until("web view: ").split(": ", 1)[1]
        wait_state(url, lambda s: s["link"]["connected"] and s["tracker"]["state"] == "in-sync")
        rules = load_rules("soccer-shogi")
        position = rules.start()
        game = ["C8・A6", "C5-D4", "C1・E3・C5!", "b(C5-C9)goal"]
        with open_page(chromium, url, width=1200, height=900) as (page, _):
            hands = Page(page, url)
            page.wait_for_selector('[data-cell="C5"] .piece')
            # Lifting the keeper lights where it may go, at once.
            hands.lift("C8")
            page.wait_for_function(
                "document.querySelector('[data-cell=\"A6\"]').dataset.led === '#00ff3c'")
            assert hands.led("C8") == ("#ffffff", "pulse")
            hands.place("C8", "blue")  # put back: no action
            for k, text in enumerate(game):
                action = position.parse_action(text)
                hands.play(position, action)
                position = position.apply(action)
                page.wait_for_function(
                    f"document.querySelectorAll('#moves .action').length === {k + 1}")
                if text.endswith("!"):
                    # The steal: the turned-over blue player is shown on D4.
                    page.wait_for_function(
                        "document.querySelector('[data-cell=\"D4\"]').dataset.led === '#ffc800'")
                    assert hands.led("D4")[1] == "blink"
            actions = [e.inner_text() for e in page.locator("#moves .action").all()]
            assert actions == game
            # The goal lights the goal square, and the squares to set up again.
            page.wait_for_function(
                "document.querySelector('[data-cell=\"C9\"]').dataset.led === '#ffffff'")
            assert hands.led("C9") == ("#ffffff", "blink")
            assert hands.led("C1")[0] is not None and hands.led("A7")[0] is not None
            assert "1" in page.inner_text("#score")
            page.screenshot(path=str(tmp_path / "goal.png"))
        record = next(tmp_path.glob("*/record.txt")).read_text()
        assert "C8・A6, C5-D4\nC1・E3・C5!, b(C5-C9)goal" in record
    finally:
        play.stop()


# ---- from the terminal -----------------------------------------------------------


def test_a_game_is_saved_as_it_goes_and_resumes_after_a_crash(tmp_path: Path) -> None:
    play = Play("soccer-shogi", "--simulate", "--no-web", "--games-dir", str(tmp_path))
    try:
        play.until("saving to ")
        play.command("lift A7", 0.1)
        play.command("place A6 blue")
        assert play.until("blue: ") == "blue: A7-A6"
        play.command("press takeback")
        assert play.until("took back") == "took back A7-A6"
        play.command("lift A6", 0.1)
        play.command("place A7 blue")
        play.command("lift B7", 0.1)
        play.command("place B6 blue")
        assert play.until("blue: ") == "blue: B7-B6"
    finally:
        play.proc.kill()  # a power cut: no goodbye
        play.proc.wait()
    folder = next(tmp_path.iterdir())
    assert (folder / "record.txt").read_text().splitlines()[-1] == "B7-B6"
    log = [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]
    assert any(e["kind"] == "board" and e.get("square") == "A6" for e in log)
    assert [e["pushed"] for e in log if e["kind"] == "tracker" and e["pushed"]] == [["A7-A6"], ["B7-B6"]]

    again = Play("soccer-shogi", "--simulate", "--no-web", "--games-dir", str(tmp_path),
                 "--resume", "last")
    try:
        assert again.until("resuming ") == f"resuming {folder} after 1 actions"
        again.until("saving to ")
        again.command("lift D7", 0.1)
        again.command("place D6 blue")
        assert again.until("blue: ") == "blue: D7-D6"
    finally:
        again.stop()
    assert (folder / "record.txt").read_text().splitlines()[-1] == "B7-B6, D7-D6"


def test_play_drives_a_board_on_a_serial_port(tmp_path: Path) -> None:
    """`--port`: the path a real board takes (here `masume sim` is that board)."""
    sim = subprocess.Popen([*MASUME, "sim", "--board", "soccer-shogi"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        port = sim.stdout.readline().split(": ", 1)[1].strip()
        for square, pieces in load_rules("soccer-shogi").start().layout().items():
            for piece in pieces:
                sim.stdin.write(f"place {square} {piece}\n")
                sim.stdin.flush()
                assert sim.stdout.readline().startswith("ok")
        play = Play("soccer-shogi", "--port", port, "--http-port", "0", "--games-dir",
                    str(tmp_path), stdin=subprocess.DEVNULL)
        try:
            url = play.until("web view: ").split(": ", 1)[1]
            current = wait_state(url, lambda s: s["link"]["connected"]
                                 and s["tracker"]["state"] == "in-sync")
            assert current["simulated"] is False and current["pieces"]["C5"] == ["ball", "blue"]
            for line in ("lift E7", "place E6 blue"):
                sim.stdin.write(line + "\n")
                sim.stdin.flush()
                sim.stdout.readline()
                time.sleep(0.2)
            assert play.until("blue: ") == "blue: E7-E6"
            # The board's LEDs are the host's: the turn light of action 2 of 2.
            deadline = time.monotonic() + HANG_S
            while True:
                sim.stdin.write("leds\n")
                sim.stdin.flush()
                shown = sim.stdout.readline()
                if "turn-blue-2=005aff/steady" in shown:
                    break
                assert time.monotonic() < deadline, shown
                time.sleep(0.1)
            # The cable is pulled mid-game and a move is made meanwhile: when it is
            # back, the board is read again and the game goes on from there.
            for line in ("unplug", "lift D7", "place D6 blue", "replug"):
                sim.stdin.write(line + "\n")
                sim.stdin.flush()
                sim.stdout.readline()
                time.sleep(0.3)
            assert play.until("blue: ") == "blue: D7-D6"
        finally:
            play.stop()
    finally:
        sim.stdin.close()
        sim.wait(timeout=10)


#: What the table asks of the players on an empty board (masume.tracker): other tools read it.
SET_UP = "table: set up the pieces on the lit squares"


@pytest.mark.parametrize(("game", "chip", "hands", "read"), [
    ("soccer-shogi", (), ("lift A7", "place A6 blue"), "blue: A7-A6"),
    ("soccer-shogi", ("--chip",), ("lift A7", "place A6 blue"), "blue: A7-A6"),
    ("masume-tactics", (), ("lift G8", "lift G8", "place G8 home-9", "lift E6",
                            "place E6 ball", "place E6 home-8"), "home: G8 inside SW2"),
], ids=["soccer-shogi", "soccer-shogi-chip", "masume-tactics"])
def test_the_simulated_board_stands_its_pieces_unasked(
        tmp_path: Path, game: str, chip: tuple[str, ...], hands: tuple[str, ...],
        read: str) -> None:
    """`--simulate` stands the game's pieces itself: the players are not asked to set
    them up (they did, and then were told to take every piece off again)."""
    play = Play(game, "--simulate", *chip, "--no-web", "--games-dir", str(tmp_path))
    try:
        play.until("saving to ")
        for line in hands:
            play.command(line, 0.05)
        # The first action read: the table has read the board as it first stood.
        assert play.until(read.split(": ")[0] + ": ") == read
        assert not [line for line in play.lines if line.startswith(SET_UP)], play.lines
    finally:
        play.stop()


def test_a_board_the_players_set_up_is_asked_for(tmp_path: Path) -> None:
    """A board that comes empty (here `masume sim` without --setup, on its port) is to be
    set up by the players: the table says so once, with every square, and reads the
    game from there."""
    sim = subprocess.Popen([*MASUME, "sim", "--board", "soccer-shogi"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True, bufsize=1)

    def hand(line: str) -> None:
        sim.stdin.write(line + "\n")
        sim.stdin.flush()
        assert sim.stdout.readline().startswith("ok")

    try:
        port = sim.stdout.readline().split(": ", 1)[1].strip()
        play = Play("soccer-shogi", "--port", port, "--no-web", "--games-dir", str(tmp_path),
                    stdin=subprocess.DEVNULL)
        try:
            assert play.until(SET_UP) == (
                f"{SET_UP} (12 to go): ball on C5; blue on C5, A7, B7, D7, E7, C8; "
                "red on C1, A2, B2, C2, D2, E2")
            for square, pieces in load_rules("soccer-shogi").start().layout().items():
                for piece in pieces:
                    hand(f"place {square} {piece}")
            hand("lift A7")
            hand("place A6 blue")
            assert play.until("blue: ") == "blue: A7-A6"
            assert len([line for line in play.lines if line.startswith(SET_UP)]) == 1
        finally:
            play.stop()
    finally:
        sim.stdin.close()
        sim.wait(timeout=10)
