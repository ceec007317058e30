"""The tracker on Soccer Shogi: sensor readings in, actions out, the hard cases."""

from __future__ import annotations

import pytest
from masume.boards import load_board
from masume.games import load_rules
from masume.leds import GREEN, WHITE, WRONG, picture
from masume.link import Led
from masume.rules import Game
from masume.tracker import Tracker

RULES = load_rules("soccer-shogi")


class Hands:
    """A board of readings moved by hand, with a clock the test controls."""

    def __init__(self, tracker: Tracker) -> None:
        self.tracker = tracker
        self.readings = tracker.expected_readings()
        self.now = 0.0
        tracker.observe(self.readings, self.now)

    def _set(self, square: str, reading) -> None:
        self.readings[square] = reading
        self.now += 0.05
        self.tracker.observe_square(square, reading, self.now)

    def lift(self, square: str, piece: str | None = None) -> str | None:
        """Take ``piece`` (the top one by default) off ``square``; the piece taken
        (None on a presence board, which cannot tell)."""
        stack = self.readings[square]
        if isinstance(stack, bool):
            self._set(square, False)
            return None
        pieces = list(stack)
        taken = piece or pieces[-1]
        pieces.remove(taken)
        self._set(square, tuple(pieces))
        return taken

    def place(self, square: str, piece: str = "blue") -> None:
        stack = self.readings[square]
        self._set(square, True if isinstance(stack, bool) else tuple(stack) + (piece,))

    def settle(self, seconds: float = 1.0):
        self.now += seconds
        return self.tracker.tick(self.now)


def make(board: str = "soccer-shogi", *texts: str) -> tuple[Game, Tracker, Hands]:
    game = Game(RULES.start())
    for text in texts:
        game.push_notation(text)
    tracker = Tracker(game, load_board(board))
    return game, tracker, Hands(tracker)


def notations(game: Game) -> list[str]:
    return game.notations()


def test_a_step_is_recorded_once_the_board_is_still() -> None:
    game, tracker, hands = make()
    hands.lift("A7")
    assert tracker.view.state == "lifted"
    assert {"A6", "B6", "A8"} <= set(tracker.view.destinations["A7"])
    hands.place("A6")
    assert tracker.tick(hands.now) .pushed == ()  # not settled yet
    change = hands.settle()
    assert [str(a) for a in change.pushed] == ["A7-A6"]
    assert tracker.view.state == "in-sync"
    assert hands.settle().pushed == ()  # the same board is not read twice


def test_lifting_the_ball_from_its_holder_lights_where_it_can_be_kicked() -> None:
    game, tracker, hands = make()
    hands.lift("C5", "ball")
    dests = set(tracker.view.destinations["C5"])
    assert {"A5", "C7", "E5", "C3"} <= dests  # passes and kicks to empty squares
    assert "A7" in dests and "C8" in dests  # to team-mates
    assert "C2" not in dests  # never to an opponent


def test_a_ball_sliding_over_squares_counts_where_it_stops() -> None:
    game, tracker, hands = make()
    hands.lift("C5", "ball")
    hands.place("B5", "ball")  # passing over B5 on the way
    hands.lift("B5", "ball")
    hands.place("A5", "ball")
    hands.settle()
    assert notations(game) == ["b(C5-A5)f"]


def test_a_move_read_too_early_is_corrected_by_where_the_piece_ends() -> None:
    game, tracker, hands = make()
    hands.lift("C5", "ball")
    hands.place("B5", "ball")
    hands.settle()  # the ball rested on B5 long enough to count
    assert notations(game) == ["b(C5-B5)f"]
    hands.lift("B5", "ball")
    hands.place("A5", "ball")
    change = hands.settle()
    assert [str(a) for a in change.popped] == ["b(C5-B5)f"]
    assert notations(game) == ["b(C5-A5)f"]  # still one action, not two


def test_two_pieces_lifted_at_once_and_a_fast_second_action() -> None:
    game, tracker, hands = make()
    hands.lift("A7")
    hands.lift("B7")
    assert tracker.view.state == "lifted" and set(tracker.view.destinations) == {"A7", "B7"}
    hands.place("A6")
    hands.place("B6")
    change = hands.settle()
    assert sorted(str(a) for a in change.pushed) == ["A7-A6", "B7-B6"]
    assert tracker.view.state == "in-sync"  # same result either way round: no question
    assert game.position.status().to_move == "red"


