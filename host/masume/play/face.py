"""What the pages ask of a table: :class:`TableFace`, which
:class:`masume.play.table.TableSession` implements (and a test's table in memory may).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any, Protocol

from masume.boards import Board


class TableFace(Protocol):
    """One table as the web view sees it (see masume.web.server)."""

    @property
    def simulated(self) -> bool:
        """True on masume's simulated board (the page's hands move its pieces)."""

    @property
    def sides(self) -> tuple[str, ...]:
        """The game's sides: each player gets a link of their own."""

    @property
    def computer(self) -> str | None:
        """The side the computer plays (None: people only): no person's link is its."""

    @property
    def board(self) -> Board:
        """The board the game is played on (a review draws the game's positions on it)."""

    def record(self) -> str:
        """The game so far as a record's text (masume.records), a resignation included:
        what a review (masume.play.review) reads."""

    def state(self, viewer: str | None = None) -> Mapping[str, Any]:
        """The whole picture, JSON-able, as ``viewer`` (a side, or None) may see it."""

    def subscribe(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` (from any thread) whenever :meth:`state` may have
        changed; returns the function that stops it."""

    def act(self, text: str) -> Hashable:
        """Make one of the choices ``state()["choices"]`` lists; ValueError says why not."""

    def hint(self) -> None:
        """Light the best action for the side to act, once found (``state()["advice"]``)."""

    def new_game(self) -> None:
        """Start the game afresh at this table, from the same start."""

    def cards(self) -> list[dict[str, str]]:
        """Every card of the game's set (id, name, kind), for the card picker; [] for none."""

    # The simulated board's hands: ValueError, saying why, on misuse or a real board.
    def sim_lift(self, square: str) -> str: ...

    def sim_place(self, square: str, piece: str) -> None: ...

    def sim_place_card(self, square: str, copy_id: str) -> None: ...

    def sim_press(self, button: str) -> None: ...

    def sim_roll(self, value: int | None = None) -> None: ...
