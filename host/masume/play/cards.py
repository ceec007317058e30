"""The table's side of the card games: what one viewer may see, and the card picker
of the simulated mat.

A game whose position hides things (face-down cards, hands: it follows
:class:`masume.rules.base.HidesInformation`) says what each viewer may see. The
table's state for a viewer (a side, or None for a spectator) then carries:

- ``view``: the engine's :class:`masume.rules.base.TableView` for that viewer
  (card labels per cell, the viewer's hand, the panel lines) and the viewers;
- ``pieces``: on card cells, ``card`` for each card lying there, never its tag (a
  tag names the card to anyone holding the set file; :func:`public_pieces`, which
  also hides the cards of a replay's positions);
- ``moves``: each action through ``notation_for(action, viewer)`` (written so by
  the table session);
- ``choices``: only those the viewer may read as they are;
- the tracker's message only if it names no card the viewer may not see.

Nothing here knows a game: it works from ``seen_by``, ``notation_for`` and the
card set of a position on cards (:class:`masume.rules.base.OnCards`).
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from masume.cards import CardSet
from masume.rules.base import ANY_CARD, AnyPosition, HidesInformation, HoldsHands, OnCards

#: What ``pieces`` shows for a card on a card cell, whatever card it is.
CARD = "card"


def cards_of(position: AnyPosition) -> CardSet | None:
    """The card set the game is played with, on a card mat; None for other games."""
    return position.card_set if isinstance(position, OnCards) else None


def viewer_of(position: AnyPosition, viewer: str | None) -> str | None:
    """A side of the game, or None (a spectator) for anything else."""
    return viewer if viewer in position.sides else None


@runtime_checkable
class DrawsMarks(Protocol):
    """Rules whose cards carry marks the page draws at the cells' edges (Magic Number
    Eleven's half symbols): cell -> ``n``/``s``/``e``/``w`` (the board's compass,
    +y north) or ``c`` (the middle) -> the mark's name. Only what lies face up."""

    def edge_marks(self, position: Any) -> Mapping[str, Mapping[str, str]]: ...


def for_viewer(state: dict[str, Any], *, position: AnyPosition, board: Any,
               viewer: str | None, choices: Iterable[Hashable],
               marks: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, Any]:
    """The table's whole ``state`` as ``viewer`` may see it (unchanged for games
    that hide nothing); ``marks``: the rules' :class:`DrawsMarks`, as ``view.marks``."""
    if not isinstance(position, HidesInformation):
        return state
    viewer = viewer_of(position, viewer)
    table_view = position.seen_by(viewer)
    out = dict(state)
    out["pieces"] = public_pieces(state.get("pieces", {}), position=position, board=board)
    out["view"] = {
        "viewer": viewer,
        "viewers": list(position.sides),
        "cells": {cell: list(labels) for cell, labels in table_view.cells.items()},
        "hand": list(table_view.hand),
        "panel": [[name, value] for name, value in table_view.panel],
        "marks": {cell: dict(edges) for cell, edges in (marks or {}).items()},
    }
    out["choices"] = [c for c in state.get("choices", [])
                      if _readable(position, c["text"], choices, viewer)]
    cards = cards_of(position)
    tracker = dict(state.get("tracker", {}))
    if cards is not None and tracker.get("message"):
        tracker["message"] = _unnamed(tracker["message"], cards, _seen_text(out))
        out["tracker"] = tracker
    return out


def public_pieces(pieces: Mapping[str, Iterable[str]], *, position: Any,
                  board: Any) -> dict[str, list[str]]:
    """What lies on each cell (``pieces`` as sensed, or a position's ``layout()``) as
    anyone may see it: in a game that hides cards, ``card`` for each card on a card
    cell, whatever it is."""
    if not isinstance(position, HidesInformation):
        return {cell: list(stack) for cell, stack in pieces.items()}
    card_cells = {c.name for c in board.sensed if c.sensor == "card"}
    return {cell: ([CARD] * len(list(stack)) if cell in card_cells else list(stack))
            for cell, stack in pieces.items()}


def _readable(position: Any, text: str, choices: Iterable[Hashable], viewer: str | None) -> bool:
    for action in choices:
        if position.notation(action) == text:
            return bool(position.notation_for(action, viewer) == text)
    return False


