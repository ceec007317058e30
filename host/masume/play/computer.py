"""The computer at the table: its side's actions and the players' hints, thought of off
the thread that runs the table's core.

An :class:`Advisor` lives beside a table's core (:class:`masume.play.core.TableCore`),
wherever that core runs: a home table's thread (:class:`masume.play.table.TableSession`),
the club server's loop (masume.club.runner) or one of its worker processes
(masume.club.pool). The core's runner calls :meth:`Advisor.turn` after each of its
turns, on the core's own thread: when it is the computer's side to act (not the die's,
nor a card turned up from a pile: chance is the board's), the board shows the game and
nothing is lit for this position yet, or a hint was asked, the advisor hands a search
(:func:`masume.ai.advise`) on the position as it stands to this process's search
thread (:func:`searches`: one, however many tables the process runs; the core's thread
goes on reading the board meanwhile). Once the search is done it tells the runner
(``on_ready``, from the search thread), and at the runner's next turn what it found is
lit (:meth:`masume.play.core.TableCore.show`) if the game still stands there; the
table then waits for the players to carry it out (a different action is flagged and
taken back). A hint is the same search for the side to act, asked for by the page's
button or the board's ``hint`` button.

A search that fails is said (the page and the terminal) and the game goes on: the
players may make the computer's action by hand, or ask for a hint; the advisor thinks
again at the next position. Nothing it does raises into the table's runner.

The side the computer plays and its level are the record's ``Computer`` header
(``away casual``: :func:`computer_of`), so a table that starts again from its save
(``masume play --resume``, a club server restarted or taken over) plays it still.
"""

from __future__ import annotations

import concurrent.futures
import logging
import random
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from masume.ai import Advice, Level, acting_side, advise, is_chance, level, standing
from masume.play.cards import hand_read
from masume.play.core import Effects, TableCore

log = logging.getLogger("masume.play")

#: The hints' strength: the search at full strength, a second a hint.
HINT_LEVEL = Level("hint", seconds=1.0)

#: The record header that names the computer's side and level: ``Computer: away casual``.
COMPUTER_HEADER = "Computer"

_searches: concurrent.futures.ThreadPoolExecutor | None = None
_searches_lock = threading.Lock()


def searches() -> concurrent.futures.ThreadPoolExecutor:
    """This process's search thread: one, for every table the process runs. More would
    not search faster (the searches share one interpreter lock), only each more
    weakly in its time; the searches of several tables wait their turn."""
    global _searches
    with _searches_lock:
        if _searches is None:
            _searches = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="search")
        return _searches


def computer_of(headers: Mapping[str, str]) -> tuple[str | None, str]:
    """The computer's side (None: people only) and level, from a record's headers.

    >>> computer_of({"Computer": "away beginner"})
    ('away', 'beginner')
    >>> computer_of({})
    (None, 'casual')
    """
    side, _, level_name = headers.get(COMPUTER_HEADER, "").partition(" ")
    return side or None, level_name.strip() or "casual"


def check_computer(side: str, level_name: str, sides: Sequence[str], game: str,
                   what: str = "computer") -> str:
    """The ``Computer`` header's value for ``side`` at ``level_name``; ValueError, saying
    why, for a side the game does not have or an unknown level.

    >>> check_computer("red", "club", ("blue", "red"), "soccer-shogi")
    'red club'
    >>> check_computer("green", "club", ("blue", "red"), "soccer-shogi")
    Traceback (most recent call last):
    ...
    ValueError: computer green: soccer-shogi's sides are blue, red
    """
    level(level_name)
    if side not in sides:
        raise ValueError(f"{what} {side}: {game}'s sides are {', '.join(sides)}")
    return f"{side} {level_name}"


class ShownView(TypedDict):
    kind: str
    side: str
    text: str
    take: list[str]
    put: list[str]
    path: list[str]


class AdviceView(TypedDict):
    """What the page shows of the computer and the hints (``state()["advice"]``)."""

    computer: str | None
    level: str | None
    #: What it is thinking of now: "computer", "hint", or None.
    thinking: str | None
    #: The action lit now, in words, and its squares.
    shown: ShownView | None
    #: Who stands better: each side's value, 0 (lost) to 1 (won) (the evaluation bar).
    standing: dict[str, float]
    #: The last search that failed, as said.
    error: str | None


@dataclass(frozen=True)
class _Job:
    kind: Literal["computer", "hint"]
    side: str
    position: Any
    at: int
    #: The computer's cards read on its hand slots: card -> slot (docs/ai.md).
    slots: Mapping[str, str] = field(default_factory=dict)
    #: How many hand slots it has: its hand grows no further by its own choice.
    hand_cap: int | None = None
    #: Cards of its hand past its slots, unread (said; played as "kept beside").
    unread: int = 0


