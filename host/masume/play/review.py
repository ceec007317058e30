"""A finished game read again by the computer, for the pages (issue 18): the review.

:class:`Reviews` keeps the reviews one web view was asked for. A review is asked with a
record's text and the board it is drawn on (the table's own game, or a record a player
sends): the record is read and replayed at once, and refused, saying why, when it
cannot be read or replayed, is not of a game the board plays, or is not over. Its
positions, as everyone at the table sees them, are ready at once; the computer's
comments on the biggest mistakes (:func:`masume.ai.review.mistakes` at
:data:`REVIEW_LEVEL`, an iteration cap and a time cap a position, so a review's time is
bounded by its length) come from one worker thread of the web view's own, which reads
nothing but the record it was given: no table's lock is held, and the table goes on.
Each review is kept by the record's digest: asked again for the same record, the same
review (still running, or done), at most :data:`KEPT` of them.

What a review shows is what everyone at the table saw: the pieces through
:func:`masume.play.cards.public_pieces` (a card on the mat is ``card``), the card
labels and panel of ``seen_by(None)``, every action as ``notation_for(action, None)``
writes it, and the better action with a card of the hand unnamed (``?``:
:func:`masume.play.cards.from_hand`). The search that judges an action sees what the
side that chose it saw (docs/ai.md, "Hidden cards"): its own face-down cards, never the
other side's.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import random
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, TypedDict

from masume.ai import Level, acting_side, is_chance
from masume.ai.review import Mistake, mistakes
from masume.boards import Board
from masume.play.cards import from_hand, public_pieces, said_to_all
from masume.play.core import lit_action, written
from masume.records import ended, parse_record, resume, rules_for
from masume.rules import Game
from masume.rules.base import AnyPosition, HidesInformation

log = logging.getLogger("masume.review")

#: The search a position: at most 100 iterations, at most 1 s. A review's time is
#: bounded by the game's length: Soccer Shogi's 22 actions took 2.6 CPU seconds, an
#: Eyeshield 21 game of 265 actions 56 (at most 265 s; docs/benchmarks.md).
REVIEW_LEVEL = Level("review", seconds=1.0, iterations=100)
#: Reviews kept (each the positions of one game): the oldest finished goes first.
KEPT = 16
#: Comments a review makes, the greatest losses first.
MOST = 5
#: The longest game a review reads (a full game of Eyeshield 21 is some 300 actions): a
#: record sent to the page cannot keep the worker for hours.
MAX_ACTIONS = 1000


class ReviewRefused(ValueError):
    """A review that cannot be made (the message says why, for the page)."""


class StepView(TypedDict):
    """One position of the game as everyone saw it, and the action played from it."""

    pieces: dict[str, list[str]]
    #: A game that hides cards: the card labels per cell and the panel lines anyone sees.
    cells: dict[str, list[str]] | None
    panel: list[list[str]] | None
    score: dict[str, int]
    to_move: str
    message: str
    #: The action played from here (None after the last), as anyone reads it, and by
    #: whom (None: chance, a die or a card turned up).
    played: str | None
    side: str | None


class MistakeView(TypedDict):
    """A comment: at step ``index``, ``side`` played ``played``; ``better`` was better by
    ``loss`` (of a game); ``take``, ``put``, ``path``: the better action on the board."""

    index: int
    side: str
    played: str
    better: str
    loss: float
    comment: str
    take: list[str]
    put: list[str]
    path: list[str]


class ReviewView(TypedDict, total=False):
    id: str
    game: str
    outcome: str
    #: "queued", "running", "done" or "failed".
    status: str
    done: int
    total: int
    error: str | None
    level: str
    mistakes: list[MistakeView]
    steps: list[StepView]


@dataclass
class Review:
    """One record's review (see the module docstring)."""

    id: str
    game: str
    outcome: str
    steps: list[StepView]
    total: int
    status: str = "queued"
    done: int = 0
    error: str | None = None
    mistakes: list[MistakeView] = field(default_factory=list)
    finished: threading.Event = field(default_factory=threading.Event)

    def view(self, *, steps: bool = True) -> ReviewView:
        out: ReviewView = {"id": self.id, "game": self.game, "outcome": self.outcome,
                           "status": self.status, "done": self.done, "total": self.total,
                           "error": self.error, "level": REVIEW_LEVEL.name,
                           "mistakes": list(self.mistakes)}
        if steps:
            out["steps"] = self.steps
        return out


@dataclass(frozen=True)
class _Job:
    review: Review
    game: Game[Any]
    board: Board


class _Stopped(Exception):
    """The web view is closing: the review in hand stops."""


