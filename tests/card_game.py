"""A small card game for the table-side tests of the card mats, so they do not
wait on (or break with) the real card engines.

Played on the Magic Number Eleven mat with a card set written to a tmp folder:
each side holds its own cards (an unseen pool); on its turn it places one card
face up on an empty cell of its own field rows (hundreds of candidate actions),
or face down on one of its synergy places (hidden from the other side and from
spectators), or draws from the shared deck (no sensor sees that: a choice). The
deck lies on ``synergy-deck`` as a pile whose top card is unknown (``tag:*``).
It follows the engine contract of masume.rules.base, with seen_by,
notation_for and a check_cards.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Hashable, Iterator

from masume.cards import CardSet, load_card_set
from masume.rules.base import (
    ANY_CARD,
    IllegalAction,
    Legend,
    Light,
    NotationError,
    Outcome,
    Status,
    TableView,
)

GAME = "tiny-cards"
BOARD = "magic-number-eleven"
SIDES = ("home", "away")
FIELD = {side: tuple(f"{side[0].upper()}{rank}{file}" for rank in "1234" for file in "abcdef")
         for side in SIDES}
SYNERGY = {side: tuple(f"{side}-synergy-{n}" for n in (1, 2, 3)) for side in SIDES}
DECK = "synergy-deck"


def write_card_set(folder: Path, per_side: int = 20, deck: int = 6, tagged: bool = True) -> Path:
    """A card set file: ``per_side`` player cards a side, ``deck`` deck cards."""
    lines = ['# a test set', 'id = "tiny"', f'game = "{GAME}"', 'title = "Tiny test cards"',
             'notice = "test cards"', ""]
    n = 0
    for side in SIDES:
        for k in range(1, per_side + 1):
            n += 1
            tag = f'tags = ["04{n:012X}"]' if tagged else ""
            lines += ["[[card]]", f'id = "{side[0].upper()}{k:02d}"',
                      f'name = "{side.title()} player {k}"', 'kind = "player"',
                      f'side = "{side}"', tag, ""]
    for k in range(1, deck + 1):
        n += 1
        lines += ["[[card]]", f'id = "D{k:02d}"', f'name = "Deck card {k}"', 'kind = "deck"',
                  f'tags = ["04{n:012X}"]' if tagged else "", ""]
    path = folder / "tiny.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@dataclass(frozen=True)
class Place:
    copy: str
    cell: str

    def __str__(self) -> str:
        return f"{self.copy}@{self.cell}"


@dataclass(frozen=True)
class Draw:
    def __str__(self) -> str:
        return "draw"


@dataclass(frozen=True)
class Position:
    cards: CardSet
    hands: tuple[tuple[str, ...], tuple[str, ...]]
    placed: tuple[tuple[str, str], ...] = ()  # (cell, copy id)
    deck: int = 0
    drawn: tuple[int, int] = (0, 0)
    turn: int = 0
    applied: list = field(default_factory=lambda: [0], compare=False, hash=False, repr=False)
    game: ClassVar[str] = GAME
    sides: ClassVar[tuple[str, ...]] = SIDES
    legend: ClassVar[Legend] = Legend(
        {"home": (0, 90, 255), "away": (255, 30, 0)},
        {"legal": Light((0, 255, 60), foremost=True), "area": Light((0, 60, 140)),
         "score": Light(None), "turn": Light(None)})

    @property
    def card_set(self) -> CardSet:
        return self.cards

    @property
    def mover(self) -> str:
        return SIDES[self.turn % 2]

    def legal_actions(self) -> Iterator[Hashable]:
        if self.outcome():
            return
        side = self.turn % 2
        taken = {cell for cell, _ in self.placed}
        for copy in self.hands[side]:
            for cell in FIELD[SIDES[side]] + SYNERGY[SIDES[side]]:
                if cell not in taken:
                    yield Place(copy, cell)
        if self.deck:
            yield Draw()

    def is_legal(self, action: Hashable) -> bool:
        if self.outcome():
            return False
        if isinstance(action, Draw):
            return self.deck > 0
        side = SIDES[self.turn % 2]
        return (isinstance(action, Place) and action.copy in self.hands[self.turn % 2]
                and action.cell in FIELD[side] + SYNERGY[side]
                and action.cell not in {cell for cell, _ in self.placed})

    def apply(self, action: Hashable) -> "Position":
        self.applied[0] += 1
        if not self.is_legal(action):
            raise IllegalAction(f"{action} is not legal here")
        side = self.turn % 2
        hands = list(self.hands)
        if isinstance(action, Draw):
            drawn = list(self.drawn)
            drawn[side] += 1
            return Position(self.cards, self.hands, self.placed, self.deck - 1, tuple(drawn),
                            self.turn + 1, applied=self.applied)
        hands[side] = tuple(c for c in hands[side] if c != action.copy)
        placed = tuple(sorted(self.placed + ((action.cell, action.copy),)))
        return Position(self.cards, tuple(hands), placed, self.deck, self.drawn, self.turn + 1,
                        applied=self.applied)

    def layout(self):
        out = {cell: (self.cards.copy(copy).piece,) for cell, copy in self.placed}
        if self.deck:
            out[DECK] = (ANY_CARD,)
        return out

    def status(self) -> Status:
        taken = {cell for cell, _ in self.placed}
        free = tuple(c for c in FIELD[self.mover] + SYNERGY[self.mover] if c not in taken)
        return Status(to_move=self.mover, message=f"{self.mover} to place a card",
                      highlights={"legal": free, "area": FIELD[self.mover],
                                  "score": ("home-score-1", "away-score-1")})

    def outcome(self) -> Outcome | None:
        if not self.hands[self.turn % 2]:
            return Outcome(None, "no cards")
        return None

    def _face_down(self, cell: str) -> bool:
        return "synergy" in cell

    def seen_by(self, viewer: str | None) -> TableView:
        cells = {}
        for cell, copy in self.placed:
            owner = cell.split("-")[0] if "-" in cell else ("home" if cell[0] == "H" else "away")
            card = self.cards.copy(copy).card
            if self._face_down(cell) and viewer != owner:
                cells[cell] = ("face down",)
            else:
                cells[cell] = (f"{copy} {card.name}",)
        if self.deck:
            cells[DECK] = (f"deck ({self.deck})",)
        hand = ()
        if viewer in SIDES:
            hand = tuple(f"{c} {self.cards.copy(c).card.name}"
                         for c in self.hands[SIDES.index(viewer)])
        panel = (("deck", str(self.deck)),) + tuple(
            (f"{side} hand", str(len(self.hands[k]))) for k, side in enumerate(SIDES))
        return TableView(viewer, cells, hand, panel)

    def notation(self, action: Hashable) -> str:
        return str(action)

    def notation_for(self, action: Hashable, viewer: str | None) -> str:
        if isinstance(action, Place) and self._face_down(action.cell) and viewer != self.mover:
            return f"?@{action.cell}"
        return str(action)

    def parse_action(self, text: str) -> Hashable:
        text = text.strip()
        if text == "draw":
            action: Hashable = Draw()
        elif "@" in text:
            copy, cell = text.split("@", 1)
            action = Place(copy, cell)
        else:
            raise NotationError(f"{text!r} is not an action")
        if not self.is_legal(action):
            raise IllegalAction(f"{text} is not legal here")
        return action

    def diagram(self) -> str:
        return " ".join(f"{cell}={copy}" for cell, copy in self.placed)

    def to_text(self) -> str:
        return self.diagram()


class Rules:
    name = GAME
    board = BOARD

    def __init__(self, path: Path | None = None) -> None:
        self.path = path

    def start(self, **options) -> Position:
        cards = load_card_set(options.get("cards") or self.path)
        hands = tuple(tuple(c.id for c in cards.copies("player") if c.card["side"] == side)
                      for side in SIDES)
        return Position(cards, hands, deck=len(cards.copies("deck")))

    def from_text(self, text: str, **options) -> Position:
        raise NotationError("not kept")

    def resign(self, position: Position, side: str) -> Position:
        return position

    def with_card_source(self, cards: object) -> Rules:
        return self

    @staticmethod
    def check_cards(card_set: CardSet) -> list[str]:
        return [f"card {c.id}: side must be home or away" for c in card_set
                if c.kind == "player" and c.get("side") not in SIDES]


#: As a registered game's module has it (tests register it in masume.games.GAMES).
RULES = Rules()
