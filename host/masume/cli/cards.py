"""``masume cards``: the card sets of the card games (docs/cards.md).

    masume cards list                      the card sets that ship with masume
    masume cards check FILE|NAME           every problem of a set, one a line (exit 1 if any)
    masume cards show NAME                 the cards, their tags, which copies lack one
    masume cards enroll --set FILE         give each physical card its tag

``enroll`` reads the mat: put a card on any zone, the reader's tag is shown, and
you say which card of the set it is (its id, or words of its name); the tag goes
into the set file, comments and layout kept. A tag already enrolled is refused
with the card it belongs to. With ``--port`` it reads that board; without, an
attached masume board, else the simulated mat, whose zones you fill from the
same terminal: ``place H2b tag:04A1B2C3`` (and ``lift H2b``), as in ``masume sim``.
Type ``quit`` (or end the input) to stop.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from masume.cli import described


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("cards", help="card sets of the card games: list, check, show, enroll",
                            description=described(__doc__),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    cmds = parser.add_subparsers(dest="cards_command", metavar="COMMAND", required=True)
    p = cmds.add_parser("list", help="the card sets that ship with masume")
    p.set_defaults(handler=run_list)
    p = cmds.add_parser("check", help="check a card set: every problem, one a line")
    p.add_argument("set", metavar="FILE|NAME")
    p.set_defaults(handler=run_check)
    p = cmds.add_parser("show", help="the cards of a set, their tags, which copies lack one")
    p.add_argument("set", metavar="FILE|NAME")
    p.set_defaults(handler=run_show)
    p = cmds.add_parser("enroll", help="give each physical card its tag, read on the mat")
    p.add_argument("--set", required=True, metavar="FILE",
                   help="the card set file to write the tags into")
    p.add_argument("--port",
                   help="the mat's serial port (default: find one, else the simulated mat)")
    p.add_argument("--simulate", action="store_true",
                   help="use the simulated mat even if one is attached")
    p.add_argument("--board", help="board definition id (default: the set's game's mat)")
    p.set_defaults(handler=run_enroll)


# ---- list, check, show ---------------------------------------------------------------


def run_list(args: argparse.Namespace) -> int:
    from masume.cards import CardSetError, load_card_set, shipped_sets

    names = shipped_sets()
    if not names:
        print("no card sets ship with masume yet")
    for name in names:
        try:
            cards = load_card_set(name)
        except CardSetError as exc:
            print(f"{name}: broken: {exc}")
            continue
        copies = len(cards.copies())
        untagged = len(cards.untagged())
        tags = f"{copies - untagged} of {copies} copies tagged"
        print(f"{name}  {cards.game}  {len(cards)} cards, {tags}  {cards.title}")
    return 0


def problems_of(name: str) -> tuple[Any, list[str]]:
    """The card set (or None) and every problem found, generic and the game's own."""
    from masume.cards import CardSetError, find_card_set, load_card_set
    from masume.games import load_rules
    from masume.rules import CardRules

    try:
        path = find_card_set(name)
    except CardSetError as exc:
        return None, [str(exc)]
    try:
        cards = load_card_set(path)
    except CardSetError as exc:
        return None, _split(str(exc), path)
    problems: list[str] = []
    try:
        rules = load_rules(cards.game)
    except ValueError as exc:
        return cards, [f"{path}: game: {exc}"]
    if isinstance(rules, CardRules):
        try:
            problems += [f"{path}: {p}" for p in rules.check_cards(cards)]
        except Exception as exc:  # noqa: BLE001 (a set odd enough to trip the game's checks)
            problems.append(f"{path}: the {cards.game} checks failed on this set: "
                            f"{type(exc).__name__}: {exc}")
    return cards, problems


def warnings_of(cards: Any) -> list[str]:
    """The game's warnings about a set that passed its checks (never a refusal):
    :class:`masume.rules.WarnsOfCards`."""
    from masume.games import load_rules
    from masume.rules import WarnsOfCards

    rules = load_rules(cards.game)
    return [str(w) for w in rules.card_warnings(cards)] if isinstance(rules, WarnsOfCards) else []


def _read_on_a_mat(game: str) -> bool:
    """Do the game's cards lie on card readers (so each needs a tag)? Masume Tactics'
    specialist cards, say, are chosen before kick-off and never lie on its board."""
    from masume.boards import BoardError, load_board
    from masume.games import load_rules

    try:
        return any(c.sensor == "card" for c in load_board(load_rules(game).board).sensed)
    except (BoardError, ValueError):  # an unknown game: the checks said so already
        return True


