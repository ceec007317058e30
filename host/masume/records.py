"""Game record files: read, check, write. Generic over games (the Position protocol).

A record is plain text (UTF-8)::

    # comment lines start with '#'
    [Game "soccer-shogi"]
    [Blue "Dad"]
    A7-A6, A6-A5
    C2-C3、C3-C4

- Header lines ``[Key "Value"]`` come before the first turn line (a backslash
  escapes a quote or a backslash inside the value). Keys this module reads:
  ``Game`` (the rules), ``First`` (the side that moves first: passed to
  ``rules.start(first=...)``), ``Options`` (rule options, ``name=value`` separated
  by spaces, passed to ``rules.start``), ``Position`` (start from this position
  text instead; see ``Position.to_text``), ``Resigned`` (the side that resigned
  after the last turn line), ``Timeout`` (the side whose clock ran out after the last
  turn line, ``masume play --clock``: it loses on time), ``Result`` (the outcome as
  ``masume record check`` prints it, ``home wins (deck-out)``, or ``*`` for a game in
  progress: checked against the replay, see :func:`check_result`). Any other key
  (Event, Date, player names, ...) is kept as it is.
- Then one side's turn per line, its actions separated by ``,`` or ``、``, in the
  game's notation. Sides alternate as the rules say, from the side that moves
  first. Procedural actions (a restart after a goal, a choice after a steal)
  are written on the line of the side the rules give them to.
- Blank lines are ignored anywhere.

Problems with an action are reported as ``line N: ACTION: reason``, N counting the
turn lines (the first turn line is line 1); see :class:`RecordError`.

Usage::

    >>> from masume.games import load_rules
    >>> record = parse_record('[Game "soccer-shogi"]\\nA7-A6, A6-A5\\nC2-C3、C3-C4\\n')
    >>> [turn.actions for turn in record.turns]
    [('A7-A6', 'A6-A5'), ('C2-C3', 'C3-C4')]
    >>> game = replay(record)
    >>> game.position.status().to_move
    'blue'
    >>> print(write_record(game, {"Game": "soccer-shogi"}), end="")
    [Game "soccer-shogi"]
    A7-A6, A6-A5
    C2-C3, C3-C4
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from .games import load_rules
from .rules import Game, IllegalAction, NotationError, Position, Rules
from .rules.base import Outcome

_HEADER = re.compile(r'^\[\s*([A-Za-z][A-Za-z0-9_-]*)\s+"((?:[^"\\]|\\.)*)"\s*\]$')
_SEPARATORS = re.compile(r"[,、]")


class RecordError(ValueError):
    """A record that cannot be read or replayed.

    A problem with an action reads ``line N: ACTION: reason``, where N counts the
    turn lines as they come in the file (the first turn line is line 1; comments,
    headers and blank lines are not counted). ``file_line`` is the line number in
    the file, for editors. A problem outside the turn lines (a malformed header)
    reads ``file line K: reason``.
    """

    def __init__(
        self, reason: str, *, line: int = 0, action: str | None = None, file_line: int = 0
    ) -> None:
        self.line = line
        self.action = action
        self.reason = reason
        self.file_line = file_line
        where = f"line {line}: " if line else (f"file line {file_line}: " if file_line else "")
        what = f"{action}: " if action is not None else ""
        super().__init__(f"{where}{what}{reason}")


@dataclass(frozen=True)
class TurnLine:
    """One side's turn as written: its number among the turn lines (from 1), its
    line number in the file, and the action texts."""

    number: int
    line: int
    actions: tuple[str, ...]


@dataclass(frozen=True)
class Record:
    """A parsed record file: headers in file order and the turn lines."""

    headers: Mapping[str, str] = field(default_factory=dict)
    turns: tuple[TurnLine, ...] = ()

    @property
    def game(self) -> str | None:
        return self.headers.get("Game")


def parse_record(text: str) -> Record:
    """Split a record into headers and turn lines; RecordError for a malformed header.

    >>> parse_record('# hello\\n[Event "club"]\\n\\nA7-A6 , A6-A5\\n').turns
    (TurnLine(number=1, line=4, actions=('A7-A6', 'A6-A5')),)
    """
    headers: dict[str, str] = {}
    turns: list[TurnLine] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().lstrip("\ufeff")
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            match = _HEADER.match(line)
            if not match:
                raise RecordError(f'malformed header {line!r} (write [Key "Value"])',
                                  file_line=number)
            if turns:
                raise RecordError("headers come before the first turn line", file_line=number)
            key, value = match.group(1), re.sub(r"\\(.)", r"\1", match.group(2))
            if key in headers:
                raise RecordError(f"header {key} given twice", file_line=number)
            headers[key] = value
            continue
        actions = tuple(part.strip() for part in _SEPARATORS.split(line))
        if any(not action for action in actions):
            raise RecordError(
                f"empty action in {line!r} (actions are separated by , or 、)",
                line=len(turns) + 1, file_line=number,
            )
        turns.append(TurnLine(len(turns) + 1, number, actions))
    return Record(headers, tuple(turns))


def read_record(path: str | Path) -> Record:
    """Read a record file; OSError if it cannot be read, RecordError if malformed."""
    return parse_record(Path(path).read_text(encoding="utf-8"))


def parse_options(text: str) -> dict[str, Any]:
    """``goals_to_win=3 keepers_cannot_jump=true`` -> keyword arguments.

    >>> parse_options("goals_to_win=3 keepers_cannot_jump=true")
    {'goals_to_win': 3, 'keepers_cannot_jump': True}
    """
    options: dict[str, Any] = {}
    for item in text.split():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ValueError(f"option {item!r} is not name=value")
        options[name.replace("-", "_")] = _option_value(value)
    return options


def _option_value(value: str) -> Any:
    lowered = value.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def rules_for(record: Record, game: str | None = None) -> Rules:
    """The rules named by ``game``, else by the record's Game header."""
    name = game or record.game
    if not name:
        raise RecordError('which game? give --game or a [Game "..."] header')
    try:
        return load_rules(name)
    except ValueError as exc:
        raise RecordError(str(exc)) from None


