"""The LED policy: what the board lights, from the game's status and the tracker's view.

A pure function of what the rules and the tracker say; it knows no game. Status
lights are found by name in the board definition: ``turn-<side>-<n>`` shows whose
turn it is and which action of the turn (dim: done, bright: now); a board with one
lamp per side names it ``turn-<side>`` (lit while it is the side's turn). After the
game the winner's lamps blink.

What a square shows, most urgent first:

| meaning | colour | pattern |
| --- | --- | --- |
| a piece put where it does not belong | magenta (no side's colour) | blink |
| a square that differs from the game | orange | steady |
| ... where a piece must be put back to show the game | white | blink |
| pieces the last action took off the board, still standing | red | pulse |
| where a lifted piece may go | green | steady |
| where only what the lifted piece held may go (a pass, a kick) | amber | steady |
| the lifted piece's own square | white | pulse |
| after a die roll (or a choice): where a piece must be put to show the game | white | blink |
| ... and where a piece must be taken from | white | pulse |
| the reading chosen when the sensors allowed several | violet | pulse |
| the rules' highlights (``Status.highlights``) | as the game's legend says | |
| an action lit to carry out (the computer's, a hint): where pieces go | the side's colour | blink |
| ... where they are taken from | the side's colour | pulse |
| ... the way the ball goes (the rules' highlights after it) | the side's colour, dim | steady |
| a highlight not in the legend, named for a side (``home-score``) | the side's colour | steady |
| the squares of the last action | the mover's colour, dim | steady |

Each game declares its sides' colours and how its highlights show
(:class:`masume.rules.base.Legend`, ``position.legend``); the highlights its legend
marks ``foremost`` are lit over the others, and those marked ``when_still`` only while
the board shows the game (not while the pieces follow a roll).

Frame lamps, when the board has them: ``timer-<side>-<n>`` count a turn's time (or
the side's own clock) down (lit in the side's colour, the last one blinking; on a board
without them the side's turn lamps blink in its last tenth, or last 10 s), and the die tray's pips
``die-<pip>`` (tl tr ml c mr bl br) show the last roll, or breathe while the rules
wait for the die.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from masume.boards import Board
from masume.link.events import Led
from masume.rules.base import RGB, AnyPosition, Legend, Light
from masume.tracker import View

RED = (255, 0, 0)
#: A piece put where it does not belong: magenta, not red, because the sides' colours
#: (each game's legend) include reds, (255, 30, 0) as near to (255, 0, 0) as a LED
#: shows, and a side's colour blinks where the computer's action puts a piece. Its hue
#: (300 degrees) stays at least WRONG_HUE_GAP from every side's (tests/test_leds_colours.py).
WRONG = (255, 0, 255)
WRONG_HUE_GAP = 60.0
ORANGE = (255, 110, 0)
GREEN = (0, 255, 60)
WHITE = (255, 255, 255)
VIOLET = (170, 0, 255)
#: The second colour of a lift: where only what the lifted piece held goes (View.sent).
AMBER = (255, 150, 0)


#: How a highlight shows that the game's legend does not name.
DEFAULT_HIGHLIGHT = Led((0, 200, 200), "steady")


@dataclass(frozen=True)
class Lit:
    """An action lit for the players to carry out on the board (the computer's action,
    or a hint), in ``side``'s colour: ``take`` where pieces are taken from, ``put``
    where pieces go, ``path`` the way the ball goes (what the rules highlight after it)."""

    side: str
    take: tuple[str, ...] = ()
    put: tuple[str, ...] = ()
    path: tuple[str, ...] = ()


def dim(rgb: RGB, level: int = 40) -> RGB:
    red, green, blue = (v * level // 255 for v in rgb)
    return red, green, blue


def picture(
    board: Board,
    position: AnyPosition,
    view: View,
    *,
    last_squares: tuple[str, ...] = (),
    last_side: str | None = None,
    timer: tuple[str, float, float] | None = None,
    die: int | None = None,
    calling: tuple[str, ...] = (),
    lit: Lit | None = None,
) -> dict[str, Led]:
    """The LED picture for the board now: cell name -> Led; cells not named stay dark.

    ``timer``: (side, seconds left, seconds in all) of a running turn clock;
    ``die``: the face the die showed last; ``calling``: where the pieces may be put
    down to make the action a button named (a kick's kind), lit amber, blinking;
    ``lit``: an action to carry out (:class:`Lit`), over the rules' highlights.
    """
    out: dict[str, Led] = {}
    status = position.status()
    legend = position.legend

    def light(square: str, led: Led) -> None:
        if board.has_cell(square) and board.cell(square).leds:
            out[square] = led

    # Lowest priority first; later lights overwrite.
    if last_side is not None and view.state == "in-sync":
        for square in last_squares:
            light(square, Led(dim(legend.sides[last_side], 60)))
    # Where a card may go is lit over every other highlight (an area in play, say).
    shown = legend.highlights
    for meaning, squares in sorted(status.highlights.items(),
                                   key=lambda kv: kv[0] in shown and shown[kv[0]].foremost):
        if view.state == "follow" and meaning in shown and shown[meaning].when_still:
            continue
        for square in squares:
            light(square, highlight_led(meaning, legend, square))
    if lit is not None and lit.side in legend.sides:
        colour = legend.sides[lit.side]
        for square in lit.path:
            light(square, Led(dim(colour, 110)))
        for square in lit.take:
            light(square, Led(colour, "pulse"))
        for square in lit.put:
            light(square, Led(colour, "blink"))
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
            light(square, Led(WRONG, "blink"))
    if timer is not None:
        _timer_lamps(board, timer, legend, light)
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
        for square in view.put:
            light(square, Led(WHITE, "blink"))
        for square in view.placed:
            light(square, Led(WRONG, "blink"))

    outcome = position.outcome()
    for side, colour in legend.sides.items():
        if outcome is not None:
            if outcome.winner == side:
                for cell in _turn_lamps(board, side):
                    light(cell, Led(colour, "blink"))
            continue
        if side != status.to_move:
            continue
        now = Led(colour, "pulse" if status.awaiting else "steady")
        if (timer is not None and timer[0] == side and timer[1] <= max(10.0, timer[2] / 10)
                and not board.has_cell(f"timer-{side}-1")):
            now = Led(colour, "blink")  # a board without timer lamps: its time runs out
        if board.has_cell(f"turn-{side}"):
            light(f"turn-{side}", now)
        for k, cell in enumerate(_turn_lamps(board, side, numbered=True), start=1):
            if k < status.action_number:
                light(cell, Led(dim(colour)))
            elif k == status.action_number:
                light(cell, now)
    return out


def highlight_led(meaning: str, legend: Legend, square: str = "") -> Led:
    """How the rules' highlight ``meaning`` shows on ``square`` (none: for the web view's
    key): as the game's legend says (a side's lamp in the colour of the side its name
    says); a meaning the legend does not name but named for a side ("home",
    "home-score") in that side's colour; else in a plain colour."""
    light = legend.highlights.get(meaning)
    if light is not None:
        return _led(light, legend, square)
    for side, colour in legend.sides.items():
        if meaning == side or meaning.startswith(f"{side}-"):
            return Led(colour, "steady")
    return DEFAULT_HIGHLIGHT