def from_hand(position: AnyPosition, text: str) -> tuple[str, bool]:
    """``text`` (an action's notation in ``position``) with each card of the set that lies
    nowhere on the table (in a hand, or a pile's unseen cards) as ``?``, and whether any
    was. A hand is a count to the engines: an action that names such a card means "a
    card from the hand" (or the pile's top card), whichever card the hand lays
    (docs/ai.md, "The computer's hand").

    >>> from masume.games import load_rules
    >>> p = load_rules("eyeshield21").start()
    >>> from_hand(p, "F01.1@home-character-1")
    ('?@home-character-1', True)
    """
    cards = cards_of(position)
    if cards is None:
        return text, False
    lying = {piece for stack in position.layout().values() for piece in stack}
    words = text
    for copy in cards.copies():
        if copy.id in words and copy.piece not in lying:
            words = re.sub(rf"(?<![\w.]){re.escape(copy.id)}(?![\w.])", "?", words)
    return words, words != text


@dataclass(frozen=True)
class HandRead:
    """What ``side``'s hand slots read (:func:`hand_read`): ``position`` with the cards
    read known as the side's hand (``HoldsHands.holding``), ``slots`` card -> the slot it
    lies on; or ``waiting``: what the players must do first (cards still to lay on the
    slots, a card that cannot be there), said on the page."""

    position: Any
    slots: Mapping[str, str]
    waiting: str = ""
    #: How many hand slots the side has (its hand's cap by its own choice), or None.
    capacity: int | None = None
    #: Cards of the hand past its slots, which nobody read: the side's search does not
    #: know them (said by :attr:`unread_said`).
    unread: int = 0

    def unread_said(self, side: str) -> str:
        """What the table says of a hand larger than its slots (docs/ai.md, "A hand larger
        than its slots"), or "" when every card of the hand was read."""
        if not self.unread:
            return ""
        slots = self.capacity or 0
        return (f"{side}'s hand holds {slots + self.unread} cards, {self.unread} past its "
                f"{slots} slots: keep the card(s) past them face down beside the slots, "
                f"unread; the computer does not know them, and a card it plays from them is "
                f"said as one kept beside its slots")


def hand_read(position: AnyPosition, board: Any, readings: Mapping[str, Any] | None,
              side: str) -> HandRead:
    """``side``'s hand as its hand slots read it (docs/ai.md, "The computer's hand"): a
    game that knows hands card by card (:class:`masume.rules.base.HoldsHands`) on a
    board with slots for the side. Elsewhere the position as it is (the hand a count).
    It waits until every slot the hand can fill holds a card (a hand larger than the
    slots: the rest unread, counted in ``unread``)."""
    slots = sorted(board.hand_slots(side), key=lambda cell: _slot_number(cell.name))
    cards = cards_of(position)
    if not slots or cards is None or not isinstance(position, HoldsHands):
        return HandRead(position, {})
    read: dict[str, str] = {}
    for cell in slots:
        uid = (readings or {}).get(cell.name)
        if not uid:
            continue
        copy = cards.by_tag(str(uid).upper())
        if copy is None:
            return HandRead(position, {}, f"an unknown card on {cell.name}: take it off "
                                          "(enroll it with masume cards enroll)")
        read[copy.id] = cell.name
    size = position.hand_size(side)
    wanted = min(size, len(slots))
    if len(read) < wanted:
        return HandRead(position, {}, f"lay the {side} hand's {wanted - len(read)} card(s) "
                                      f"drawn face down on its free hand slots "
                                      f"({slots[0].name} to {slots[-1].name})")
    if len(read) > size:
        # A card of it discarded unseen (an opponent's effect, a hand limit's discard): no
        # one may know which, so any (docs/ai.md, "A discard nobody sees").
        gone = len(read) - size
        return HandRead(position, {}, f"{side}'s hand holds {size} card(s) and its hand slots "
                                      f"{len(read)}: {gone} went to the discard pile unseen: "
                                      f"take any {gone} of them off its hand slots "
                                      f"({slots[0].name} to {slots[-1].name}), without "
                                      f"looking, and lay {'it' if gone == 1 else 'them'} "
                                      f"face down on the discard pile")
    try:
        held = position.holding(side, tuple(read))
    except ValueError as exc:
        # (its words name a card of the hand: said only as where the slot is)
        wrong = next((slot for copy, slot in read.items()
                      if copy in str(exc)), "a hand slot")
        return HandRead(position, {}, f"the card on {wrong} cannot be in {side}'s hand: take it "
                                      "off and lay the card drawn")
    return HandRead(held, read, capacity=len(slots), unread=max(0, size - len(slots)))


