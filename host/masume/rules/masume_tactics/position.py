"""The Masume Soccer Tactics position: its rule options, its legal actions and what each
leads to."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from operator import itemgetter
from typing import Any, ClassVar, Final

from ..base import (
    Awaiting,
    CardSource,
    IllegalAction,
    Legend,
    Light,
    Outcome,
    Restart,
    Roll,
    Status,
    Timer,
    no_card_source,
)
from .actions import Action, Charge, Choice, Kick, Move, Pass, Setup, Timeout, Whistle
from .cards import EXAMPLE_SET, Card, specialists
from .geometry import (
    AWAY,
    CENTRE_CIRCLE,
    CENTRE_MARK,
    CORNERS,
    DIRECTIONS,
    FILES,
    GAME,
    GOAL_KICK,
    GOALS,
    HOME,
    PENALTY_AREA,
    PENALTY_GUARD,
    PENALTY_SPOT,
    PIECE_NAMES,
    PITCH,
    SIDES,
    SQUARE_INDEX,
    SQUARE_NAMES,
    TOUCH,
    _formation,
    _is_board,
    _is_keeper,
    _on_pitch,
    _progress,
    _side,
    _sq,
    _square,
    _xy,
)

_SET_PIECES = {"throw": "throw-in", "corner": "corner kick", "goal-kick-1": "goal kick",
               "goal-kick-2": "goal kick", "free-kick": "free kick", "penalty": "penalty kick"}


@dataclass(frozen=True)
class Options:
    """Named rule options (``RULES.start`` keyword arguments).

    - ``rules``: ``"standard"`` or ``"beginner"`` (ビギナールール: one action a turn,
      ground kicks only, no one-touch, no offside);
    - ``goals_to_win``: 0 plays on (a timed match), 1 is "first goal wins";
    - ``halves``: minutes of each half; 0 = no clock. With a clock the table pushes
      :class:`Whistle` when the time is up;
    - ``turn_seconds``: the turn time limit (20 or 30; 0 = none). The engine only
      reports it; the table's timer lights count it down.
    """

    rules: str = "standard"
    goals_to_win: int = 0
    halves: int = 0
    turn_seconds: int = 0
    #: Before each kick-off the sides set up their own formations (kicking side first), instead
    #: of the engine's fixed formation.
    lineup: bool = False
    #: A drawn match ends with a penalty shoot-out (PK戦), 5 kicks each then sudden death.
    shootout: bool = True
    #: Specialist cards chosen before kick-off: card ids separated by "/", at most 3 a side.
    home_cards: str = ""
    away_cards: str = ""
    #: A specialist card set, by name or path; "" = the example set.
    card_set: str = ""
    #: The specialist cards of that set, by id (read when cards are chosen or a set named).
    specialists: Mapping[str, Card] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def make(cls, cards: CardSource = no_card_source, **options: Any) -> Options:
        """The options given, checked; ``cards`` finds the card set named (``card_set``)."""
        known = set(cls.__dataclass_fields__) - {"specialists"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise ValueError(f"unknown masume-tactics option(s) {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(known))}")
        made = cls(**options)
        if made.rules not in ("standard", "beginner"):
            raise ValueError(f"rules must be standard or beginner, not {made.rules!r}")
        for name in ("goals_to_win", "halves", "turn_seconds"):
            value = getattr(made, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a whole number of at least 0, not {value!r}")
        for name in ("shootout", "lineup"):
            if not isinstance(getattr(made, name), bool):
                raise ValueError(f"{name} must be true or false")
        if not (made.home_cards or made.away_cards or made.card_set):
            return made
        found = specialists(cards(str(made.card_set or EXAMPLE_SET)))
        chosen: list[str] = []
        for side in ("home", "away"):
            ids = [c for c in str(getattr(made, f"{side}_cards")).split("/") if c]
            if len(ids) > 3:
                raise ValueError(f"{side} chooses at most 3 specialist cards, not {len(ids)}")
            for card in ids:
                if card not in found:
                    raise ValueError(f"unknown specialist card {card!r}; "
                                     f"the set has {', '.join(sorted(found))}")
                if card in chosen:
                    raise ValueError(f"specialist card {card!r} is chosen twice")
                chosen.append(card)
        return replace(made, specialists=found)

    def bonus(self, side: int, shirt: int, kind: str, square: int) -> int:
        """What the side's specialist cards add for shirt ``shirt`` doing ``kind`` on ``square``.

        >>> from masume.cards import load_card_set
        >>> options = Options.make(load_card_set, home_cards="striker")
        >>> options.bonus(HOME, 9, "ground", SQUARE_INDEX["G12"])
        1
        """
        ids = self.home_cards if side == HOME else self.away_cards
        if not ids:
            return 0
        total = 0
        for card_id in ids.split("/"):
            card = self.specialists.get(card_id)
            if card and card.shirt == shirt:
                total += sum(a.value for a in card.abilities
                             if a.kind == kind and a.applies(side, square))
        return total

    def text(self) -> str:
        default = Options()
        return " ".join(
            f"{name}={getattr(self, name)}" for name in self.__dataclass_fields__
            if name != "specialists" and getattr(self, name) != getattr(default, name)
        )


# --------------------------------------------------------------------------- position

#: ``pending``: what the rules wait for inside an action, a tuple whose first item
#: names it (all items are str or int, so that ``to_text`` can write them):
#:   ("kick", kicker, kind, dx, dy)          -- the die for a ground or lob kick
#:   ("charge", defender, keeper)            -- the defender's die
#:   ("charge2", defender, keeper, die)      -- the keeper's die
#:   ("receive", player, touched)            -- keep or one-touch (touched: bitmask)
#:   ("header", player)                      -- keep or head a lob on
#:   ("bounce", square, distance, side, touched) -- the direction of a bounce, chosen by side
#:   ("goal", conceding side)                -- restart
#:   ("halftime", side to kick off)          -- restart
#:   ("place", kind, spot, side)             -- choose the set-piece kicker
#:   ("replace", kind, kicker, side, stage, count, mask) -- re-placements (stage "o"/"d")
#:   ("guard", kicker)                       -- the keeper's penalty square
#:   ("penalty", kicker, guard square)       -- the kicker's die
#:   ("stepin", thrower)                     -- the thrower's step back in
Pending = tuple[Any, ...]  # str and int items, by kind (above): to_text writes them


#: The sides' colours, and how the highlights of ``status()`` show: the called line
#: before the roll, the ball's path after it, the square a choice or a set piece is
#: about, where a choice may put the ball, the two players of a charge, and what the
#: referee calls.
LEGEND = Legend(
    sides={"home": (0, 90, 255), "away": (255, 30, 0)},
    highlights={
        "line": Light((255, 150, 0), "pulse", label="kick line"),
        "path": Light((110, 70, 0), label="ball's path"),
        "target": Light((0, 200, 255), "pulse"),
        "options": Light((0, 255, 60), "pulse", when_still=True, label="ball may go"),
        "charge": Light((255, 0, 160), "blink"),
        "offside": Light((255, 255, 0), "blink"),
        "foul": Light((255, 60, 0), "blink"),
        "out": Light((0, 120, 255), "blink"),
        "goal": Light((255, 255, 255), "blink"),
        "setup": Light((0, 200, 200), label="set up here"),
    },
)


@dataclass(frozen=True, repr=False)
class Position:
    """A moment of a Masume Soccer Tactics match. Immutable and hashable.

    ``players[i]`` is the square of player i (0-10 home shirts 1-11, 11-21 away);
    a player on the ball's square keeps it.
    """

    players: tuple[int, ...]
    ball: int
    offence: int = HOME
    to_move: int = HOME
    action: int = 1
    used: int = 0  # bitmask of players that moved (offence) / acted (defence) this turn
    pending: Pending = ()
    score: tuple[int, int] = (0, 0)
    last_touch: int = -1
    banned: int = -1  # the set-piece or kick-off kicker, until someone else touches the ball
    must_kick: int = -1  # the set-piece kicker who must kick by action 2 (or 1 at a kick-off)
    restart: str = ""  # the kind of set piece the next kick is ("kickoff", "throw", ...)
    half: int = 1
    kicked_off: int = HOME  # who kicked off the match
    over: str = ""  # "" or the outcome reason
    resigned: int = -1
    options: Options = field(default_factory=Options)
    #: The squares the ball went through in the last action (for the LEDs); not compared.
    path: tuple[int, ...] = field(default=(), compare=False)
    #: What the last action led to that everyone must hear of: (meaning, words, squares),
    #: e.g. ("offside", "offside: home-10", (G12,)); the status announces it. Not compared.
    event: tuple[str, str, tuple[int, ...]] | tuple[()] = field(default=(), compare=False)
    #: The turns begun since the start (a side's turn, a restart, a steal's fresh turn): the
    #: status reports it, so the table restarts a turn clock. Not compared, not written.
    turn: int = field(default=1, compare=False)

    game: ClassVar[str] = GAME
    sides: ClassVar[tuple[str, ...]] = SIDES
    legend: ClassVar[Legend] = LEGEND

    def __repr__(self) -> str:
        return f"<Position {self.to_text()!r}>"

    def __hash__(self) -> int:
        # The dataclass's hash (of the compared fields), computed once: positions
        # are dict keys throughout the tracker's search.
        try:
            hashed: int = self.__dict__["_hash"]
            return hashed
        except KeyError:
            value = self.__dict__["_hash"] = hash(_compared_values(self.__dict__))
            return value

    def __getstate__(self) -> dict[str, Any]:
        # Not what is cached: a string's hash differs from one process to another.
        return {k: v for k, v in self.__dict__.items() if k in _FIELDS}

    def _with(self, **changes: Any) -> Position:
        """``dataclasses.replace(self, **changes)`` without its checks and the frozen
        ``__init__`` (one ``object.__setattr__`` per field): the same position, made
        several times faster. The generation makes one or more per candidate action."""
        made = _new_object(Position)
        values = made.__dict__
        values.update(self.__dict__)  # the fields, and what is cached: not all of it holds
        values.pop("_legal", None)
        values.pop("_hash", None)
        if "players" in changes:  # else the same squares: the same map (never changed)
            values.pop("_at", None)
        values.update(changes)
        return made

    # ----------------------------------------------------------- queries

    @cached_property
    def _at(self) -> dict[int, int]:
        return {square: i for i, square in enumerate(self.players)}

    @property
    def keeper(self) -> int:
        """The player keeping the ball, or -1 for a loose ball."""
        return self._at.get(self.ball, -1)

    def player_at(self, square: str) -> str | None:
        """The piece name of the player on ``square``.

        >>> from masume.rules.masume_tactics import RULES
        >>> RULES.start().player_at("G2")
        'home-1'
        """
        i = self._at.get(_square(square), -1)
        return PIECE_NAMES[i] if i >= 0 else None

    @property
    def beginner(self) -> bool:
        return self.options.rules == "beginner"

    def actions_per_turn(self, side: int | None = None) -> int:
        side = self.to_move if side is None else side
        if self.beginner:
            return 1
        return 2 if side == self.offence else 3

    def layout(self) -> dict[str, tuple[str, ...]]:
        """Square -> pieces, bottom to top; the keeping player stands on the ball.

        >>> from masume.rules.masume_tactics import RULES
        >>> RULES.start().layout()["G11"]
        ('away-9',)
        """
        kind = self.pending[0] if self.pending else ""
        charging = self.pending[1] if kind in ("charge", "charge2") else -1
        out: dict[str, tuple[str, ...]] = dict(zip(map(SQUARE_NAMES.__getitem__, self.players),
                                                   _ALONE))
        if charging >= 0:  # shown on the keeper's square, below
            del out[SQUARE_NAMES[self.players[charging]]]
        ball = self.ball
        if kind == "kick":
            # A called kick is shown by the ball put down one square along the called
            # line (how the players call it on the table, docs/playing.md); the die
            # then takes it on from there. Off the board, it stays at the kicker's feet.
            x, y = _xy(self.players[self.pending[1]])
            nudge = _sq(x + self.pending[3], y + self.pending[4])
            if _is_board(x + self.pending[3], y + self.pending[4]):
                ball = nudge
        if ball in SQUARE_NAMES:
            name = SQUARE_NAMES[ball]
            out[name] = ("ball",) + out.get(name, ())
        if charging >= 0:
            # The charging defender stands on the ball keeper's square until the rolls
            # decide: that is how a charge is made on the table.
            name = SQUARE_NAMES[self.players[self.pending[2]]]
            out[name] = out[name] + (PIECE_NAMES[charging],)
        return out

    def outcome(self) -> Outcome | None:
        if not self.over:
            return None
        score = {SIDES[0]: self.score[0], SIDES[1]: self.score[1]}
        if self.resigned >= 0:
            return Outcome(SIDES[1 - self.resigned], "resignation", score)
        if self.over.startswith("penalty shoot-out"):
            home, away = (int(n) for n in self.over.split()[-1].split("-"))
            return Outcome(SIDES[0] if home > away else SIDES[1], self.over, score)
        if self.score[0] == self.score[1]:
            return Outcome(None, self.over, score)
        return Outcome(SIDES[0] if self.score[0] > self.score[1] else SIDES[1], self.over, score)

    def status(self) -> Status:
        side = SIDES[self.to_move]
        score = {SIDES[0]: self.score[0], SIDES[1]: self.score[1]}
        role = "offence" if self.to_move == self.offence else "defence"
        n = self.actions_per_turn()
        highlights: dict[str, tuple[str, ...]] = {}
        if self.path:
            highlights["path"] = tuple(SQUARE_NAMES[s] for s in self.path if s in SQUARE_NAMES)
        awaiting: Awaiting | None = None
        message = f"{side}, {role}, action {self.action} of {n}"
        kind = self.pending[0] if self.pending else ""
        if self.over:
            return Status(side, self.action, n, score, None, str(self.outcome()), highlights)
        if kind == "shootout":
            hg, ag, hn, an, guard = self.pending[1:6]
            message = f"penalty shoot-out {hg}-{ag} ({hn} and {an} kicks): "
            if guard < 0:
                message += f"{side}'s keeper chooses his square before the net"
                highlights["target"] = tuple(SQUARE_NAMES[s] for s in PENALTY_GUARD[self.to_move])
            else:
                awaiting = "die"
                message += f"{side}'s penalty taker rolls the die"
        elif kind in ("kick", "charge", "charge2", "penalty"):
            awaiting = "die"
            if kind == "kick":  # the called line, up to the longest kick
                x, y = _xy(self.players[self.pending[1]])
                line = []
                for step in range(1, 9):
                    q = (x + self.pending[3] * step, y + self.pending[4] * step)
                    if not _is_board(*q):
                        break
                    line.append(SQUARE_NAMES[_sq(*q)])
                highlights["line"] = tuple(line)
            elif kind in ("charge", "charge2"):
                highlights["charge"] = (SQUARE_NAMES[self.players[self.pending[1]]],
                                        SQUARE_NAMES[self.players[self.pending[2]]])
            who = {"kick": "the kicker", "charge": "the charging defender",
                   "charge2": "the ball keeper", "penalty": "the penalty taker"}[kind]
            message += f": {who} rolls the die"
            if kind == "charge2":
                message += f" (the defender rolled {self.pending[3]})"
        elif kind == "receive":
            message += f": {PIECE_NAMES[self.pending[1]]} keeps the ball or lets it run (touch)"
            highlights["target"] = (SQUARE_NAMES[self.ball],)
        elif kind == "header":
            message += f": {PIECE_NAMES[self.pending[1]]} keeps the ball or heads it on"
            highlights["target"] = (SQUARE_NAMES[self.ball],)
        elif kind == "bounce":
            message += (f": {SIDES[self.pending[3]]} chooses where the ball bounces "
                        f"{self.pending[2]} square(s)")
            highlights["target"] = (SQUARE_NAMES[self.ball],)
        elif kind in ("goal", "halftime"):
            what = "goal!" if kind == "goal" else "half time:"
            message = f"{what} {SIDES[self.pending[1]]} to kick off"
            if kind == "goal":
                highlights["goal"] = (SQUARE_NAMES[self.ball],)
            highlights["setup"] = tuple(SQUARE_NAMES[s] for s in _formation(self.pending[1]))
        elif kind == "place":
            piece, spot = _SET_PIECES[self.pending[1]], SQUARE_NAMES[self.pending[2]]
            message = f"{side}: {piece} on {spot}, choose the taker"
            highlights["target"] = (spot,)
        elif kind == "replace":
            stage, count = self.pending[4], self.pending[5]
            if stage == "o":
                message = (f"{side}: re-place any players for the "
                           f"{_SET_PIECES[self.pending[1]]}, then ready")
            else:
                message = f"{side}: re-place up to {count} player(s), then ready"
            highlights["target"] = (SQUARE_NAMES[self.players[self.pending[2]]],)
        elif kind == "lineup":
            where = ("own half" if self.pending[1] == self.to_move
                     else "own half, outside the centre circle")
            message = f"{side}: set up your formation ({where}), then ready"
            own = self.players[self.to_move * 11:self.to_move * 11 + 11]
            highlights["setup"] = tuple(SQUARE_NAMES[s] for s in own)
        elif kind == "guard":
            message = f"{side}: the keeper chooses his square before the net"
            highlights["target"] = tuple(SQUARE_NAMES[s] for s in PENALTY_GUARD[self.to_move])
        elif kind == "stepin":
            message += f": {PIECE_NAMES[self.pending[1]]} steps back onto the pitch"
        elif self.must_kick >= 0 and self.restart == "kickoff":
            taker = PIECE_NAMES[self.must_kick]
            message += f": kick-off by {taker} on {SQUARE_NAMES[self.players[self.must_kick]]}"
        elif self.must_kick >= 0:
            message += f": {PIECE_NAMES[self.must_kick]} must kick by action 2"
        if kind in ("receive", "header", "bounce", "stepin"):
            # Where each choice would take the ball (or the thrower): the players
            # choose by putting it there.
            highlights["options"] = self._option_squares()
        if self.event:
            meaning, words, squares = self.event
            message = f"{words}! {message}"
            highlights[meaning] = tuple(SQUARE_NAMES[s] for s in squares if s in SQUARE_NAMES)
        return Status(side, self.action, n, score, awaiting, message, highlights,
                      self._timers(kind), turn=self.turn, deciding=self._deciding(kind))

    def _deciding(self, kind: str) -> str | None:
        """The side whose player makes the choice now, when not the side to move: the
        receiver of a kick (keep or one-touch, keep or head on), a bounce's chooser."""
        if kind in ("receive", "header"):
            side = _side(self.pending[1])
        elif kind == "bounce":
            side = self.pending[3]
        else:
            return None
        return SIDES[side] if side != self.to_move else None

    def _option_squares(self) -> tuple[str, ...]:
        """Where the choices now (keep excepted) put the ball, or the thrower stepping in."""
        out: list[str] = []
        for action in self._legal:
            if isinstance(action, Setup) and action.kind == "in":
                out.append(action.frm)
                continue
            if not isinstance(action, Choice) or action.kind == "keep":
                continue
            after = self._result(action)
            if after is None:
                continue
            square = after.path[-1] if after.path else after.ball
            if square in SQUARE_NAMES and SQUARE_NAMES[square] not in out:
                out.append(SQUARE_NAMES[square])
        return tuple(out)

    def _timers(self, kind: str) -> dict[str, Timer]:
        """The time limits of the options, for the table to keep (docs: "Time")."""
        timers: dict[str, Timer] = {}
        if self.over:
            return timers
        if self.options.halves and kind not in ("halftime", "shootout"):
            timers[f"half {self.half}"] = Timer(self.options.halves * 60, Whistle())
        if self.options.turn_seconds and kind in ("", "kick", "charge", "charge2", "receive",
                                                  "header", "bounce", "stepin"):
            timers["turn"] = Timer(self.options.turn_seconds, Timeout(), per_turn=True)
        return timers

    # ----------------------------------------------------------- legal actions

    def legal_actions(self) -> Iterator[Action]:
        """Every legal action from here, each once."""
        return iter(self._legal)

    def is_legal(self, action: object) -> bool:
        if ("_legal" not in self.__dict__ and self.pending
                and self.pending[0] in ("replace", "lineup")):
            return self._replacement_legal(action)
        try:
            return action in self._legal
        except TypeError:
            return False

    def _replacement_legal(self, action: object) -> bool:
        """``action in self._legal`` in re-placements, without listing them all (some
        fifteen hundred): ``ready``, or a player that may move to a square it may take."""
        if not isinstance(action, Setup):
            return False
        try:
            if action == _READY:
                return True
            if action.kind != "replace" or action.frm not in SQUARE_INDEX \
                    or action.to not in SQUARE_INDEX:
                return False
        except TypeError:  # not hashable, so not an action
            return False
        return (self._at.get(SQUARE_INDEX[action.frm], -1) in self._replacement_movers()
                and self._replacement_target(SQUARE_INDEX[action.to]))

    def apply(self, action: Action) -> Position:
        """The position after ``action``; raises :class:`IllegalAction` with the reason."""
        if not self.is_legal(action):
            raise IllegalAction(f"{action}: {self._why_illegal(action)}")
        if isinstance(action, Pass):
            return self._end_action()
        child = self._result(action)
        assert child is not None
        return child

    def footprint(self, action: Action) -> frozenset[str] | None:
        """Where ``action`` may change the board (:class:`~masume.rules.KnowsFootprints`):
        a re-placement during a set piece moves one player and nothing else, and so
        does a step in open play (the ball it carries goes with it; a goal kick its
        keeper earns is taken where the ball is); ``ready`` moves nothing but the ball,
        to the set-piece kicker's feet where it is not there yet. A ground or lob kick
        waits for the die with the ball put down one square along the called line (see
        ``layout``), a charge with the defender on the keeper's square (from behind, a
        foul: the free kick is taken where the ball is, a penalty waits for its taker).
        For other actions None."""
        if not self.pending:
            kind = type(action)
            if kind is Move or kind is Charge:
                return frozenset((action.frm, action.to))  # type: ignore[union-attr]
            if kind is Kick and action.kind != "inside":  # type: ignore[union-attr]
                return _called_squares(action.frm, action.direction)  # type: ignore[union-attr]
        elif self.pending[0] in ("replace", "lineup"):
            try:
                return _REPLACEMENT_SQUARES[action]
            except (KeyError, TypeError):
                pass
            if action == _READY:
                if self.pending[0] == "lineup":
                    return _NOWHERE
                feet = self.players[self.pending[2]]
                return (_NOWHERE if feet == self.ball
                        else frozenset(SQUARE_NAMES[s] for s in (feet, self.ball)
                                       if s in SQUARE_NAMES))
        return None

    @cached_property
    def _legal(self) -> dict[Action, None]:
        out: dict[Action, None] = {}
        if self.over:
            return out
        if self.pending and self.pending[0] in ("replace", "lineup"):
            return dict.fromkeys(self._candidates())  # every candidate of these is legal
        free = self.must_kick < 0  # then every step is legal (see _move_ok)
        for action in self._candidates():
            kind = type(action)
            if kind is Move:
                ok = free or self._move_ok(action)  # type: ignore[arg-type]
            elif kind in _ALWAYS_LEGAL:
                ok = True  # every candidate of these is legal
            else:
                ok = self._result(action) is not None
            if ok:
                out[action] = None
        # A side with nothing to do passes (the clock's actions are the table's, not its).
        if not self.pending and all(isinstance(a, (Whistle, Timeout)) for a in out):
            out[Pass()] = None
        return out

    def _move_ok(self, move: Move) -> bool:
        """Whether a candidate step is legal (the set-piece and kick-off kicker's duties)."""
        if self.must_kick < 0:
            return True
        if self.action >= self._kick_deadline():
            return False
        i = self._at[SQUARE_INDEX[move.frm]]
        return i != self.must_kick or (self.restart == "goal-kick-2" and not move.leave)

    def _candidates(self) -> Iterator[Action]:
        kind = self.pending[0] if self.pending else ""
        if kind == "shootout":
            if self.pending[5] < 0:
                for s in PENALTY_GUARD[self.to_move]:
                    yield Setup("guard", SQUARE_NAMES[s])
            else:
                for die in range(1, 7):
                    yield Roll(die)
            return
        if kind in ("kick", "charge", "charge2", "penalty"):
            for die in range(1, 7):
                yield Roll(die)
            return
        if kind == "receive":
            yield Choice("keep")
            if not self.beginner and not (self.pending[2] >> self.pending[1]) & 1:
                for name in DIRECTIONS:
                    yield Choice("touch", name)
            return
        if kind == "header":
            yield Choice("keep")
            for name in DIRECTIONS:
                yield Choice("head", name, 1)
                yield Choice("head", name, 2)
            return
        if kind == "bounce":
            for name in DIRECTIONS:
                yield Choice("bounce", name)
            return
        if kind in ("goal", "halftime"):
            yield Restart()
            return
        if kind == "place":
            for i in self._side_players(self.to_move):
                yield Setup("kicker", SQUARE_NAMES[self.players[i]])
            return
        if kind in ("lineup", "replace"):
            yield Setup("ready")
            movers, empty = self._replacements()
            for i in movers:
                row = _replacements_from(self.players[i])
                yield from [row[s] for s in empty]
            return
        if kind == "guard":
            for s in PENALTY_GUARD[self.to_move]:
                yield Setup("guard", SQUARE_NAMES[s])
            return
        if kind == "stepin":
            for s in self._stepin_squares(self.pending[1]):
                yield Setup("in", SQUARE_NAMES[s])
            return
        # Open play.
        if self.options.halves:
            yield Whistle()
        if self.options.turn_seconds and self.must_kick < 0:
            yield Timeout()
        side = self.to_move
        keeper = self.keeper
        for i in self._side_players(side):
            square = self.players[i]
            used = (self.used >> i) & 1
            if not used:
                at = self._at
                banned_ball = self.ball if i == self.banned else -1
                for to, step, leaving in _step_actions(square):
                    if to not in at and to != banned_ball:  # :meth:`_steps`
                        yield step
                        if i == keeper:
                            yield leaving
            if i == keeper and side == self.offence:
                for name in DIRECTIONS:
                    yield Kick(SQUARE_NAMES[square], "ground", name)
                    if not self.beginner:
                        yield Kick(SQUARE_NAMES[square], "lob", name)
                        for distance in range(1, 3 + self._card(i, "inside-range")):
                            yield Kick(SQUARE_NAMES[square], "inside", name, distance)
            if keeper >= 0 and side != self.offence and _side(keeper) != side and not used:
                kx, ky = _xy(self.players[keeper])
                x, y = _xy(square)
                if max(abs(kx - x), abs(ky - y)) == 1:
                    yield Charge(SQUARE_NAMES[square], SQUARE_NAMES[self.players[keeper]])

    def _replacements(self) -> tuple[list[int], list[int]]:
        """In a set piece's re-placements: the players that may still be re-placed,
        and the squares they may go to (each player to each square, in this order)."""
        movers = self._replacement_movers()
        if not movers:
            return [], []
        at, ball = self._at, self.ball
        if self.pending[0] == "lineup":
            side, kicking = self.to_move, self.pending[1]
            empty = [s for s in _PITCH_ORDER
                     if s not in at and s != ball and _progress(side, s) <= 8
                     and (side == kicking or s not in CENTRE_CIRCLE[side])]
        else:
            empty = [s for s in _PITCH_ORDER if s not in at and s != ball]
        return movers, empty

    def _replacement_movers(self) -> list[int]:
        """In a set piece's re-placements: the players that may still be re-placed."""
        side = self.to_move
        if self.pending[0] == "lineup":
            mask = self.pending[3]
            return [i for i in self._side_players(side)
                    if not (i == self.must_kick or (mask >> i) & 1)]
        kicker, mask = self.pending[2], self.pending[6]
        if self.pending[4] == "d" and (mask).bit_count() >= self.pending[5]:
            return []
        return [i for i in self._side_players(side) if not (i == kicker or (mask >> i) & 1)]

    def _replacement_target(self, square: int) -> bool:
        """Whether a player may be re-placed onto ``square`` (one of ``_replacements``'s
        squares, told without listing them)."""
        if square not in PITCH or square in self._at or square == self.ball:
            return False
        if self.pending[0] != "lineup":
            return True
        side = self.to_move
        return _progress(side, square) <= 8 and (side == self.pending[1]
                                                 or square not in CENTRE_CIRCLE[side])

    def actions_changing(self, squares: frozenset[str]) -> Iterator[Action]:
        """The legal actions, in their order, whose footprint holds all of ``squares`` or
        is unknown (:class:`~masume.rules.KnowsFootprints`): in re-placements, without
        listing the others."""
        if not (squares and self.pending and self.pending[0] in ("replace", "lineup")):
            yield from self._legal
            return
        yield _READY
        if len(squares) > 2:
            return
        wanted = {SQUARE_INDEX[name] for name in squares if name in SQUARE_INDEX}
        if len(wanted) < len(squares):
            return
        movers = self._replacement_movers()
        for i in movers:
            frm = self.players[i]
            rest = wanted - {frm}
            if not rest:  # the mover's square is all there is: every target
                yield from [_replacement(frm, to) for to in self._replacements()[1]]
            elif len(rest) == 1 and self._replacement_target(to := next(iter(rest))):
                yield _replacement(frm, to)

    def _side_players(self, side: int) -> range:
        return range(side * 11, side * 11 + 11)

    def _steps(self, i: int) -> Iterator[int]:
        at = self._at
        banned_ball = self.ball if i == self.banned else -1
        for to in _pitch_steps(self.players[i]):
            if to not in at and to != banned_ball:
                yield to

    def _stepin_squares(self, i: int) -> list[int]:
        x, y = _xy(self.players[i])
        inward = 1 if x == 0 else -1
        out = []
        for dy in (-1, 0, 1):
            to = _sq(x + inward, y + dy)
            if _on_pitch(x + inward, y + dy) and to not in self._at and to != self.ball:
                out.append(to)
        return out

    # ----------------------------------------------------------- effects

    def _result(self, action: Action) -> Position | None:
        """The position after ``action``, or None if it is not legal here."""
        base = self._with(path=(), event=())
        if isinstance(action, Timeout):  # the rest of the turn is lost
            return base._with(to_move=1 - self.to_move, action=1, used=0, turn=self.turn + 1)
        if isinstance(action, Roll):
            return base._roll(action.die)
        if isinstance(action, Choice):
            return base._choice(action)
        if isinstance(action, Restart):
            return base._restart()
        if isinstance(action, Whistle):
            return base._whistle()
        if isinstance(action, Setup):
            return base._setup(action)
        if isinstance(action, Move):
            return base._move(action)
        if isinstance(action, Kick):
            return base._kick(action)
        if isinstance(action, Charge):
            return base._charge(action)
        return None

    def _mark_used(self, i: int) -> Position:
        return self._with(used=self.used | (1 << i))

    def _move(self, move: Move) -> Position | None:
        frm, to = SQUARE_INDEX[move.frm], SQUARE_INDEX[move.to]
        i = self._at[frm]
        players = list(self.players)
        players[i] = to
        ball = self.ball
        if frm == ball and not move.leave:
            ball = to
        pos = self._with(players=tuple(players), ball=ball)
        if self.must_kick == i and self.restart != "goal-kick-2":
            return None
        if self.must_kick == i and move.leave:
            return None
        if pos.keeper == i and i != self.banned:
            pos = pos._with(last_touch=i, banned=-1)
        if self.must_kick >= 0 and self.action >= self._kick_deadline():
            return None
        return pos._mark_used(i)._end_action()

    def _card(self, player: int, kind: str) -> int:
        """The specialist-card bonus of ``player`` for ``kind`` where he stands."""
        return self.options.bonus(_side(player), player % 11 + 1, kind, self.players[player])

    def _kick_deadline(self) -> int:
        return 1 if self.restart == "kickoff" or self.beginner else 2

    def _kick(self, kick: Kick) -> Position | None:
        frm = SQUARE_INDEX[kick.frm]
        i = self._at[frm]
        if self.must_kick >= 0 and i != self.must_kick and self.action >= self._kick_deadline():
            return None
        direction = DIRECTIONS[kick.direction]
        if frm in TOUCH:
            # スローイン: 「フィールド内の3方向いずれかへ向けてプレーします」: the first square
            # is in the field (from A1, A16, M1, M16 two of the inward three: not over the end
            # line).
            x, y = _xy(frm)
            if not _on_pitch(x + direction[0], y + direction[1]):
                return None
        if self.restart == "corner" and i == self.must_kick and not _into_field(frm, direction):
            # コーナーキック: 「フィールド内の3方向いずれかへ向けてプレーします」
            return None
        base = self._with(must_kick=-1 if i == self.must_kick else self.must_kick, last_touch=i)
        if self.must_kick == i:
            base = base._with(banned=i)
        if kick.kind == "inside":
            x, y = _xy(frm)
            if kick.distance > 2 + self._card(i, "inside-range"):
                return None
            for step in range(1, max(2, kick.distance) + 1):
                sx, sy = x + direction[0] * step, y + direction[1] * step
                j = self._at.get(_sq(sx, sy), -1) if 0 <= sx <= 12 else -1
                if j >= 0 and _side(j) != _side(i):
                    return None  # an opponent within two squares on that line
            # Only an opponent closes a line: 「コース途中(2マス以内)に相手チームの選手がいる場合、
            # その方向へはキックできません」; the ball goes to the called square, past a team-mate.
            return base._travel(frm, direction, kick.distance, "inside", i, 1 << i)
        return base._with(pending=("kick", i, kick.kind, direction[0], direction[1]))

    def _charge(self, charge: Charge) -> Position | None:
        d = self._at[SQUARE_INDEX[charge.frm]]
        k = self._at[SQUARE_INDEX[charge.to]]
        ks = self.players[k]
        if _is_keeper(k):
            return None  # 「ゴールキーパーにはチャージできません」 (no condition)
        _dx, dy = (a - b for a, b in zip(_xy(self.players[d]), _xy(ks)))
        forward = 1 if _side(k) == HOME else -1
        pos = self._mark_used(d)
        if dy == -forward:  # from behind: a foul
            if self.beginner:
                return None  # the beginner rules know charges from the front and the side only
            words = f"foul: {PIECE_NAMES[d]} charged {PIECE_NAMES[k]} from behind"
            pos = pos._with(event=("foul", words, (ks, self.players[d])))
            return pos._foul(ks, 1 - _side(d))
        return pos._with(pending=("charge", d, k))

    def _roll(self, die: int) -> Position | None:
        kind = self.pending[0]
        if kind == "charge":
            return self._with(pending=("charge2", self.pending[1], self.pending[2], die))
        if kind == "charge2":
            d, k, droll = self.pending[1], self.pending[2], self.pending[3]
            bonus = self._card(d, "charge") - self._card(k, "hold")
            if self.players[d] in PENALTY_AREA[_side(d)]:
                bonus += 2 if _is_keeper(d) else 1
            pos = self._with(pending=())
            if droll + bonus >= die:
                players = list(self.players)
                players[d], players[k] = players[k], players[d]
                pos = pos._with(players=tuple(players), last_touch=d,
                              banned=-1 if self.banned != d else d)
            return pos._end_action()
        if kind == "shootout":
            hg, ag, hn, an, guard = self.pending[1:6]
            kicking = self.offence
            scored = die not in PENALTY_GUARD[1 - kicking][guard]
            if kicking == HOME:
                hg, hn = hg + scored, hn + 1
            else:
                ag, an = ag + scored, an + 1
            return self._with(pending=())._shootout(hg, ag, hn, an)
        if kind == "penalty":
            kicker, guard = self.pending[1], self.pending[2]
            defending = 1 - _side(kicker)
            faces = PENALTY_GUARD[defending][guard]
            pos = self._with(pending=(), last_touch=kicker)
            if die in faces:  # the keeper guessed right and catches it
                gk = defending * 11
                return pos._with(ball=pos.players[gk], last_touch=gk)._end_action()
            # The goal square the ball flies into: the net's faces, 1-2, 3-4, 5-6.
            goal = ({1: 5, 2: 5, 3: 6, 4: 6, 5: 7, 6: 7} if defending == HOME
                    else {1: 7, 2: 7, 3: 6, 4: 6, 5: 5, 6: 5})[die]
            square = _sq(goal, 0 if defending == HOME else 17)
            return pos._goal(square, (pos.players[kicker], square))
        # A kick.
        kicker, kick_kind, dx, dy = self.pending[1:5]
        frm = self.players[kicker]
        bonus = 2 if _is_keeper(kicker) and frm in PENALTY_AREA[_side(kicker)] else 0
        bonus += self._card(kicker, kick_kind)
        pos = self._with(pending=())
        if kick_kind == "lob":
            distance = (die + 2 if die <= 3 else die) + bonus
            return pos._travel(frm, (dx, dy), distance, "lob", kicker, 1 << kicker)
        return pos._travel(frm, (dx, dy), die + bonus, "ground", kicker, 1 << kicker, face=die)

    def _choice(self, choice: Choice) -> Position | None:
        kind = self.pending[0]
        if kind == "receive":
            player, touched = self.pending[1], self.pending[2]
            pos = self._with(pending=(), last_touch=player,
                          banned=-1 if self.banned != player else player)
            if choice.kind == "keep":
                return pos._end_action()
            return pos._travel(self.ball, DIRECTIONS[choice.direction], 1, "touch", player,
                               touched | (1 << player))
        if kind == "header":
            player = self.pending[1]
            pos = self._with(pending=(), last_touch=player,
                          banned=-1 if self.banned != player else player)
            if choice.kind == "keep":
                return pos._end_action()
            return pos._travel(self.ball, DIRECTIONS[choice.direction], choice.distance, "header",
                               player, 1 << player)
        if kind == "bounce":
            square, distance, _, touched = self.pending[1:5]
            hit = self._at.get(square, -1)
            return self._with(pending=())._travel(
                square, DIRECTIONS[choice.direction], distance, "bounce", hit, touched)
        return None

    def _travel(self, frm: int, direction: tuple[int, int], distance: int, mode: str, passer: int,
                touched: int, face: int = 0, path: tuple[int, ...] = ()) -> Position:
        """The ball goes ``distance`` squares from ``frm``; what it meets decides the rest."""
        x, y = _xy(frm)
        dx, dy = direction
        steps = 0
        passed = list(path)
        while steps < distance:
            nx, ny = x + dx, y + dy
            if ny in (0, 17) and 5 <= nx <= 7 and dx != 0 and not 5 <= x <= 7:
                # Into the goal from outside the posts on a diagonal: the post. The
                # ball rebounds diagonally back into the pitch (docs: "The post").
                dy = -dy
                nx, ny = x + dx, y + dy
            steps += 1
            x, y = nx, ny
            square = _sq(x, y)
            if not _on_pitch(x, y):
                if square in SQUARE_NAMES:
                    passed.append(square)
                over_bar = mode in ("lob", "header") and steps < distance
                return self._with(path=tuple(passed))._out(x, y, over_bar)
            passed.append(square)
            j = self._at.get(square, -1)
            if j < 0:
                continue
            if mode == "inside" and steps < distance:
                continue  # the inside kick goes past a team-mate on the way to its square
            if mode in ("lob", "header"):
                if steps < distance:
                    continue
                pos = self._with(ball=square, path=tuple(passed))
                if mode == "header":  # reading: a headed ball is kept where it lands
                    return pos._received(j, passer, final=True)
                return pos._received(j, passer, header=True)
            pos = self._with(ball=square, path=tuple(passed))
            if mode == "ground" and steps == 1:
                if face <= 4:
                    return pos._received(j, passer, touched=touched)
                return pos._bounce(square, face - 4, _side(passer), touched | (1 << j), j)
            if mode in ("inside", "touch") or distance - steps <= 1:
                return pos._received(j, passer, touched=touched)
            chooser = _side(j)
            return pos._bounce(square, distance - steps, chooser, touched | (1 << j), j)
        pos = self._with(ball=_sq(x, y), path=tuple(passed))
        return pos._end_action()

    def _bounce(self, square: int, distance: int, chooser: int, touched: int,
                hit: int) -> Position:
        pos = self._with(pending=("bounce", square, distance, chooser, touched), last_touch=hit,
                      banned=-1 if self.banned != hit else hit)
        return pos

    def _received(self, j: int, passer: int, header: bool = False, final: bool = False,
                  touched: int = 0) -> Position:
        if self._offside(j, passer):
            square = self.players[j]
            called = self._with(event=("offside", f"offside: {PIECE_NAMES[j]}", (square,)))
            return called._foul(square, 1 - _side(j))
        if header:
            return self._with(pending=("header", j))
        if final or self.beginner or (touched >> j) & 1:
            return self._with(last_touch=j, banned=-1 if self.banned != j else j)._end_action()
        return self._with(pending=("receive", j, touched | (0 if passer < 0 else (1 << passer))))

    def _offside(self, j: int, passer: int) -> bool:
        """A pass received in an offside position (docs: "Offside")."""
        if self.beginner or passer < 0 or _side(passer) != _side(j) or passer == j:
            return False
        if self.restart in ("throw", "corner", "goal-kick-1", "goal-kick-2"):
            return False
        side = _side(j)
        defenders = [self.players[i] for i in self._side_players(1 - side) if not _is_keeper(i)]
        last = max(_progress(side, s) for s in defenders)
        mine = _progress(side, self.players[j])
        return mine > last and _progress(side, self.players[passer]) < mine

    # ----------------------------------------------------------- turns and restarts

    def _end_action(self) -> Position:
        """The action is over: swap roles if the defence gained the ball, else count it."""
        pos = self._with(pending=())
        if pos.restart and pos.must_kick < 0:  # the set-piece kick has been taken
            thrower = next((i for i, s in enumerate(pos.players) if s in TOUCH), -1)
            pos = pos._with(restart="")
            if (pos.restart == "" and self.restart == "throw" and thrower >= 0
                    and pos._stepin_squares(thrower)):
                return pos._with(pending=("stepin", thrower))
        keeper = pos.keeper
        if keeper >= 0 and _side(keeper) != pos.offence:
            new = _side(keeper)
            if _is_keeper(keeper) and pos.players[keeper] in PENALTY_AREA[new] and not pos.beginner:
                return pos._set_piece("goal-kick-2", pos.players[keeper], new, kicker=keeper)
            if pos.beginner:
                # ビギナールール: 「1ターンにつき、これら3つの中から1つをえらびプレーします」: the
                # roles swap, and the turn passes as after any play (no extra play after a charge).
                return pos._with(offence=new, to_move=1 - pos.to_move, action=1, used=0,
                                 turn=pos.turn + 1, must_kick=-1, restart="")
            return pos._with(offence=new, to_move=new, action=1, used=0, turn=pos.turn + 1,
                           must_kick=-1, restart="")
        if pos.action >= pos.actions_per_turn():
            return pos._with(to_move=1 - pos.to_move, action=1, used=0, turn=pos.turn + 1)
        return pos._with(action=pos.action + 1)

    def _out(self, x: int, y: int, over_bar: bool = False) -> Position:
        """The ball left the pitch at (x, y) (a goal, or out of play)."""
        square = _sq(x, y)
        last = self.last_touch
        last_side = _side(last) if last >= 0 else self.offence
        # Where it went out, for the lights: the square off the pitch if the board has
        # one (the touch files, the goals), else the last pitch square it crossed.
        seen = square if square in SQUARE_NAMES else (self.path[-1] if self.path else self.ball)
        if 1 <= y <= 16:  # over a touchline: throw-in for the other side
            out = self._with(ball=square, event=("out", "out of play", (seen,)))
            return out._set_piece("throw", square, 1 - last_side)
        end = HOME if y <= 0 else AWAY  # the side that defends this end
        if 5 <= x <= 7 and not over_bar and y in (0, 17):
            if self.restart == "throw":
                # A throw straight into a goal does not count.
                words = "a throw-in straight into the goal does not count"
                out = self._with(ball=square, event=("out", words, (square,)))
                if end != last_side:
                    return out._set_piece("goal-kick-1", GOAL_KICK[(end, x <= 6)], end)
                return out._set_piece("corner", CORNERS[(end, x <= 6)], 1 - end)
            return self._goal(square, self.path)
        left = x <= 6
        out = self._with(event=("out", "over the bar" if over_bar else "out of play", (seen,)))
        if last_side == end:
            return out._set_piece("corner", CORNERS[(end, left)], 1 - end)
        return out._set_piece("goal-kick-1", GOAL_KICK[(end, left)], end)

    def _goal(self, square: int, path: tuple[int, ...]) -> Position:
        conceding = HOME if square in GOALS[HOME] else AWAY
        score = (self.score[0] + (conceding == AWAY), self.score[1] + (conceding == HOME))
        pos = self._with(ball=square, score=score, pending=("goal", conceding),
                      to_move=conceding, action=1, used=0, turn=self.turn + 1,
                      must_kick=-1, banned=-1, restart="",
                      path=tuple(path))
        if self.options.goals_to_win and score[1 - conceding] >= self.options.goals_to_win:
            return pos._with(over="goals", pending=())
        return pos

    def _restart(self) -> Position:
        side = self.pending[1]
        players = _formation(side)
        pending = ("lineup", side, "k", 0) if self.options.lineup else ()
        return self._with(players=players, ball=CENTRE_MARK[side], offence=side, to_move=side,
                       action=1, used=0, turn=self.turn + 1, pending=pending,
                       last_touch=-1, banned=-1,
                       must_kick=side * 11 + 8, restart="kickoff")

    def _whistle(self) -> Position:
        if self.half >= 2:
            if self.score[0] == self.score[1] and self.options.shootout:
                pos = self._with(players=_formation(self.kicked_off), used=0, must_kick=-1,
                              banned=-1, restart="", action=1, turn=self.turn + 1)
                return pos._shootout(0, 0, 0, 0)
            return self._with(over="full time", pending=())
        side = 1 - self.kicked_off
        return self._with(half=2, pending=("halftime", side), to_move=side, action=1, used=0,
                       turn=self.turn + 1,
                       must_kick=-1, banned=-1, restart="")

    def _shootout(self, hg: int, ag: int, hn: int, an: int) -> Position:
        """The next kick of the penalty shoot-out, or its end (5 kicks each, then sudden death)."""
        decided = max(hn, an) <= 5 and (hg > ag + max(0, 5 - an) or ag > hg + max(0, 5 - hn))
        if hn == an and hn >= 5 and hg != ag:
            decided = True
        if decided:
            return self._with(over=f"penalty shoot-out {hg}-{ag}", pending=())
        kicking = HOME if hn == an else AWAY
        return self._with(ball=PENALTY_SPOT[kicking], pending=("shootout", hg, ag, hn, an, -1),
                       to_move=1 - kicking, offence=kicking)

    def _foul(self, square: int, side: int) -> Position:
        """A foul at ``square``: a free kick for ``side``, a penalty in the other side's area."""
        if square in PENALTY_AREA[1 - side] and not self.beginner:
            return self._with(pending=("place", "penalty", PENALTY_SPOT[side], side),
                           to_move=side, offence=side, action=1, used=0, turn=self.turn + 1,
                           must_kick=-1, banned=-1,
                           restart="")
        return self._set_piece("free-kick", square, side)

    def _set_piece(self, kind: str, spot: int, side: int, kicker: int = -1) -> Position:
        pos = self._with(ball=spot, offence=side, to_move=side, action=1, used=0,
                      turn=self.turn + 1, must_kick=-1,
                      banned=-1, restart="")
        if kicker >= 0:
            return pos._with(pending=("replace", kind, kicker, side, "o", 0, 0))
        if kind == "goal-kick-1":  # the goalkeeper takes it
            return pos._place(side * 11, kind, spot, side)
        return pos._with(pending=("place", kind, spot, side))

    def _place(self, kicker: int, kind: str, spot: int, side: int) -> Position:
        players = list(self.players)
        other = self._at.get(spot, -1)
        if other >= 0 and other != kicker:
            players[other] = players[kicker]  # the player on the spot makes room
        players[kicker] = spot
        pos = self._with(players=tuple(players))
        if kind == "penalty":
            return pos._with(pending=("guard", kicker), to_move=1 - side)
        return pos._with(pending=("replace", kind, kicker, side, "o", 0, 0))

    def _setup(self, setup: Setup) -> Position | None:
        kind = self.pending[0]
        if kind == "place" and setup.kind == "kicker":
            kicker = self._at[SQUARE_INDEX[setup.frm]]
            return self._place(kicker, self.pending[1], self.pending[2], self.pending[3])
        if kind == "replace":
            piece, kicker, side, stage, count, mask = self.pending[1:7]
            if setup.kind == "ready":
                if stage == "o":
                    count = (mask).bit_count()
                    pos = self._with(pending=("replace", piece, kicker, side, "d", count, 0),
                                  to_move=1 - side)
                    if (mask).bit_count() == 0:
                        return pos._setup(Setup("ready"))
                    return pos
                return self._with(pending=(), to_move=side, offence=side, action=1, used=0,
                               turn=self.turn + 1,
                               must_kick=kicker, restart=piece, ball=self.players[kicker])
            i = self._at[SQUARE_INDEX[setup.frm]]
            players = list(self.players)
            players[i] = SQUARE_INDEX[setup.to]
            pending = ("replace", piece, kicker, side, stage, count, mask | (1 << i))
            pos = self._with(players=tuple(players), pending=pending)
            return pos
        if kind == "lineup":
            kicking, stage, mask = self.pending[1:4]
            if setup.kind == "ready":
                if stage == "k":
                    return self._with(pending=("lineup", kicking, "o", 0), to_move=1 - kicking)
                return self._with(pending=(), to_move=kicking)
            i = self._at[SQUARE_INDEX[setup.frm]]
            players = list(self.players)
            players[i] = SQUARE_INDEX[setup.to]
            return self._with(players=tuple(players),
                           pending=("lineup", kicking, stage, mask | (1 << i)))
        if kind == "shootout":
            square = SQUARE_INDEX[setup.frm]
            gk = self.to_move * 11
            players = list(self.players)
            other = self._at.get(square, -1)
            if other >= 0 and other != gk:
                players[other] = players[gk]
            players[gk] = square
            return self._with(players=tuple(players), pending=self.pending[:5] + (square,),
                           to_move=self.offence)
        if kind == "guard":
            kicker = self.pending[1]
            square = SQUARE_INDEX[setup.frm]
            gk = (1 - _side(kicker)) * 11
            players = list(self.players)
            other = self._at.get(square, -1)
            if other >= 0 and other != gk:
                players[other] = players[gk]
            players[gk] = square
            return self._with(players=tuple(players), pending=("penalty", kicker, square),
                           to_move=_side(kicker))
        if kind == "stepin":
            i = self.pending[1]
            players = list(self.players)
            players[i] = SQUARE_INDEX[setup.frm]
            return self._with(players=tuple(players), pending=(), restart="")._end_action()
        return None

    # ----------------------------------------------------------- reasons

    def _why_illegal(self, action: object) -> str:
        status = self.status()
        if self.over:
            return f"the game is over ({self.outcome()})"
        if not isinstance(action, (Move, Kick, Charge, Roll, Choice, Setup, Restart, Whistle,
                                   Timeout, Pass)):
            return f"not a {GAME} action"
        kind = self.pending[0] if self.pending else ""
        if kind and not isinstance(action, (Roll, Choice, Setup, Restart)):
            return f"not now: {status.message}"
        if isinstance(action, Roll):
            if status.awaiting != "die":
                return "nothing waits for the die now"
            return "a die shows 1 to 6"
        if isinstance(action, (Choice, Setup, Restart)) and not kind:
            return f"not now: {status.message}"
        if isinstance(action, (Move, Kick, Charge)):
            frm = SQUARE_INDEX.get(action.frm, -1)
            i = self._at.get(frm, -1)
            if i < 0 or _side(i) != self.to_move:
                return f"there is no {SIDES[self.to_move]} player on {action.frm}"
            role = "offence" if self.to_move == self.offence else "defence"
            if self.must_kick >= 0 and i != self.must_kick and self.action >= self._kick_deadline():
                return f"{PIECE_NAMES[self.must_kick]} must take the kick now"
            if isinstance(action, Move):
                to = SQUARE_INDEX.get(action.to, -1)
                fx, fy = _xy(frm)
                tx, ty = _xy(to)
                if to < 0 or max(abs(fx - tx), abs(fy - ty)) != 1:
                    return "a player moves one square in one of 8 directions"
                if not _on_pitch(tx, ty):
                    return f"{action.to} is off the pitch"
                if to in self._at:
                    return f"{action.to} is taken"
                if (self.used >> i) & 1:
                    return f"{PIECE_NAMES[i]} has already moved this turn"
                if i == self.must_kick:
                    what = "the kick-off" if self.restart == "kickoff" else "the set piece"
                    return f"{PIECE_NAMES[i]} must take {what} before he moves"
                if i == self.banned:
                    return f"{PIECE_NAMES[i]} may not touch the ball again until another player has"
                if action.leave and frm != self.ball:
                    return f"{PIECE_NAMES[i]} does not keep the ball"
                return "not legal now"
            if isinstance(action, Kick):
                if role != "offence" or frm != self.ball:
                    return f"{PIECE_NAMES[i]} does not keep the ball"
                if action.kind == "inside":
                    return ("an inside kick goes 1 or 2 squares, and not along a line with an "
                            "opponent within 2 squares")
                if self.beginner:
                    return "the beginner rules have ground kicks only"
                if frm in TOUCH:
                    return "a throw-in goes into the field, in one of the directions into it"
                if self.restart == "corner" and i == self.must_kick:
                    return "a corner kick goes into the field, in one of its 3 directions"
                return "not legal now"
            if role != "defence":
                return "only the defence charges"
            if (self.used >> i) & 1:
                return f"{PIECE_NAMES[i]} has already played this turn"
            to = SQUARE_INDEX.get(action.to, -1)
            k = self._at.get(to, -1)
            if k < 0 or to != self.ball:
                return f"nobody keeps the ball on {action.to}"
            if _is_keeper(k):
                return "the goalkeeper cannot be charged (ゴールキーパーにはチャージできません)"
            return "a charge comes from a square next to the ball keeper"
        if isinstance(action, Whistle):
            return "the match has no clock (option halves)"
        if isinstance(action, Timeout):
            if not self.options.turn_seconds:
                return "the turns have no time limit (option turn_seconds)"
            return "the kick-off or set-piece kicker must kick first"
        if isinstance(action, Pass):
            return "a side may pass only when it has nothing else to do"
        if kind == "lineup" and isinstance(action, Setup) and action.kind == "replace":
            return ("set up each player once, onto an empty square of your own half (the side "
                    "not kicking off: outside the centre circle); the kick-off taker stays on "
                    "the centre mark")
        if kind == "replace" and isinstance(action, Setup) and action.kind == "replace":
            return ("re-place a player who has not been re-placed, onto an empty pitch square "
                    "(the defence: as many as the offence)")
        return f"not now: {status.message}"

    # ----------------------------------------------------------- notation

    def parse_action(self, text: str) -> Action:
        """Read one action (see docs/rules/masume-tactics.md, "Notation").

        >>> from masume.rules.masume_tactics import RULES
        >>> RULES.start().parse_action("g8 ground n")
        Kick(frm='G8', kind='ground', direction='N', distance=0)
        """
        from .notation import parse_notation

        action = parse_notation(text)
        if not self.is_legal(action):
            raise IllegalAction(f"{text.strip()}: {self._why_illegal(action)}")
        return action

    def notation(self, action: Action) -> str:
        return str(action)

    # ----------------------------------------------------------- text

    def to_text(self) -> str:
        """The whole position on one line, its header (docs: "Position header");
        ``RULES.from_text`` reads it, and the older ``home=... away=...`` form too.

        >>> from masume.rules.masume_tactics import RULES
        >>> RULES.from_text(RULES.start().to_text()) == RULES.start()
        True
        >>> RULES.start().to_text().split()[1:6]
        ['G8', 'home', '1', 'home', '0-0']
        """
        from .notation import write_header

        return write_header(self)

    def diagram(self) -> str:
        """A text drawing: H/A home/away players (shirt number), * the ball.

        >>> from masume.rules.masume_tactics import RULES
        >>> print(RULES.start().diagram().splitlines()[9])
         8 .   .   .   .   .   .   H9* .   .   .   .   .   .
        """
        lines = []
        for y in range(17, -1, -1):
            row = []
            for x in range(13):
                s = _sq(x, y)
                if s not in SQUARE_NAMES:
                    row.append("  ")
                    continue
                i = self._at.get(s, -1)
                cell = "." if i < 0 else f"{'HA'[_side(i)]}{i % 11 + 1}"
                if s == self.ball:
                    cell += "*"
                row.append(cell)
            lines.append(f"{y:2d} " + "".join(c.ljust(4) for c in row).rstrip())
        lines.append("   " + "".join(f.ljust(4) for f in FILES).rstrip())
        return "\n".join(lines)