@pytest.mark.parametrize("board", ["soccer-shogi", "soccer-shogi-reed"])
@pytest.mark.parametrize("kick_first", [True, False])
def test_two_quick_actions_are_recorded_in_the_order_they_were_played(
        board: str, kick_first: bool) -> None:
    """A kick and a step made within one settle: either order ends in the same
    position, but the board saw one first, and so would anyone watching (the club
    bench recorded D7-D6 before b(C5-E3)f played the other way round)."""
    game, tracker, hands = make(board)

    def kick() -> None:
        if board == "soccer-shogi":  # on reeds C5 stays occupied: its player stays
            hands.lift("C5", "ball")
        hands.place("E3", "ball")

    def step() -> None:
        hands.lift("D7")
        hands.place("D6")

    for action in (kick, step) if kick_first else (step, kick):
        action()
    change = hands.settle()
    played = ["b(C5-E3)f", "D7-D6"] if kick_first else ["D7-D6", "b(C5-E3)f"]
    assert [str(a) for a in change.pushed] == played and notations(game) == played
    assert tracker.view.state == "in-sync"  # the order is no question to confirm


def test_a_hand_that_hesitated_does_not_change_the_order() -> None:
    """The ball lifted and put back before the step, then kicked after it: the
    step came first (a cell put back as it was has not changed)."""
    game, tracker, hands = make()
    hands.lift("C5", "ball")
    hands.place("C5", "ball")
    hands.lift("D7")
    hands.place("D6")
    hands.lift("C5", "ball")
    hands.place("E3", "ball")
    assert [str(a) for a in hands.settle().pushed] == ["D7-D6", "b(C5-E3)f"]


def test_a_journal_burst_is_recorded_in_the_order_the_board_sent_it() -> None:
    """A club table taken over after its server was killed: the board resends its
    journal in one burst, all of it arriving at one moment, its events' board times
    within one settle, then a snapshot. The record follows the events' order, not
    the rules' order of actions (the rules list steps before kicks)."""
    from masume.link.events import BoardEvent
    from masume.play.core import TableCore

    core = TableCore(RULES, load_board("soccer-shogi"), Game(RULES.start()),
                     {"Link": "boot=1 seq=0"})  # a save from before the kick
    readings = core.tracker.expected_readings()
    burst = [("C5", ("blue",)), ("E3", ("ball",)), ("D7", ()), ("D6", ("blue",))]
    assert readings["C5"] == ("ball", "blue")
    for seq, (square, reading) in enumerate(burst, start=1):
        core.handle(BoardEvent(seq=seq, type="square", square=square, reading=reading,
                               at=10.0 + 0.05 * seq, boot=1), now=50.0)
        readings[square] = reading
    # The link asks for a snapshot once the journal is drained; it may come before
    # the table next ticks, and only confirms what the burst said.
    core.handle(BoardEvent(seq=4, type="snapshot", readings=dict(readings), boot=1), now=50.0)
    core.tick(51.0)
    assert core.game.notations() == ["b(C5-E3)f", "D7-D6"]
    assert core.handled == (1, 4) and core.tracker.view.state == "in-sync"


def test_a_snapshot_handled_after_the_board_moved_on_leaves_its_clock_alone() -> None:
    """The club bench's failover (hall-57, recorded D7-E6 before b(C5-B5)f): the
    snapshot the link asks for once the journal is drained says what the events said,
    but a loaded table handles it after the board's next movement began. Taken as a
    change "now" it kept the kick from settling before that movement; the lift then
    settled alone, piece in the air, and the order of the kick's cells was gone."""
    from masume.link.events import BoardEvent
    from masume.play.core import TableCore

    core = TableCore(RULES, load_board("soccer-shogi"), Game(RULES.start()),
                     {"Link": "boot=1 seq=0"})
    readings = core.tracker.expected_readings()

    def event(seq: int, square: str, reading: tuple[str, ...], at: float, now: float) -> None:
        readings[square] = reading
        core.handle(BoardEvent(seq=seq, type="square", square=square, reading=reading,
                               at=at, boot=1), now=now)

    event(1, "C5", ("blue",), at=10.0, now=10.0)  # the kick, from the journal
    event(2, "E3", ("ball",), at=10.1, now=10.1)
    # The snapshot, asked for then, is handled only after the step began on the board.
    core.handle(BoardEvent(seq=2, type="snapshot", readings=dict(readings), boot=1), now=14.3)
    event(3, "D7", (), at=14.0, now=14.4)
    core.tick(14.5)  # the piece in the air
    event(4, "D6", ("blue",), at=14.6, now=14.7)
    core.tick(15.5)
    assert core.game.notations() == ["b(C5-E3)f", "D7-D6"]