class Advisor:
    """The computer side (``computer``: its side, or None for hints only) at ``level``,
    and hints, for one table (see the module docstring). Every method but the search
    itself runs on the thread of the table's core; ``on_ready`` is called from the
    search thread when a search is done (the runner then takes a turn soon)."""

    def __init__(self, computer: str | None = None, level_name: str = "casual",
                 rng: random.Random | None = None,
                 on_ready: Callable[[], None] | None = None) -> None:
        self.computer = computer
        self.level = level(level_name)
        self.rng = rng or random.Random()
        self.on_ready = on_ready
        self.thinking: Literal["computer", "hint"] | None = None
        self.error: str | None = None
        self._hint_wanted = False
        #: What it asked of the hands for its hand slots, said until they are read.
        self._asked = ""
        self._failed: tuple[int, Any] | None = None  # the computer's search failed here
        self._job: _Job | None = None
        self._search: concurrent.futures.Future[Advice | Exception] | None = None
        self._closed = False

    def close(self) -> None:
        """No more searches; one waiting for the search thread is let go."""
        self._closed = True
        if self._search is not None:
            self._search.cancel()

    def ask_hint(self) -> None:
        """Think of the best action for the side to act, and light it (at the next turn)."""
        self._hint_wanted = True

    def turn(self, core: TableCore) -> Effects:
        """After each turn of the table's runner, on the core's thread: a search that is
        done is shown (or its failure said), and the next one begun if there is one."""
        out = Effects()
        try:
            job, search = self._job, self._search
            if job is not None and search is not None:
                if not search.done():
                    return out
                self._job = self._search = None
                self.thinking = None
                found = (RuntimeError("the search was cancelled") if search.cancelled()
                         else search.result())
                out.add(self._found(core, job, found))
            if self._closed:
                return out
            job = self._next(core, out)
            if job is not None:
                self.thinking = job.kind
                out.changed = True
                self._job, self._search = job, searches().submit(self._think, job)
                self._search.add_done_callback(self._ready)
        except Exception as exc:  # a bug here must not stop the table: said, and on
            self._job = self._search = None
            self.thinking = None
            out.add(self._said(core, f"computer: error ({type(exc).__name__}: {exc}); play on"))
            log.error("advisor: %s", exc, exc_info=exc)
        return out

    def view(self, core: TableCore) -> AdviceView:
        """For the page (on the core's thread, or with the table's lock held)."""
        shown = core.lit_now()
        position = core.shown_position()
        return {
            "computer": self.computer,
            "level": self.level.name if self.computer else None,
            "thinking": self.thinking,
            "shown": None if shown is None else {
                "kind": shown.kind, "side": shown.side, "text": shown.words,
                "take": list(shown.lit.take), "put": list(shown.lit.put),
                "path": list(shown.lit.path)},
            "standing": {side: round(value, 3) for side, value in standing(position).items()},
            "error": self.error,
        }

    # ---- how ----------------------------------------------------------------------

    def _next(self, core: TableCore, out: Effects) -> _Job | None:
        """What to think of now (None: nothing); what the players are told, into ``out``."""
        position = core.game.position
        at = len(core.game.actions)
        if (core.resigned or position.outcome() is not None
                or core.tracker.view.state != "in-sync" or is_chance(position)):
            if self._hint_wanted and (core.resigned or position.outcome() is not None
                                      or is_chance(position)):
                self._hint_wanted = False
                out.add(core.say("hint: " + ("the game is over" if position.outcome()
                                             or core.resigned else
                                             "the game waits for the die or a card")))
            return None  # (a hint asked while the board differs waits for it)
        side = acting_side(position)
        lit = core.lit_now() is not None
        if side == self.computer:
            if self._hint_wanted:
                self._hint_wanted = False
                out.add(core.say("hint: it is the computer's turn"
                                 + ("; its action is lit" if lit else "")))
            if lit:
                return None
            # Its hand as its hand slots read it: it searches with the cards it holds.
            hand = hand_read(position, core.board, core.readings, side)
            if hand.waiting:
                self._asked = f"computer: {hand.waiting}"
                if core.notice != self._asked:
                    out.add(core.say(self._asked))
                return None
            if self._asked and core.notice == self._asked:  # read now: said no more
                out.add(core.say(""))
            self._asked = ""
            if self._failed == (at, hand.position):
                return None
            # A hand larger than its slots: said, every time its search begins so.
            past = hand.unread_said(side)
            if past and core.notice != f"computer: {past}":
                out.add(core.say(f"computer: {past}"))
            return _Job("computer", side, hand.position, at, hand.slots, hand.capacity,
                        hand.unread)
        if self._hint_wanted:
            self._hint_wanted = False
            return _Job("hint", side, position, at)
        return None

    def _think(self, job: _Job) -> Advice | Exception:
        """The search, on the search thread: what it found, or what it raised."""
        try:
            if job.kind == "computer":
                return advise(job.position, job.side, self.level, self.rng, job.hand_cap)
            return advise(job.position, job.side, HINT_LEVEL, self.rng)
        except Exception as exc:  # said on the core's thread (_found)
            log.error("advisor: search for %s: %s", job.side, exc, exc_info=exc)
            return exc

    def _ready(self, _search: concurrent.futures.Future[Advice | Exception]) -> None:
        if self.on_ready is not None and not self._closed:
            try:
                self.on_ready()
            except Exception:
                log.exception("advisor: telling the table")

    def _found(self, core: TableCore, job: _Job, found: Advice | BaseException) -> Effects:
        if (not isinstance(found, BaseException) and len(core.game.actions) == job.at
                and not job.position.is_legal(found.action)):
            # A search's bug, said as its failure: else nothing would be lit, and nothing said.
            found = RuntimeError(f"it chose {found.action!r}, which the rules refuse here")
        if isinstance(found, BaseException):
            if job.kind == "computer":
                self._failed = (job.at, job.position)
            who = "computer" if job.kind == "computer" else "hint"
            fallback = ("make its action by hand, or ask for a hint" if job.kind == "computer"
                        else "play on")
            return self._said(core, f"{who}: the search failed ({type(found).__name__}: "
                                    f"{found}); {fallback}")
        self.error = None
        # (The runner saves it with its turn.)
        return core.show(job.kind, found.side, found.action, found.value, job.at, job.slots,
                         unread=job.unread)

    def _said(self, core: TableCore, message: str) -> Effects:
        self.error = message
        return core.say(message)


__all__ = ["COMPUTER_HEADER", "HINT_LEVEL", "AdviceView", "Advisor", "check_computer",
           "computer_of", "searches"]