def start_position(record: Record, rules: Rules) -> Position[Any]:
    """The position the record starts from (Position, First and Options headers)."""
    headers = record.headers
    try:
        options = parse_options(headers.get("Options", ""))
    except ValueError as exc:
        raise RecordError(f"Options header: {exc}") from None
    try:
        if "Position" in headers:
            return rules.from_text(headers["Position"], **options)
        if "First" in headers:
            return rules.start(first=headers["First"], **options)
        return rules.start(**options)
    except (NotationError, ValueError, TypeError) as exc:
        raise RecordError(f"cannot set up the start: {exc}") from None


def replay(record: Record, rules: Rules | None = None) -> Game[Any]:
    """Play the record through; RecordError at the first illegal or misplaced action.

    Checks that every action is legal and that every line is exactly one side's
    turn: all its actions are made by the side to move when the line starts, and
    after them the side to move has changed or the game has ended.
    """
    rules = rules or rules_for(record)
    game = Game(start_position(record, rules))
    for turn in record.turns:
        position = game.position
        where = {"line": turn.number, "file_line": turn.line}
        if position.outcome() is not None:
            raise RecordError(
                f"the game is already over ({position.outcome()})", action=turn.actions[0], **where
            )
        side = position.status().to_move
        for k, text in enumerate(turn.actions):
            if k and game.position.status().to_move != side:
                raise RecordError(
                    f"{side}'s turn ended with {turn.actions[k - 1]}; "
                    f"{game.position.status().to_move}'s turn goes on the next line",
                    action=text, **where,
                )
            if k and game.position.outcome() is not None:
                raise RecordError(
                    f"the game is already over ({game.position.outcome()})", action=text, **where
                )
            try:
                action = game.position.parse_action(text)
                game.push(action)
            except NotationError as exc:
                reason = f"not {rules.name} notation: {_without_prefix(exc, text)}"
                raise RecordError(reason, action=text, **where) from None
            except IllegalAction as exc:
                raise RecordError(_without_prefix(exc, text), action=text, **where) from None
        after = game.position
        if after.outcome() is None and after.status().to_move == side:
            status = after.status()
            raise RecordError(
                f"{side}'s turn is not over ({status.message}); one line holds one whole turn",
                action=turn.actions[-1], **where,
            )
    return game