def test_a_piece_put_back_is_no_action() -> None:
    game, tracker, hands = make()
    hands.lift("D7")
    hands.settle(0.5)
    hands.place("D7")
    assert hands.settle().pushed == ()
    assert game.actions == [] and tracker.view.state == "in-sync"


def test_a_knocked_piece_is_shown_and_nothing_is_recorded() -> None:
    game, tracker, hands = make()
    hands.lift("B2", "red")
    hands.place("B3", "red")  # knocked by a sleeve, during blue's turn
    assert hands.settle().pushed == ()
    assert tracker.view.state == "mismatch"
    assert set(tracker.view.differing) == {"B2", "B3"} and tracker.view.placed == ("B3",)
    leds = picture(tracker.board, game.position, tracker.view)
    # The knocked piece blinks red, and where it goes back blinks white.
    assert leds["B3"] == Led(WRONG, "blink") and leds["B2"] == Led(WHITE, "blink")
    assert tracker.view.put == ("B2",)
    assert tracker.view.message.endswith("to put it right: move red from B3 to B2")
    hands.lift("B3", "red")
    hands.place("B2", "red")
    hands.settle()
    assert tracker.view.state == "in-sync" and game.actions == []
    hands.lift("A7")
    hands.place("A6")
    hands.settle()
    assert notations(game) == ["A7-A6"]  # and the game goes on


def test_a_board_read_again_as_it_was_keeps_what_was_decided_on_it() -> None:
    """A snapshot (or a sensor's event) that says what the tracker already decided on
    changes nothing: the view keeps its message. It showed "moving" instead, with
    nothing left to decide (no deadline): a table that says moving for ever."""
    game, tracker, hands = make()
    hands.lift("B2", "red")
    hands.place("B3", "red")  # knocked: nothing to record
    hands.settle()
    decided = tracker.view
    assert decided.state == "mismatch" and tracker.due() is None
    tracker.observe(dict(hands.readings), hands.now + 1)  # the snapshot after a reconnect
    assert tracker.view == decided and tracker.due() is None
    tracker.observe_square("B3", hands.readings["B3"], hands.now + 2)  # an event said twice
    assert tracker.view.state == "mismatch" and tracker.view.message == decided.message


def test_the_lit_action_is_read_where_the_last_one_made_otherwise_fits_too() -> None:
    """C5-D5, then D5-D6 lit (the computer's, or a hint): the board after it reads as
    C5-D5 then D5-D6, and as C5-D6 in place of C5-D5. Unlit, that is a question
    (ambiguous, the corrected move first); lit, the players made what the lights showed,
    and the game goes on from it. The table waited for ever where the corrected move
    was taken while the computer's action stayed lit."""
    def carry(frm: str, to: str) -> None:  # blue with the ball at its feet
        hands.lift(frm, "blue")
        hands.lift(frm, "ball")
        hands.place(to, "ball")
        hands.place(to, "blue")

    for lit in (False, True):
        game, tracker, hands = make()
        carry("C5", "D5")
        hands.settle()
        assert notations(game) == ["C5-D5"]
        if lit:
            tracker.expect = game.position.parse_action("D5-D6")
        carry("D5", "D6")
        hands.settle()
        if lit:
            assert notations(game) == ["C5-D5", "D5-D6"] and tracker.view.state == "in-sync"
        else:
            assert notations(game) == ["C5-D6"] and tracker.view.state == "ambiguous"


def test_a_lit_action_ends_when_the_move_before_it_is_read_otherwise() -> None:
    """The computer's D5-D6 lit after C5-D5; the players move the piece on to C6, which
    reads first as C5-C6 in place of C5-D5 (ambiguous). The game has as many actions as
    when the action was lit, but not the position it was found for: it is lit no more
    (the computer thinks again), where it stayed lit and the table waited for ever."""
    from masume.link.events import BoardEvent
    from masume.play.core import TableCore

    core = TableCore(RULES, load_board("soccer-shogi"), Game(RULES.start()),
                     {"Link": "boot=1 seq=0"})
    seq = 0

    def event(square: str, reading: tuple[str, ...], at: float) -> None:
        nonlocal seq
        seq += 1
        core.handle(BoardEvent(seq=seq, type="square", square=square, reading=reading,
                               at=at, boot=1), now=at)

    event("C5", (), 1.0)
    event("D5", ("ball", "blue"), 1.1)
    core.tick(2.0)
    assert core.game.notations() == ["C5-D5"]
    position = core.game.position
    core.show("computer", "blue", position.parse_action("D5-D6"), 0.5, 1)
    assert core.lit_now() is not None and core.tracker.expect is not None
    event("D5", (), 3.0)
    event("C6", ("ball", "blue"), 3.1)
    core.tick(4.0)
    assert core.game.notations() == ["C5-C6"] and core.tracker.view.state == "ambiguous"
    assert core.shown is None and core.lit_now() is None and core.tracker.expect is None