#: The fields of a position, and those that make it equal to another (and its hash).
_FIELDS = tuple(f.name for f in fields(Position))
_COMPARED = tuple(f.name for f in fields(Position) if f.compare)
#: A position's fields -> the tuple of the compared ones (what its hash is of), in C.
_compared_values = itemgetter(*_COMPARED)
_new_object = object.__new__
_PITCH_ORDER = tuple(sorted(PITCH))
#: Player i's stack in a layout, standing alone.
_ALONE = tuple((name,) for name in PIECE_NAMES)
_READY = Setup("ready")
_NOWHERE: frozenset[str] = frozenset()


def _into_field(frm: int, direction: tuple[int, int]) -> bool:
    """Whether ``direction`` from the corner square ``frm`` is one of the 3 into the field
    (along either line, or the diagonal between them)."""
    x, y = _xy(frm)
    inward = (1 if x <= 6 else -1, 1 if y <= 8 else -1)
    return direction[0] in (0, inward[0]) and direction[1] in (0, inward[1])


#: Re-placements met so far, (from, to) -> the action, and each one's footprint: a
#: set piece's phase lists some fifteen hundred, again for every position of it.
_REPLACEMENTS: dict[tuple[int, int], Setup] = {}
_REPLACEMENT_SQUARES: dict[object, frozenset[str]] = {}