def resume(record: Record, game: str | None = None) -> Game[Any]:
    """The game as far as a saved record goes, to play on: unlike :func:`replay`,
    the last line may hold half a turn (the record was saved as it was played).
    RecordError at the first action that is not legal."""
    rules = rules_for(record, game)
    out = Game(start_position(record, rules))
    for turn in record.turns:
        for text in turn.actions:
            try:
                out.push_notation(text)
            except (IllegalAction, NotationError) as exc:
                raise RecordError(str(exc), line=turn.number, action=text,
                                  file_line=turn.line) from None
    return out


def final_position(record: Record, rules: Rules | None = None) -> Position[Any]:
    """The position at the end of the record, a resignation or a loss on time included."""
    rules = rules or rules_for(record)
    position = replay(record, rules).position
    for header in ("Resigned", "Timeout"):
        side = record.headers.get(header)
        if side:
            try:
                return ended(rules, position, side, on_time=header == "Timeout")
            except (IllegalAction, ValueError) as exc:
                raise RecordError(f"{header} header: {exc}") from None
    return position


#: The outcome's reason when a side's clock ran out (``masume play --clock``).
ON_TIME = "time"


def ended(rules: Rules, position: Position[Any], side: str, *,
          on_time: bool = False) -> Position[Any]:
    """The position after ``side`` resigned, or with ``on_time`` lost on time (its clock
    ran out): ``red wins (time)``. IllegalAction once the game is over.

    >>> from masume.games import load_rules
    >>> rules = load_rules("soccer-shogi")
    >>> str(ended(rules, rules.start(), "blue", on_time=True).outcome())
    'red wins (time)'
    """
    resigned: Position[Any] = rules.resign(position, side)
    return cast(Position[Any], _LostOnTime(resigned)) if on_time else resigned


class _LostOnTime:
    """A resigned position whose outcome says time. The rules know resignation only: a
    player's own clock is the table's (masume.play.core), not the rules', so the
    position is the resigned one in all but the outcome's reason."""

    def __init__(self, position: Position[Any]) -> None:
        self._position = position

    def outcome(self) -> Outcome | None:
        outcome = self._position.outcome()
        return replace(outcome, reason=ON_TIME) if outcome is not None else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._position, name)


def check_record(record: Record, rules: Rules | None = None) -> Position[Any]:
    """Replay and return the final position; RecordError for the first problem, a
    ``Result`` header that the replay contradicts included (:func:`check_result`)."""
    position = final_position(record, rules)
    check_result(record, position)
    return position


#: ``[Result "*"]``: the game is not over (as in PGN).
IN_PROGRESS = "*"


def state_of(position: Position[Any]) -> str:
    """The outcome as ``record check`` prints it (``home wins (deck-out)``), or for a game
    in progress ``in progress, blue to play action 2 of 2``.

    >>> from masume.games import load_rules
    >>> state_of(load_rules("soccer-shogi").start())
    'in progress, blue to play action 1 of 2'
    """
    outcome = position.outcome()
    if outcome is not None:
        return str(outcome)
    status = position.status()
    return (f"in progress, {status.to_move} to play action {status.action_number} of "
            f"{status.actions_per_turn}")


def check_result(record: Record, position: Position[Any]) -> None:
    """RecordError if the record's ``Result`` header is not what the replay ends in.

    The header holds the outcome as ``record check`` prints it (``home wins (deck-out)``,
    ``draw (full time)``), ``*`` or ``in progress ...`` for a game not over; the older
    ``WINNER:REASON`` (``sente:goal``) still reads.

    >>> from masume.games import load_rules
    >>> record = Record({"Game": "soccer-shogi", "Result": "red wins (goals)"})
    >>> try:
    ...     check_result(record, load_rules("soccer-shogi").start())
    ... except RecordError as exc:
    ...     print(exc)
    Result header: 'red wins (goals)', but the replay ends: in progress, blue to play action 1 of 2
    """
    claimed = record.headers.get("Result")
    if claimed is None:
        return
    outcome = position.outcome()
    said = " ".join(claimed.split())
    if outcome is None:
        agrees = said == IN_PROGRESS or said.startswith("in progress")
    else:
        agrees = said in (str(outcome), f"{outcome.winner or 'draw'}:{outcome.reason}")
    if not agrees:
        raise RecordError(f"Result header: {claimed!r}, but the replay ends: "
                          f"{state_of(position)}")


