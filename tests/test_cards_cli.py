"""`masume cards`: list, check, show, and enroll on the simulated mat (the real
firmware on the MicroPython VM over a pty, answers on stdin)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest

from masume.cards import load_card_set, shipped_sets
from masume.cli import main

MASUME = [sys.executable, "-m", "masume.cli"]

SET = """\
# My cards, typed in from the box.
id = "mine"
game = "tiny-cards"
title = "My tiny cards"

[[card]]
id = "P1"
name = "Keeper"
kind = "player"
side = "home"   # the keeper's side

[[card]]
id = "P2"
name = "Striker"
kind = "player"
side = "away"
tags = ["04AABBCCDD0002"]

[[card]]
id = "S1"
name = "Long pass"
kind = "deck"
copies = 2
tags = ["04AABBCCDD0010"]
"""


@pytest.fixture
def card_file(tmp_path: Path, monkeypatch) -> Path:
    from masume import games

    monkeypatch.setitem(games.GAMES, "tiny-cards", "card_game")
    path = tmp_path / "mine.toml"
    path.write_text(SET, encoding="utf-8")
    return path


def test_check_passes_a_good_set_and_says_what_is_untagged(card_file: Path, capsys) -> None:
    assert main(["cards", "check", str(card_file)]) == 0
    out = capsys.readouterr().out
    assert out.strip() == (f"{card_file}: ok: mine for tiny-cards, 3 cards, 4 copies; "
                           "2 copies have no tag yet (masume cards enroll)")


def test_check_lists_every_problem_one_a_line_with_the_games_own(card_file: Path, capsys) -> None:
    card_file.write_text(SET.replace('name = "Keeper"\nkind = "player"\n', 'name = "Keeper"\n')
                         .replace('copies = 2', 'copies = 0'), encoding="utf-8")
    assert main(["cards", "check", str(card_file)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{card_file}: card P1: kind missing",
        f"{card_file}: card S1: copies must be a whole number of at least 1"]
    card_file.write_text(SET.replace('side = "away"', 'side = "nowhere"'), encoding="utf-8")
    assert main(["cards", "check", str(card_file)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{card_file}: card P2: side must be home or away"]  # tiny-cards' check_cards


@pytest.mark.parametrize("text, problem", [
    ("[[card]\n", "not TOML"),
    ('id = "x"\ngame = "tiny-cards"\n', "no [[card]] entries"),
    (SET.replace('game = "tiny-cards"', 'game = "chess"'), "unknown game 'chess'"),
])
def test_check_never_crashes_on_a_bad_file(card_file: Path, capsys, text: str, problem: str) -> None:
    card_file.write_text(text, encoding="utf-8")
    assert main(["cards", "check", str(card_file)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and problem in lines[0]


def test_show_gives_the_cards_their_tags_and_the_copies_without(card_file: Path, capsys) -> None:
    assert main(["cards", "show", str(card_file)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "P1  Keeper  [player]  side home" in out
    assert "    P1: (no tag)" in out and "    P2: 04AABBCCDD0002" in out
    assert "    S1.1: 04AABBCCDD0010" in out and "    S1.2: (no tag)" in out
    assert out[-1] == "2 copies lack a tag: P1, S1.2"


def test_list_names_every_shipped_set(capsys) -> None:
    assert main(["cards", "list"]) == 0
    out = capsys.readouterr().out
    names = shipped_sets()
    if names:
        for name in names:
            cards = load_card_set(name)
            assert f"{name}  {cards.game}  {len(cards)} cards" in out
    else:
        assert out == "no card sets ship with masume yet\n"


class Enroll:
    """`masume cards enroll` on the simulated mat, talked to line by line."""

    def __init__(self, *args: str, cwd: Path) -> None:
        env_path = str(Path(__file__).parent)  # the tiny-cards game lives in tests/
        self.proc = subprocess.Popen(
            [*MASUME, "cards", "enroll", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, bufsize=1, cwd=cwd,
            env={**__import__("os").environ, "PYTHONPATH": env_path})
        self.lines: list[str] = []
        # A line that never comes must not hang the suite.
        self.watchdog = threading.Timer(90, self.proc.kill)
        self.watchdog.daemon = True
        self.watchdog.start()

    def until(self, prefix: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"enroll ended before {prefix!r}: {self.lines} "
                                     f"{self.proc.stderr.read()}")
            self.lines.append(line.rstrip("\n"))
            if line.startswith(prefix):
                return line.rstrip("\n")
        raise AssertionError(f"no {prefix!r} in {self.lines}")

    def say(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()


@pytest.mark.slow
def test_enroll_on_the_simulated_mat_writes_the_tags_and_keeps_the_file(card_file: Path) -> None:
    run = Enroll("--set", str(card_file), "--simulate", "--board", "magic-number-eleven",
                 cwd=card_file.parent)
    try:
        assert run.until("card set ").endswith("(simulated)")
        run.until("put a card on any zone")
        run.say("place H2b tag:04a1b2c3d4e5f6")
        assert run.until("tag ") == "tag 04A1B2C3D4E5F6 on H2b"
        run.until("which card is it?")
        run.say("goalie")
        assert run.until("no card matches") == "no card matches 'goalie'"
        run.until("which card is it?")
        run.say("keeper")
        assert run.until("enrolled: ") == (f"enrolled: tag 04A1B2C3D4E5F6 is Keeper (P1); "
                                           f"saved to {card_file}")
        run.say("lift H2b")
        run.until("ok lift H2b")
        # The same card again, on another zone: refused with its name.
        run.say("place home-synergy-1 tag:04A1B2C3D4E5F6")
        assert run.until("refused: ") == ("refused: tag 04A1B2C3D4E5F6 is already enrolled to "
                                          "Keeper (P1)")
        # A reader that reports no NFC UID (6 bytes): said, nothing written.
        run.say("place synergy-deck tag:040000000099")
        assert run.until("synergy-deck: ") == ("synergy-deck: '040000000099' is not an NFC tag id "
                                               "(4, 7 or 10 bytes in hex)")
        run.say("lift synergy-deck")
        run.until("ok lift")
        # A second copy of a card: it gets the next free copy.
        run.say("place synergy-deck tag:04000000000099")
        run.until("which card is it?")
        run.say("S1")
        assert run.until("enrolled: ").startswith("enrolled: tag 04000000000099 is Long pass (S1.2)")
        run.say("quit")
        run.until("0 copies still lack a tag")
        assert run.proc.wait(timeout=20) == 0
    finally:
        run.watchdog.cancel()
        if run.proc.poll() is None:
            run.proc.kill()
            run.proc.wait()
    text = card_file.read_text(encoding="utf-8")
    assert text.startswith("# My cards, typed in from the box.\n")
    assert 'side = "home"   # the keeper\'s side' in text
    data = tomllib.loads(text)
    assert [c.get("tags") for c in data["card"]] == [
        ["04A1B2C3D4E5F6"], ["04AABBCCDD0002"], ["04AABBCCDD0010", "04000000000099"]]
    cards = load_card_set(card_file)
    assert cards.untagged() == () and cards.by_tag("04A1B2C3D4E5F6").id == "P1"
    assert run.lines[-1] == "0 copies still lack a tag"


def test_check_runs_the_real_games_checks_on_a_shipped_set_gone_wrong(tmp_path: Path, capsys) -> None:
    from masume.cards import find_card_set

    text = find_card_set("magic-number-eleven-demo").read_text(encoding="utf-8")
    broken = tmp_path / "mne.toml"
    broken.write_text(text[:text.rfind("[[card]]")], encoding="utf-8")  # one penalty card less
    assert main(["cards", "check", "magic-number-eleven-demo"]) == 0
    capsys.readouterr()
    # a count from a public page, not a rule sentence: a warning, the set plays
    assert main(["cards", "check", str(broken)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{broken}: warning: penalty-kick cards: 10, the published set has 11"
    assert lines[1].startswith(f"{broken}: ok: ")
    strict = tmp_path / "strict.toml"
    strict.write_text("published_counts = true\n" + broken.read_text(encoding="utf-8"),
                      encoding="utf-8")
    assert main(["cards", "check", str(strict)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{strict}: penalty-kick cards: 10, the published set has 11"]


@pytest.mark.slow
def test_enroll_reads_a_mat_on_a_serial_port(card_file: Path) -> None:
    """`--port`: the path of a real mat (here `masume sim` is that mat)."""
    sim = subprocess.Popen([*MASUME, "sim", "--board", "magic-number-eleven"],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    try:
        port = sim.stdout.readline().split(": ", 1)[1].strip()
        run = Enroll("--set", str(card_file), "--port", port, "--board", "magic-number-eleven",
                     cwd=card_file.parent)
        try:
            assert run.until("card set ").endswith(f"on {port}")
            run.until("put a card on any zone")
            sim.stdin.write("place A3c tag:04AABBCCDD0002\n")  # the striker, enrolled already
            sim.stdin.flush()
            assert run.until("refused: ") == ("refused: tag 04AABBCCDD0002 is already enrolled "
                                              "to Striker (P2)")
            sim.stdin.write("place A3d tag:04112233\n")
            sim.stdin.flush()
            assert run.until("tag ") == "tag 04112233 on A3d"
            run.until("which card is it?")
            run.say("P1")
            assert run.until("enrolled: ").startswith("enrolled: tag 04112233 is Keeper (P1)")
            run.say("quit")
            assert run.proc.wait(timeout=20) == 0
        finally:
            run.watchdog.cancel()
            if run.proc.poll() is None:
                run.proc.kill()
                run.proc.wait()
    finally:
        sim.stdin.close()
        sim.wait(timeout=10)
    assert load_card_set(card_file).by_tag("04112233").id == "P1"