#: The kinds of action whose every candidate is legal (:attr:`Position._legal`).
_ALWAYS_LEGAL: Final = frozenset({Setup, Choice, Roll, Restart, Whistle, Timeout})
#: Square -> (square -> the re-placement from the one to the other), each made once.
_REPLACEMENTS_FROM: dict[int, dict[int, Setup]] = {}


def _replacements_from(frm: int) -> dict[int, Setup]:
    """Every re-placement from square ``frm``, by the square it goes to."""
    try:
        return _REPLACEMENTS_FROM[frm]
    except KeyError:
        made = _REPLACEMENTS_FROM[frm] = {to: _replacement(frm, to) for to in _PITCH_ORDER}
        return made


def _replacement(frm: int, to: int) -> Setup:
    """``Setup("replace", ...)`` from square ``frm`` to ``to``, made once."""
    try:
        return _REPLACEMENTS[frm, to]
    except KeyError:
        made = _REPLACEMENTS[frm, to] = Setup("replace", SQUARE_NAMES[frm], SQUARE_NAMES[to])
        _REPLACEMENT_SQUARES[made] = frozenset((made.frm, made.to))
        return made


def _called_squares(frm: str, direction: str) -> frozenset[str]:
    """The kicker's square and the one the ball is put down on for a called kick."""
    try:
        return _CALLED_SQUARES[frm, direction]
    except KeyError:
        x, y = _xy(SQUARE_INDEX[frm])
        dx, dy = DIRECTIONS[direction]
        nudge = {SQUARE_NAMES[_sq(x + dx, y + dy)]} if _is_board(x + dx, y + dy) else set()
        made = _CALLED_SQUARES[frm, direction] = frozenset({frm} | nudge)
        return made