def test_an_illegal_placement_records_nothing() -> None:
    game, tracker, hands = make()
    hands.lift("A7")
    hands.place("A3")  # no two actions take the A7 player there
    hands.settle()
    assert game.actions == [] and tracker.view.state == "mismatch"
    assert tracker.view.message.startswith("the board does not match the game at")


def test_takeback_button_then_the_board_is_put_back() -> None:
    game, tracker, hands = make()
    hands.lift("A7")
    hands.place("A6")
    hands.settle()
    change = tracker.takeback()
    assert [str(a) for a in change.popped] == ["A7-A6"] and game.actions == []
    assert hands.settle().pushed == ()  # the board still shows it: not played again
    assert tracker.view.state == "mismatch" and set(tracker.view.differing) == {"A6", "A7"}
    hands.lift("A6")
    hands.place("A7")
    hands.settle()
    assert tracker.view.state == "in-sync" and game.actions == []


def test_a_chain_of_jumps_read_hop_by_hop_stays_one_action() -> None:
    # Red to move after blue's A7-A6 and D7-D6, with red's C2-C3 first: the B2
    # player can jump C3 to D4... build a chain over own pieces: B2 over C3? use
    # the seed's note position: after C2-C3, A2 jumps over B2? No: A2 over B2 lands on C2.
    game, tracker, hands = make("soccer-shogi", "A7-A6", "D7-D6", "C2-C3")
    assert game.position.status().action_number == 2
    hands.lift("A2", "red")
    assert "C2" in tracker.view.destinations["A2"]
    hands.place("C2", "red")
    hands.settle()
    assert notations(game)[-1] == "A2・C2"
    hands.lift("C2", "red")
    assert "C4" in tracker.view.destinations["C2"] or any(
        "C4" in d for d in tracker.view.destinations.values())
    hands.place("C4", "red")
    hands.settle()
    assert notations(game)[-1] == "A2・C2・C4" and len(game.actions) == 4
    assert game.position.status().to_move == "blue"


def test_presence_sensors_cannot_see_a_pass_so_confirm_steps_through_the_choices() -> None:
    game, tracker, hands = make("soccer-shogi-reed")
    # The ball goes from C5 under the keeper on C8: no square changes occupancy.
    assert hands.settle().pushed == ()
    seen = []
    for _ in range(12):
        tracker.confirm()
        seen.append(notations(game))
        if not game.actions:
            break
    assert seen[0] and seen[0][0].startswith("b(C5-")  # the first press offers a pass
    assert ["b(C5-C8)"] in seen
    assert seen[-1] == []  # and the presses come round to "nothing happened"
    assert tracker.view.state in ("ambiguous", "in-sync")


def test_presence_sensors_still_read_ordinary_moves() -> None:
    game, tracker, hands = make("soccer-shogi-reed")
    hands.lift("A7")
    assert {"A6", "B6"} <= set(tracker.view.destinations["A7"])
    hands.place("A6")
    hands.settle()
    assert notations(game) == ["A7-A6"]


def test_led_picture_while_a_piece_is_lifted_and_whose_turn() -> None:
    game, tracker, hands = make()
    hands.lift("A7")
    leds = picture(tracker.board, game.position, tracker.view)
    assert leds["A7"] == Led(WHITE, "pulse") and leds["A6"] == Led(GREEN)
    assert leds["turn-blue-1"].pattern == "steady" and "turn-red-1" not in leds
    hands.place("A6")
    hands.settle()
    leds = picture(tracker.board, game.position, tracker.view)
    assert "A6" not in leds or leds["A6"].rgb != GREEN
    assert leds["turn-blue-2"].pattern == "steady" and leds["turn-blue-1"].rgb < (0, 90, 255)