def _without_prefix(exc: Exception, text: str) -> str:
    """Engines often start their message with the action itself; say it once."""
    message = str(exc)
    for prefix in (f"{text}: ", f"{text.strip()}: ", f"{text.strip()!r}: "):
        if message.startswith(prefix):
            return message[len(prefix):]
    return message


def write_record(game: Game[Any], headers: Mapping[str, str] | None = None,
                 turns: TurnLines | None = None) -> str:
    """The game as record text: headers, then one line per side's turn.

    A ``Game`` header is added from the position, and a ``Position`` header when
    the game did not begin at the rules' default start. ``turns``: the game's lines
    kept from the last time (:class:`TurnLines`), for a game written again and again.
    """
    out: dict[str, str] = {"Game": game.start.game}
    out.update(headers or {})
    if "Position" not in out:
        try:
            expected = start_position(Record(out), load_rules(out["Game"]))
        except (RecordError, ValueError):
            expected = None
        if expected != game.start:
            out["Position"] = game.start.to_text()
    lines = [f'[{key} "{_escape(value)}"]' for key, value in out.items()]
    lines += (turns or TurnLines()).lines(game)
    return "\n".join(lines) + "\n"


class TurnLines:
    """A game's turn lines as :func:`write_record` writes them, each action's notation
    kept: written again, only the actions that changed since are named (a club table
    saves its game after every board event, most of which add no action; naming them
    all each time was 0.4 ms at 24 actions, growing with the game).

    >>> from masume.games import load_rules
    >>> from masume.rules import Game
    >>> game = Game(load_rules("soccer-shogi").start())
    >>> turns = TurnLines()
    >>> for _ in range(3):
    ...     _ = game.push(sorted(game.position.legal_actions(), key=str)[0])
    ...     assert turns.lines(game) == TurnLines().lines(game)
    >>> _ = game.pop(); turns.lines(game) == TurnLines().lines(game)
    True
    """

    def __init__(self) -> None:
        self._start: Any = None
        #: Per action named: (the action, its notation, the side whose line it is on
        #: (None: it starts a line), whether it ends its line).
        self._named: list[tuple[Any, str, str, bool]] = []

    def lines(self, game: Game[Any]) -> list[str]:
        actions = game.actions
        if self._start is not game.start:
            self._start, self._named = game.start, []
        keep = 0
        for (action, *_), now in zip(self._named, actions):
            if action is not now and action != now:
                break
            keep += 1
        del self._named[keep:]
        if keep < len(actions):
            positions = game.positions()
            side = self._named[-1][2] if self._named and not self._named[-1][3] else None
            for k in range(keep, len(actions)):
                before, after = positions[k], positions[k + 1]
                if side is None:
                    side = before.status().to_move
                ends = after.outcome() is not None or after.status().to_move != side
                self._named.append((actions[k], before.notation(actions[k]), side, ends))
                if ends:
                    side = None
        out: list[str] = []
        current: list[str] = []
        for _, notation, _, ends in self._named:
            current.append(notation)
            if ends:
                out.append(", ".join(current))
                current = []
        if current:
            out.append(", ".join(current))
        return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


__all__ = [
    "IN_PROGRESS",
    "Record",
    "RecordError",
    "TurnLine",
    "TurnLines",
    "check_record",
    "check_result",
    "final_position",
    "parse_options",
    "parse_record",
    "read_record",
    "replay",
    "resume",
    "rules_for",
    "start_position",
    "state_of",
    "write_record",
]