_CALLED_SQUARES: dict[tuple[str, str], frozenset[str]] = {}


#: Square -> the squares of the pitch one step away, in the order of DIRECTIONS.
_PITCH_STEPS: dict[int, tuple[int, ...]] = {}


def _pitch_steps(square: int) -> tuple[int, ...]:
    try:
        return _PITCH_STEPS[square]
    except KeyError:
        x, y = _xy(square)
        made = _PITCH_STEPS[square] = tuple(_sq(x + dx, y + dy) for dx, dy in DIRECTIONS.values()
                                            if _on_pitch(x + dx, y + dy))
        return made


#: Steps met so far, (from, to, leave) -> the action: the generation lists them again
#: and again.
_STEPS: dict[tuple[int, int, bool], Move] = {}


#: Square -> (square one step away, the step there, the step there leaving the ball).
_STEP_ACTIONS: dict[int, tuple[tuple[int, Move, Move], ...]] = {}


def _step_actions(square: int) -> tuple[tuple[int, Move, Move], ...]:
    try:
        return _STEP_ACTIONS[square]
    except KeyError:
        made = _STEP_ACTIONS[square] = tuple(
            (to, _step(square, to, False), _step(square, to, True))
            for to in _pitch_steps(square))
        return made


def _step(frm: int, to: int, leave: bool) -> Move:
    """``Move(from, to, leave)`` between two squares, made once."""
    try:
        return _STEPS[frm, to, leave]
    except KeyError:
        made = _STEPS[frm, to, leave] = Move(SQUARE_NAMES[frm], SQUARE_NAMES[to], leave=leave)
        return made