def _led(light: Light, legend: Legend, square: str) -> Led:
    if light.rgb is not None:
        return Led(light.rgb, light.pattern)
    side = legend.side_of(square)
    return Led(legend.sides[side], "steady") if side is not None else DEFAULT_HIGHLIGHT


#: The die tray's pips for each face: top/middle/bottom, left/centre/right.
PIPS = {1: ("c",), 2: ("tl", "br"), 3: ("tl", "c", "br"), 4: ("tl", "tr", "bl", "br"),
        5: ("tl", "tr", "c", "bl", "br"), 6: ("tl", "tr", "ml", "mr", "bl", "br")}


def _timer_lamps(board: Board, timer: tuple[str, float, float], legend: Legend,
                 light: Callable[[str, Led], None]) -> None:
    """``timer-<side>-1`` ... ``-n``: as many lit as the fraction of the time left (rounded
    up), in the side's colour; the last one blinks red."""
    side, left, total = timer
    lamps: list[str] = []
    while board.has_cell(f"timer-{side}-{len(lamps) + 1}"):
        lamps.append(f"timer-{side}-{len(lamps) + 1}")
    if not lamps or total <= 0:
        return
    lit = min(len(lamps), max(0, -int(-left * len(lamps) // total)))  # ceil
    for k, lamp in enumerate(lamps[:lit], start=1):
        light(lamp, Led(RED, "blink") if lit == 1 else Led(legend.sides[side]))


def _turn_lamps(board: Board, side: str, *, numbered: bool = False) -> list[str]:
    """The side's turn lamps: ``turn-<side>`` and/or ``turn-<side>-1``, ``-2``, ..."""
    lamps = [] if numbered or not board.has_cell(f"turn-{side}") else [f"turn-{side}"]
    k = 1
    while board.has_cell(f"turn-{side}-{k}"):
        lamps.append(f"turn-{side}-{k}")
        k += 1
    return lamps


def leds_equal(a: Mapping[str, Led], b: Mapping[str, Led]) -> bool:
    return dict(a) == dict(b)
