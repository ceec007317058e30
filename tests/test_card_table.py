"""A card game's table on the simulated mat (the firmware on the MicroPython VM, a
real pty): the card picker's path, and what each viewer's state may hold."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from card_game import Rules, write_card_set
from masume.boards import load_board
from masume.play.cards import set_up
from waiting import until

pytestmark = pytest.mark.slow


@pytest.fixture
def table(tmp_path: Path, make_sim, connect):
    from masume.play.table import TableSession
    from masume.rules import Game

    rules = Rules(write_card_set(tmp_path))
    board = load_board("magic-number-eleven")
    game = Game(rules.start())
    sim = make_sim(board.id)
    for cell, piece in set_up(game.position.layout(), game.position):
        sim.place(cell, piece)
    link = connect(sim.port, expect=board.id, resolve=lambda _id: board)
    printed: list[tuple[str, str, str]] = []  # what `masume play` prints on the shared terminal
    session = TableSession(rules, board, link, game=game, sim=sim, port=sim.port,
                           on_action=lambda *a: printed.append(a)).start()
    session.printed = printed
    until(lambda: session.state()["link"]["connected"]
         and session.state()["tracker"]["state"] == "in-sync", what="in sync")
    yield session
    session.close()


def test_a_face_down_card_is_named_to_its_owner_only(table) -> None:
    cards = table.game.position.cards
    secret = cards.copy("H03")
    table.sim_place_card("home-synergy-1", "H03")  # face down
    until(lambda: len(table.game.actions) == 1, what="the placement read")
    table.sim_place_card("A2c", "A04")  # face up
    until(lambda: len(table.game.actions) == 2, what="the reply read")
    for viewer in (None, "away", "nobody"):
        state = table.state(viewer)
        text = json.dumps(state)
        assert secret.tag not in text and secret.card.name not in text and "H03" not in text
        assert state["view"]["cells"]["home-synergy-1"] == ["face down"]
        assert state["view"]["cells"]["A2c"] == ["A04 Away player 4"]  # face up: public
        assert state["pieces"]["home-synergy-1"] == ["card"]  # no tag on any card cell
        assert state["moves"][0]["actions"] == ["?@home-synergy-1"]
        assert state["view"]["viewer"] is None if viewer != "away" else state["view"]["viewer"] == "away"
    # The terminal is everyone's: it names the face-down card to nobody.
    assert [a[2] for a in table.printed] == ["?@home-synergy-1", "A04@A2c"]
    home = table.state("home")
    assert home["view"]["cells"]["home-synergy-1"] == ["H03 Home player 3"]
    assert home["moves"][0]["actions"] == ["H03@home-synergy-1"]
    assert "H01 Home player 1" in home["view"]["hand"] and len(home["view"]["hand"]) == 19
    assert table.state("away")["view"]["hand"][0] == "A01 Away player 1"
    assert ["deck", "6"] in home["view"]["panel"]
    assert [c["text"] for c in home["choices"]] == ["draw"]  # no sensor sees a draw


def test_the_web_view_gives_each_viewer_its_own_state(table) -> None:
    from masume.web.server import serve
    from test_web import at

    web = serve(table)
    url, stop = web.url, web.stop
    try:
        def get(path: str) -> dict:
            """``path`` with the link of its ``?as=`` (a player's own), else the table's."""
            role = path.partition("?as=")[2] or "table"
            with urllib.request.urlopen(at(web.link(role), path.partition("?")[0])) as response:
                return json.load(response)

        table.sim_place_card("home-synergy-2", "H07")
        until(lambda: len(table.game.actions) == 1)
        tag = table.game.position.cards.copy("H07").tag
        assert tag not in json.dumps(get("api/state"))
        assert tag not in json.dumps(get("api/state?as=away"))
        assert get("api/state?as=home")["view"]["cells"]["home-synergy-2"] == ["H07 Home player 7"]
        listed = get("api/cards")["cards"]
        assert {"id": "H07", "name": "Home player 7", "kind": "player"} in listed
        assert len(listed) == 46
        # The picker refuses what is no card, and a lift takes a card off.
        request = urllib.request.Request(at(url, "api/sim/card"), method="POST",
                                         data=b'{"square": "H2b", "card": "Z99"}',
                                         headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(request)
        assert error.value.code == 400 and "no card 'Z99'" in error.value.read().decode()
    finally:
        stop()


def test_a_mismatch_names_a_face_down_card_to_its_owner_only(table) -> None:
    table.sim_place_card("home-synergy-1", "H03")  # face down
    until(lambda: len(table.game.actions) == 1, what="the placement read")
    # Home swaps the face-down card for another: the tracker names both cards.
    table.sim_lift("home-synergy-1")
    table.sim_place_card("home-synergy-1", "H04")
    until(lambda: table.state("home")["tracker"]["state"] == "mismatch", what="the mismatch")
    fix = "; to put it right: take the card off home-synergy-1; put {} on home-synergy-1"
    assert table.state("home")["tracker"]["message"] == (
        "Home player 4 (H04) is on home-synergy-1, where the game has Home player 3 (H03)"
        " (laying it on home-synergy-1 is not legal here)" + fix.format("Home player 3 (H03)"))
    for viewer in (None, "away"):
        text = json.dumps(table.state(viewer))
        assert "Home player 4" not in text and "Home player 3" not in text and "H03" not in text
        assert table.state(viewer)["tracker"]["message"] == (
            "a card is on home-synergy-1, where the game has a card (laying it on "
            "home-synergy-1 is not legal here)" + fix.format("a card"))
    # An unknown tag names no card: everyone reads it.
    table.sim_lift("home-synergy-1")
    table.sim_place("home-synergy-1", "tag:04DEADBEEF0001")
    until(lambda: "unknown card" in table.state(None)["tracker"]["message"], what="the stranger")
    assert table.state(None)["tracker"]["message"] == (
        "unknown card on home-synergy-1 (tag 04DEADBEEF0001): enroll it with masume cards enroll"
        + fix.format("a card"))