def _split(message: str, path: Path) -> list[str]:
    """A CardSetError's problems, one a line, each with the file."""
    prefix = f"{path}: "
    body = message.removeprefix(prefix)
    return [prefix + p for p in body.split("; ") if p]


def run_check(args: argparse.Namespace) -> int:
    cards, problems = problems_of(args.set)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    for warning in warnings_of(cards):
        print(f"{cards.path}: warning: {warning}")
    untagged = len(cards.untagged())
    note = (f"; {untagged} copies have no tag yet (masume cards enroll)"
            if untagged and _read_on_a_mat(cards.game) else "")
    print(f"{cards.path}: ok: {cards.id} for {cards.game}, {len(cards)} cards, "
          f"{len(cards.copies())} copies{note}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from masume.cards import CardSetError, load_card_set

    try:
        cards = load_card_set(args.set)
    except CardSetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{cards.id}: {cards.title} ({cards.game}), {cards.path}")
    if cards.notice:
        print(cards.notice)
    for card in cards:
        extra = ", ".join(f"{k} {_short(v)}" for k, v in card.fields.items())
        print(f"{card.id}  {card.name}  [{card.kind}]" + (f"  {extra}" if extra else ""))
        copies = [c for c in cards.copies() if c.card is card]
        for copy in copies:
            print(f"    {copy.id}: {copy.tag or '(no tag)'}")
    untagged = cards.untagged()
    if untagged:
        print(f"{len(untagged)} copies lack a tag: {', '.join(c.id for c in untagged)}")
    else:
        print("every copy has a tag")
    return 0


def _short(value: Any) -> str:
    if isinstance(value, list):
        return "/".join(str(v) for v in value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}={_short(v)}" for k, v in value.items()) + "}"
    return str(value)


# ---- enroll -----------------------------------------------------------------------------


def enroll_tag(path: Path, card_id: str, tag: str) -> str:
    """Write ``tag`` into the set file as the next untagged copy of ``card_id``.

    Keeps the file's comments and layout (tomlkit) and writes it atomically; the
    result is checked as a card set first. Returns the copy id that got it.
    Raises ValueError saying why (a tag already enrolled, every copy tagged).
    """
    import tomlkit

    from masume.cards import CardSet, normalise_tag

    tag = normalise_tag(tag)
    text = path.read_text(encoding="utf-8")
    cards = CardSet(tomllib.loads(text), path=path, source=text)
    owner = cards.by_tag(tag)
    if owner is not None:
        raise ValueError(f"tag {tag} is already enrolled to {owner.card.name} ({owner.id})")
    card = cards.card(card_id)
    free = [c for c in cards.copies() if c.card is card and not c.tag]
    if not free:
        raise ValueError(f"every copy of {card.name} ({card.id}) has a tag already")
    doc = tomlkit.parse(text)
    entry = next(e for e in doc["card"] if str(e.get("id")) == card.id)
    if "tags" in entry:
        entry["tags"].append(tag)
    else:
        entry["tags"] = [tag]
    new_text = tomlkit.dumps(doc)
    CardSet(tomllib.loads(new_text), path=path, source=new_text)  # still a good set
    tmp = path.with_name(path.name + ".new")
    tmp.write_text(new_text, encoding="utf-8")
    os.replace(tmp, path)
    return free[0].id


def match_cards(cards: Any, text: str) -> list[Any]:
    """The entries ``text`` names: an id or copy id, else every word in the name."""
    text = text.strip()
    if not text:
        return []
    base = text.split(".", 1)[0]
    for card in cards:
        if card.id.lower() == base.lower():
            return [card]
    words = text.lower().split()
    return [c for c in cards if all(w in f"{c.id} {c.name} {c.kind}".lower() for w in words)]


class _Input:
    """Lines of standard input, read by a thread so the mat can be watched meanwhile."""

    def __init__(self, stream: Iterable[str]) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.ended = False
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: Iterable[str]) -> None:
        for line in stream:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def get(self, timeout: float | None = None) -> str | None:
        """The next line; None at the end of input (or, with a timeout, when none came)."""
        if self.ended:
            return None
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            return None
        if line is None:
            self.ended = True
        return line