class Reviews:
    """The reviews of one web view, made on one worker thread (see the module docstring).
    ``level``: the search a position (tests give a smaller one)."""

    def __init__(self, level: Level = REVIEW_LEVEL, *, kept: int = KEPT) -> None:
        self.level = level
        self.kept = kept
        self._lock = threading.Lock()
        self._reviews: OrderedDict[str, Review] = OrderedDict()
        self._queue: queue.Queue[_Job | None] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def ask(self, text: str, board: Board) -> Review:
        """The review of the record ``text`` drawn on ``board``: the one kept, else a new
        one queued. ReviewRefused says why there is none."""
        digest = hashlib.sha256(f"{self.level}\n{text}".encode()).hexdigest()[:16]
        with self._lock:
            kept = self._reviews.get(digest)
            if kept is not None:
                self._reviews.move_to_end(digest)
                return kept
        game, outcome = _finished_game(text, board)
        review = Review(digest, game.start.game, outcome, _steps(game, board),
                        total=len(game.actions))
        with self._lock:
            if digest in self._reviews:  # asked twice at once: the first one stands
                return self._reviews[digest]
            self._make_room()
            self._reviews[digest] = review
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="reviews", daemon=True)
                self._thread.start()
        self._queue.put(_Job(review, game, board))
        return review

    def get(self, review_id: str) -> Review | None:
        with self._lock:
            return self._reviews.get(review_id)

    def close(self) -> None:
        """Stop the worker (the review in hand stops at its next position)."""
        self._stop.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout=self.level.seconds + 5)

    def _make_room(self) -> None:
        while len(self._reviews) >= self.kept:
            old = next((k for k, r in self._reviews.items() if r.finished.is_set()), None)
            if old is None:
                raise ReviewRefused(f"{len(self._reviews)} reviews are being made already: "
                                    "ask again once one is done")
            del self._reviews[old]

    def _run(self) -> None:
        while not self._stop.is_set():
            job = self._queue.get()
            if job is None:
                return
            review = job.review
            try:
                review.status = "running"
                review.mistakes = self._comments(job)
                review.status = "done"
            except _Stopped:
                review.status, review.error = "failed", "the web view closed"
            except Exception as exc:  # said on the page; the worker goes on
                log.error("review %s: %s", review.id, exc, exc_info=exc)
                review.status = "failed"
                review.error = f"the search failed ({type(exc).__name__}: {exc})"
            finally:
                review.finished.set()

    def _comments(self, job: _Job) -> list[MistakeView]:
        review, game = job.review, job.game

        def progress(done: int, total: int) -> None:
            review.done = done
            if self._stop.is_set():
                raise _Stopped

        # Seeded by the record: the same game reviewed again says the same.
        rng = random.Random(review.id)
        found = mistakes(game.start, game.actions, self.level, rng, most=MOST,
                         progress=progress)
        positions = game.positions()
        comments = [_comment(m, positions[m.index], job.board) for m in found]
        # Two face-down cards read alike to everyone: a comment would say nothing (and
        # which card was better is not for everyone to know).
        return [c for c in comments if c["better"] != c["played"]]


def _finished_game(text: str, board: Board) -> tuple[Game[Any], str]:
    """The game a record holds and its outcome (a resignation, a loss on time included);
    ReviewRefused when it cannot be read, is not of ``board``'s games, or is not over."""
    try:
        record = parse_record(text)
        rules = rules_for(record, None if record.game else board.games[0])
        if rules.name not in board.games:
            raise ReviewRefused(f"this table plays {', '.join(board.games)}: the record is "
                                f"of {rules.name}")
        actions = sum(len(turn.actions) for turn in record.turns)
        if actions > MAX_ACTIONS:
            raise ReviewRefused(f"the record holds {actions} actions: a review reads at most "
                                f"{MAX_ACTIONS}")
        game = resume(record, rules.name)
        position: AnyPosition = game.position
        for header in ("Resigned", "Timeout"):
            side = record.headers.get(header)
            if side and position.outcome() is None:
                position = ended(rules, position, side, on_time=header == "Timeout")
    except ReviewRefused:
        raise
    except ValueError as exc:  # a RecordError, an IllegalAction, a bad option
        raise ReviewRefused(f"the record cannot be read: {exc}") from None
    outcome = position.outcome()
    if outcome is None:
        raise ReviewRefused("the game is not over: a review reads a finished game")
    return game, str(outcome)


def _steps(game: Game[Any], board: Board) -> list[StepView]:
    positions = game.positions()
    actions: list[Hashable | None] = [*game.actions, None]
    steps: list[StepView] = []
    for position, action in zip(positions, actions, strict=True):
        status = position.status()
        seen = position.seen_by(None) if isinstance(position, HidesInformation) else None
        played = side = None
        if action is not None:
            played = written(position, action, None)
            side = None if is_chance(position) else acting_side(position)
        steps.append({
            "pieces": public_pieces(position.layout(), position=position, board=board),
            "cells": ({cell: list(labels) for cell, labels in seen.cells.items()}
                      if seen is not None else None),
            "panel": [[k, v] for k, v in seen.panel] if seen is not None else None,
            "score": dict(status.score),
            "to_move": status.to_move,
            "message": said_to_all(position, status.message),
            "played": played,
            "side": side,
        })
    return steps


def _comment(m: Mistake, position: AnyPosition, board: Board) -> MistakeView:
    played = written(position, m.played, None)
    better, _blind = from_hand(position, written(position, m.better, None))
    after = position.apply(m.better)
    lit = lit_action(m.side, position, after,
                     public_pieces(position.layout(), position=position, board=board),
                     public_pieces(after.layout(), position=after, board=board))
    loss = round(m.loss, 2)
    return {"index": m.index, "side": m.side, "played": played, "better": better,
            "loss": loss, "comment": f"{m.side} played {played}; {better} was better "
                                     f"(lost {loss:.2f})",
            "take": list(lit.take), "put": list(lit.put), "path": list(lit.path)}


__all__ = ["KEPT", "MAX_ACTIONS", "MOST", "REVIEW_LEVEL", "MistakeView", "Review", "ReviewRefused",
           "ReviewView", "Reviews", "StepView"]
