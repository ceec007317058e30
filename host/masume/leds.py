"""The LED policy: what the board lights, from the game's status and the tracker's view.

A pure function of what the rules and the tracker say; it knows no game. Status
lights are found by name in the board definition: ``turn-<side>-<n>`` shows whose
turn it is and which action of the turn (dim: done, bright: now); a board with one
lamp per side names it ``turn-<side>`` or ``<side>-turn`` (lit while it is the side's turn). After the
game the winner's lamps blink.

What a square shows, most urgent first:

| meaning | colour | pattern |
| --- | --- | --- |
| a piece put where it does not belong | red | blink |
| a square that differs from the game | orange | steady |
| pieces the last action took off the board, still standing | red | pulse |
| where a lifted piece may go | green | steady |
| where only what the lifted piece held may go (a pass, a kick) | amber | steady |
| the lifted piece's own square | white | pulse |
| after a die roll (or a choice): where a piece must be put to show the game | white | blink |
| ... and where a piece must be taken from | white | pulse |
| the reading chosen when the sensors allowed several | violet | pulse |
| the rules' highlights: flip, goal, eject, setup, ... | see HIGHLIGHTS | |
| card mats: ``legal`` (where the card in play may go) | green | steady |
| a highlight named for a side (``home``, ``home-score``) | the side's colour | steady |
| the squares of the last action | the mover's colour, dim | steady |

Frame lamps, when the board has them: ``timer-<side>-<n>`` count a turn's time down
(lit in the side's colour, the last one blinking), and the die tray's pips
``die-<pip>`` (tl tr ml c mr bl br) show the last roll, or breathe while the rules
wait for the die.
"""

from __future__ import annotations

from typing import Callable, Mapping

from masume.boards import Board
from masume.link.events import Led
from masume.rules import Position
from masume.tracker import View

RED = (255, 0, 0)
ORANGE = (255, 110, 0)
GREEN = (0, 255, 60)
WHITE = (255, 255, 255)
VIOLET = (170, 0, 255)
#: The second colour of a lift: where only what the lifted piece held goes (View.sent).
AMBER = (255, 150, 0)

SIDE_COLOURS = {
    "blue": (0, 90, 255),
    "red": (255, 30, 0),
    "black": (200, 200, 200),
    "white": (255, 255, 255),
    "sente": (0, 200, 255),
    "gote": (255, 120, 0),
    "home": (0, 90, 255),
    "away": (255, 30, 0),
}
FALLBACK_COLOURS = ((0, 200, 255), (255, 120, 0), (120, 255, 0), (255, 0, 160))

#: Meaning of a rules highlight -> how it shows. Unknown meanings show cyan.
HIGHLIGHTS = {
    "flip": Led((255, 200, 0), "blink"),
    "goal": Led(WHITE, "blink"),
    "eject": Led(RED, "pulse"),
    "setup": Led((0, 200, 200), "steady"),
    "checkmate": Led(RED, "blink"),
    "check": Led((255, 0, 120), "pulse"),
    "ball": Led((255, 200, 0), "pulse"),
    # A ball game with a die (masume-tactics): the called line before the roll, the
    # ball's path after it, the square a choice or a set piece is about, where a choice
    # may put the ball, the two players of a charge, and what the referee calls.
    "line": Led(AMBER, "pulse"),
    "path": Led((110, 70, 0), "steady"),
    "target": Led((0, 200, 255), "pulse"),
    "options": Led(GREEN, "pulse"),
    "charge": Led((255, 0, 160), "blink"),
    "offside": Led((255, 255, 0), "blink"),
    "foul": Led((255, 60, 0), "blink"),
    "out": Led((0, 120, 255), "blink"),
    # Card mats: where the card in play may go, what is in play, what to reveal.
    "legal": Led(GREEN, "steady"),
    "place": Led(GREEN, "steady"),
    "area": Led((0, 60, 140), "steady"),
    "clear": Led(AMBER, "pulse"),
    "tidy": Led(AMBER, "pulse"),
    "shooter": Led((255, 0, 160), "pulse"),
    "placed": Led(WHITE, "pulse"),
    "initiative": Led(WHITE, "steady"),
    "phase": Led(WHITE, "steady"),
    "reveal": Led((255, 200, 0), "blink"),
    "damage": Led(RED, "pulse"),
}
DEFAULT_HIGHLIGHT = Led((0, 200, 200), "steady")
#: Highlights lit over the others: where the card or piece in play may go.
FOREMOST = ("legal", "place")
#: Highlights whose lamps belong to a side (``home-score-2``, ``away-turn``): in its colour.
SIDE_LAMPS = ("score", "turn")
#: Highlights of what the players choose next: lit once the board shows the game, not
#: while the pieces still follow a roll (they would hide where the pieces go).
AFTER_FOLLOW = {"options"}


def side_colour(side: str, sides: tuple[str, ...]) -> tuple[int, int, int]:
    if side in SIDE_COLOURS:
        return SIDE_COLOURS[side]
    index = sides.index(side) if side in sides else 0
    return FALLBACK_COLOURS[index % len(FALLBACK_COLOURS)]