def run_enroll(args: argparse.Namespace) -> int:
    from masume.boards import BoardError, load_board
    from masume.cards import CardSetError, load_card_set
    from masume.games import load_rules
    from masume.link import BoardMismatch, BoardSession, SerialTransport

    path = Path(args.set)
    try:
        cards = load_card_set(path)
        board_id = args.board
        if not board_id:
            try:
                board_id = load_rules(cards.game).board
            except ValueError as exc:
                raise ValueError(f"{exc}: give the mat with --board") from None
        board = load_board(board_id)
    except (CardSetError, BoardError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not any(c.sensor == "card" for c in board.sensed):
        print(f"error: board {board.id} has no card readers", file=sys.stderr)
        return 2

    port = args.port
    if not port and not args.simulate:
        from masume.cli.play import find_board_port

        port = find_board_port()
    sim = None
    if not port:
        from masume.sim.board import SimulatedBoard

        sim = SimulatedBoard(board, on_log=lambda m: print(f"sim: {m}", file=sys.stderr))
        port = sim.port
    link = BoardSession(SerialTransport(port), expect=board.id, resolve=lambda _id: board).start()
    lines = _Input(sys.stdin)
    try:
        print(f"card set {cards.id} ({path}); mat {board.id} on {port}"
              f"{' (simulated)' if sim else ''}", flush=True)
        print("put a card on any zone of the mat" + (
            " (here: place ZONE tag:UID, lift ZONE)" if sim else "") + "; quit to stop", flush=True)
        for zone, tag in _cards_put_down(link, lines, sim):
            _enroll_one(path, zone, tag, lines)
            print("lift it off and put the next card on", flush=True)
    except BoardMismatch as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    finally:
        link.close()
        if sim:
            sim.close()
    try:
        left = load_card_set(path).untagged()
    except CardSetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(left)} copies still lack a tag" + (f": {', '.join(c.id for c in left[:12])}"
                                                     + (" ..." if len(left) > 12 else "")
                                                     if left else ""), flush=True)
    return 0


def _cards_put_down(link: Any, lines: _Input, sim: Any) -> Iterator[tuple[str, str]]:
    """(zone, tag) each time a card comes to lie on a zone; ends with the input."""
    from masume.cli.sim import execute

    known: dict[str, str | None] = {}
    while True:
        for event in link.events(timeout=0.05):
            if event.type == "snapshot":
                for zone, reading in sorted(event.readings.items()):
                    if isinstance(reading, str) and known.get(zone) != reading:
                        known[zone] = reading
                        yield zone, reading
                known.update({z: r for z, r in event.readings.items() if not isinstance(r, str)})
            elif event.type == "square" and event.square:
                reading = event.reading if isinstance(event.reading, str) else None
                if reading and known.get(event.square) != reading:
                    known[event.square] = reading
                    yield event.square, reading
                known[event.square] = reading
        line = lines.get(timeout=0.01)
        if line is None:
            if lines.ended:
                return
            continue
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            return
        if sim is not None:
            print(execute(sim, words), flush=True)
        else:
            print("waiting for a card on the mat (quit to stop)", flush=True)


def _enroll_one(path: Path, zone: str, raw_tag: str, lines: _Input) -> None:
    from masume.cards import CardSetError, load_card_set, normalise_tag

    try:
        tag = normalise_tag(raw_tag)
    except ValueError as exc:
        print(f"{zone}: {exc}", flush=True)
        return
    print(f"tag {tag} on {zone}", flush=True)
    while True:
        try:
            cards = load_card_set(path)
        except CardSetError as exc:
            print(f"error: {exc}", flush=True)
            return
        owner = cards.by_tag(tag)
        if owner is not None:
            print(f"refused: tag {tag} is already enrolled to {owner.card.name} ({owner.id})",
                  flush=True)
            return
        print("which card is it? (its id, or words of its name; empty: skip)", flush=True)
        answer = lines.get()
        if answer is None or not answer.strip():
            print(f"skipped tag {tag}", flush=True)
            return
        found = match_cards(cards, answer)
        free = [c for c in found if any(k.card is c and not k.tag for k in cards.copies())]
        if not found:
            print(f"no card matches {answer.strip()!r}", flush=True)
            continue
        if len(free) != 1:
            shown = free or found
            more = f" (and {len(shown) - 10} more)" if len(shown) > 10 else ""
            print(("several cards match: " if free else "every copy of these has a tag: ")
                  + ", ".join(f"{c.id} {c.name}" for c in shown[:10]) + more, flush=True)
            continue
        try:
            copy = enroll_tag(path, free[0].id, tag)
        except (ValueError, KeyError, OSError) as exc:
            print(f"refused: {exc}", flush=True)
            return
        print(f"enrolled: tag {tag} is {free[0].name} ({copy}); saved to {path}", flush=True)
        return