@pytest.mark.parametrize("board", ["soccer-shogi", "soccer-shogi-reed"])
def test_random_games_are_tracked_exactly(board: str) -> None:
    """Play random legal actions by moving readings; the tracker must follow each."""
    import random

    rng = random.Random(5)
    game, tracker, hands = make(board)
    referee = Game(RULES.start())
    for _ in range(40):
        if referee.position.outcome() is not None:
            break
        actions = list(referee.position.legal_actions())
        action = rng.choice(actions)
        before = tracker.signature(referee.position)
        referee.push(action)
        after_readings = Tracker(referee, tracker.board).expected_readings()
        for square, reading in after_readings.items():
            if hands.readings[square] != reading:
                hands._set(square, reading)
        hands.settle()
        # Where the sensors left a choice (a pass between players on reeds, a
        # chain or two jumps), the player presses confirm until the board shows
        # their reading; it must come round within a few presses.
        for _ in range(len(actions) + 2):
            if game.position == referee.position:
                break
            assert tracker.view.state == "ambiguous" or tracker.signature(referee.position) == before
            tracker.confirm()
        assert game.position == referee.position, (board, [str(a) for a in referee.actions])


def test_after_a_goal_setting_up_the_board_again_is_the_restart() -> None:
    game, tracker, hands = make("soccer-shogi", "C8・A6", "C5-D4", "C1・E3・C5!")
    hands.lift("C5", "red")
    hands.lift("C5", "ball")
    hands.place("C5", "red")
    hands.place("C9", "ball")
    hands.settle()
    assert game.notations()[-1] == "b(C5-C9)goal"
    status = game.position.status()
    assert status.highlights["goal"] == ("C9",) and status.score == {"blue": 0, "red": 1}
    leds = picture(tracker.board, game.position, tracker.view)
    assert leds["C9"] == Led(WHITE, "blink")
    assert all(sq in leds for sq in status.highlights["setup"])  # where the pieces go
    # The players set the board up again, piece by piece...
    start = RULES.start().layout()
    for square, reading in list(hands.readings.items()):
        want = start.get(square, ())
        if tuple(sorted(reading)) != tuple(sorted(want)):
            hands._set(square, want)
    hands.settle()
    assert game.notations()[-1] == "restart"
    assert game.position.status().to_move == "blue"  # the side that conceded begins
    assert tracker.view.state == "in-sync"


def test_what_the_tracker_knows_goes_on_from_a_save() -> None:
    """A table saves the readings and the tracker's memory with the game; a tracker
    restored from them reads the board as the first would have: a takeback while
    the board still shows the action is not read again as that action, and a move
    half made when the save was taken is read once the board is still."""
    game, tracker, hands = make("soccer-shogi")
    hands.lift("A7")
    hands.place("A6")
    assert [str(a) for a in hands.settle().pushed] == ["A7-A6"]
    tracker.takeback()  # the board still shows A7-A6: it is what to put back

    def restored(readings) -> tuple[Game, Tracker]:
        again = Game(RULES.start())
        again.replay(game.actions)
        fresh = Tracker(again, load_board("soccer-shogi"))
        fresh.restore(readings, tracker.memory(), now=100.0)
        return again, fresh

    again, fresh = restored(dict(hands.readings))
    assert tracker.memory()["settled"]
    assert not fresh.tick(101.0) and not again.actions  # not read again as A7-A6
    assert fresh.view.state == tracker.view.state
    # Put back, then a move half made (lifted) when the save is taken.
    hands.lift("A6")
    hands.place("A7")
    hands.settle()
    hands.lift("B7")
    again, fresh = restored(dict(hands.readings))
    assert not tracker.memory()["settled"] and fresh.view.state == "lifted"
    fresh.observe_square("B6", ("blue",), 101.0)  # the place, resent by the board
    assert [str(a) for a in fresh.tick(102.0).pushed] == ["B7-B6"]


def test_the_kept_signatures_are_those_of_the_last_readings_not_of_the_whole_game() -> None:
    """A long game does not grow the tracker without end (50,000 Masume Tactics
    signatures were some 370 MB a table): two generations of at most
    ``_signatures_kept`` each, and a position asked for again is found, not made again."""
    import random

    rules = load_rules("masume-tactics")
    tracker = Tracker(Game(rules.start()), load_board(rules.board))
    kept = tracker._signatures_kept
    assert kept < 2_000  # 214 sensed cells: some 1,200 positions a generation
    rng, position, seen = random.Random(7), rules.start(), []
    while len(seen) < 3 * kept:
        actions = list(position.legal_actions())
        position = position.apply(rng.choice(actions)) if actions else rules.start()
        seen.append(position)
        tracker.signature(position)
    held = len(tracker._signatures) + len(tracker._older_signatures)
    assert kept < held <= 2 * kept
    recent = seen[-1]
    assert tracker.signature(recent) is tracker.signature(recent)  # kept, not made again
    first = tracker.signature(seen[0])  # long gone: made again, the same reading
    assert first == Tracker(Game(rules.start()), load_board(rules.board)).signature(seen[0])