def dim(rgb: tuple[int, int, int], level: int = 40) -> tuple[int, int, int]:
    return tuple(v * level // 255 for v in rgb)  # type: ignore[return-value]


def picture(
    board: Board,
    position: Position,
    view: View,
    *,
    last_squares: tuple[str, ...] = (),
    last_side: str | None = None,
    timer: tuple[str, float, float] | None = None,
    die: int | None = None,
    calling: tuple[str, ...] = (),
) -> dict[str, Led]:
    """The LED picture for the board now: cell name -> Led; cells not named stay dark.

    ``timer``: (side, seconds left, seconds in all) of a running turn clock;
    ``die``: the face the die showed last; ``calling``: where the pieces may be put
    down to make the action a button named (a kick's kind), lit amber, blinking.
    """
    out: dict[str, Led] = {}
    status = position.status()
    sides = position.sides

    def light(square: str, led: Led) -> None:
        if board.has_cell(square) and board.cell(square).leds:
            out[square] = led

    # Lowest priority first; later lights overwrite.
    if last_side is not None and view.state == "in-sync":
        for square in last_squares:
            light(square, Led(dim(side_colour(last_side, sides), 60)))
    # Where a card may go is lit over every other highlight (an area in play, say).
    for meaning, squares in sorted(status.highlights.items(), key=lambda kv: kv[0] in FOREMOST):
        if view.state == "follow" and meaning in AFTER_FOLLOW:
            continue
        for square in squares:
            light(square, _highlight(meaning, sides, square))
    for square in calling:
        light(square, Led(AMBER, "blink"))
    if view.state == "ambiguous":
        for square in view.choice:
            light(square, Led(VIOLET, "pulse"))
    if view.state == "lifted":
        for source, destinations in view.destinations.items():
            light(source, Led(WHITE, "pulse"))
            sent = set(view.sent.get(source, ()))
            for square in destinations:
                light(square, Led(AMBER if square in sent else GREEN))
    if view.state == "remove":
        for square in view.differing:
            light(square, Led(RED, "pulse"))
    if view.state == "follow":
        for square in view.take:
            light(square, Led(WHITE, "pulse"))
        for square in view.put:
            light(square, Led(WHITE, "blink"))
        for square in view.placed:
            light(square, Led(RED, "blink"))
    if timer is not None:
        _timer_lamps(board, timer, sides, light)
    if board.has_cell("die-c"):
        if status.awaiting == "die":
            for pip in PIPS[6] + ("c",):
                light(f"die-{pip}", Led(dim(WHITE, 90), "pulse"))
        elif die in PIPS:
            for pip in PIPS[die]:
                light(f"die-{pip}", Led(WHITE))
    if view.state == "mismatch":
        for square in view.differing:
            light(square, Led(ORANGE))
        for square in view.placed:
            light(square, Led(RED, "blink"))

    outcome = position.outcome()
    for side in sides:
        colour = side_colour(side, sides)
        if outcome is not None:
            if outcome.winner == side:
                for cell in _turn_lamps(board, side):
                    light(cell, Led(colour, "blink"))
            continue
        if side != status.to_move:
            continue
        now = Led(colour, "pulse" if status.awaiting else "steady")
        for lamp in (f"turn-{side}", f"{side}-turn"):
            if board.has_cell(lamp):
                light(lamp, now)
        for k, cell in enumerate(_turn_lamps(board, side, numbered=True), start=1):
            if k < status.action_number:
                light(cell, Led(dim(colour)))
            elif k == status.action_number:
                light(cell, now)
    return out


def highlight_led(meaning: str, sides: tuple[str, ...]) -> Led:
    """How the rules' highlight ``meaning`` shows on the board (for the web view's key)."""
    return _highlight(meaning, sides)


def _highlight(meaning: str, sides: tuple[str, ...], square: str = "") -> Led:
    """How a rules highlight shows: a side's lamp (score, turn: ``home-score-2``) in
    the side's colour; by HIGHLIGHTS; a side's own meaning ("home", "home-score",
    "away-initiative") in that side's colour; else cyan."""
    if meaning in SIDE_LAMPS:
        for side in sides:
            if square.startswith(f"{side}-") or square.endswith(f"-{side}"):
                return Led(side_colour(side, sides), "steady")
    if meaning in HIGHLIGHTS:
        return HIGHLIGHTS[meaning]
    for side in sides:
        if meaning == side or meaning.startswith(f"{side}-"):
            return Led(side_colour(side, sides), "steady")
    return DEFAULT_HIGHLIGHT


#: The die tray's pips for each face: top/middle/bottom, left/centre/right.
PIPS = {1: ("c",), 2: ("tl", "br"), 3: ("tl", "c", "br"), 4: ("tl", "tr", "bl", "br"),
        5: ("tl", "tr", "c", "bl", "br"), 6: ("tl", "tr", "ml", "mr", "bl", "br")}


def _timer_lamps(board: Board, timer: tuple[str, float, float], sides: tuple[str, ...],
                 light: Callable[[str, Led], None]) -> None:
    """``timer-<side>-1`` ... ``-n``: as many lit as the fraction of the time left (rounded
    up), in the side's colour; the last one blinks red."""
    side, left, total = timer
    lamps = []
    while board.has_cell(f"timer-{side}-{len(lamps) + 1}"):
        lamps.append(f"timer-{side}-{len(lamps) + 1}")
    if not lamps or total <= 0:
        return
    lit = min(len(lamps), max(0, -int(-left * len(lamps) // total)))  # ceil
    for k, lamp in enumerate(lamps[:lit], start=1):
        light(lamp, Led(RED, "blink") if lit == 1 else Led(side_colour(side, sides)))


def _turn_lamps(board: Board, side: str, *, numbered: bool = False) -> list[str]:
    """The side's turn lamps: ``turn-<side>`` and/or ``turn-<side>-1``, ``-2``, ..."""
    lamps = [] if numbered else [n for n in (f"turn-{side}", f"{side}-turn") if board.has_cell(n)]
    k = 1
    while board.has_cell(f"turn-{side}-{k}"):
        lamps.append(f"turn-{side}-{k}")
        k += 1
    return lamps


def leds_equal(a: Mapping[str, Led], b: Mapping[str, Led]) -> bool:
    return dict(a) == dict(b)