def _slot_number(name: str) -> int:
    last = name.rsplit("-", 1)[-1]
    return int(last) if last.isdigit() else 0


def held_card(position: AnyPosition, action: Any, slots: Mapping[str, str]) -> str | None:
    """The card of the hand slots ``slots`` (card -> slot) that ``action`` plays, if any."""
    text = position.notation(action)
    for copy in slots:
        if re.search(rf"(?<![\w.]){re.escape(copy)}(?![\w.])", text):
            return copy
    return None


def said_to_all(position: AnyPosition, message: str) -> str:
    """``message`` as the table's terminal may say it (everyone reads it): a card that
    is not face up for all is "a card"."""
    cards = cards_of(position)
    if cards is None or not isinstance(position, HidesInformation):
        return message
    view = position.seen_by(None)
    seen = [label for labels in view.cells.values() for label in labels]
    seen += [f"{k} {v}" for k, v in view.panel]
    return _unnamed(message, cards, "\n".join(seen))


def _unnamed(message: str, cards: CardSet, seen: str) -> str:
    """``message`` with every card the viewer may not see called "a card" (its name and
    copy id, ``Aoki (F01.1)``, its name, its copy id or its tag), the reason and the next
    step kept. The name and id together go first for every copy: a name replaced alone
    first (another copy's of the same card) left ``a card (S09.2)``.

    >>> from masume.cards import load_card_set
    >>> cards = load_card_set("eyeshield21-demo")
    >>> name = cards.copy("S09.2").card.name
    >>> _unnamed(f"{name} (S09.2) is on away-pass-4; S09.2 again", cards, "")
    'a card is on away-pass-4; a card again'
    """
    copies = cards.copies()
    for copy in copies:
        named = f"{copy.card.name} ({copy.id})"
        if named in message and copy.card.name not in seen:
            message = message.replace(named, "a card")
    for copy in copies:
        for word in (copy.tag, copy.card.name):
            if word and word in message and word not in seen:
                message = message.replace(word, "a card")
        if copy.id in message and not re.search(_alone(copy.id), seen):
            message = re.sub(_alone(copy.id), "a card", message)
    return message


def _alone(copy_id: str) -> str:
    """A pattern of ``copy_id`` as a word of its own (not part of a longer id)."""
    return rf"(?<![\w.]){re.escape(copy_id)}(?![\w.])"


def _seen_text(state: Mapping[str, Any]) -> str:
    view = state["view"]
    parts = [label for labels in view["cells"].values() for label in labels]
    parts += list(view["hand"]) + [f"{k} {v}" for k, v in view["panel"]]
    parts += [a for turn in state["moves"] for a in turn["actions"]]
    parts += [c["text"] for c in state["choices"]]
    return "\n".join(parts)


# ---- the simulated mat's card picker ------------------------------------------------------


def card_list(position: Any) -> list[dict[str, str]]:
    """Every physical card of the game's set, for the picker: id, name, kind.

    Static (the set is public): it says nothing of where a card lies."""
    cards = cards_of(position)
    if cards is None:
        return []
    return [{"id": c.id, "name": c.card.name, "kind": c.card.kind} for c in cards.copies()]


def card_piece(position: Any, copy_id: str) -> str:
    """The piece the simulated mat puts down for card ``copy_id``: its tag."""
    cards = cards_of(position)
    if cards is None:
        raise ValueError("this game has no cards")
    try:
        copy = cards.copy(copy_id)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    if not copy.tag:
        raise ValueError(f"{copy.card.name} ({copy.id}) has no tag in card set {cards.id}: "
                         "enroll it with masume cards enroll")
    return copy.piece


def set_up(layout: Mapping[str, tuple[str, ...]], position: Any) -> Iterator[tuple[str, str]]:
    """(cell, piece) to stand a layout on the simulated mat: a pile of unknown top
    card (``tag:*``) gets a card of the set that lies nowhere else."""
    cards = cards_of(position)
    used = {p for stack in layout.values() for p in stack}
    spare = ([c.piece for c in cards.copies() if c.tag and c.piece not in used][::-1]
             if cards else [])
    for cell, pieces in layout.items():
        for piece in pieces:
            if piece == ANY_CARD:
                if not spare:
                    continue
                piece = spare.pop()
            yield cell, piece
