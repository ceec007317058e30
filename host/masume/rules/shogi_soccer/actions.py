"""The actions of shogi-piece soccer: small frozen values, ``str()`` is their notation.

Squares are written as in the seed, file digit, hyphen, rank letter (``5-F``).
Sente's pieces are written in kanji, gote's in the seed's English letters:

=========== ====== ======
piece       sente  gote
=========== ====== ======
goalkeeper  王     GK
rook        飛     RO
bishop      角     BI
knight      桂     NI
pawn        歩     PA
=========== ====== ======

``str(action)`` is the full, context-free form (a move names its origin, like a
KIF record's ``(77)``); :meth:`Position.notation` drops what the position makes
obvious, as the seed's records do (``5−Bパス、同GK、同桂``).

>>> str(Move("sente", "knight", "7-C", "5-B"))
'5-B桂(7-C)'
>>> str(Pass("gote", "king", "5-A", "5-B"))
'5-Bパス(5-A)'
>>> str(Place("gote", "rook", "6-A"))
'6-ARO打'
>>> str(Declare(("RPP", "BPPP", "NNP")))
'システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩'
"""

from __future__ import annotations

from dataclasses import dataclass

from .geometry import KIND_OF_LETTER, SYSTEM_ORDER

#: Piece letters by side, as the seed's figures write them.
KANJI = {"king": "王", "rook": "飛", "bishop": "角", "knight": "桂", "pawn": "歩"}
ENGLISH = {"king": "GK", "rook": "RO", "bishop": "BI", "knight": "NI", "pawn": "PA"}
PASS_WORD = "パス"
SHOT_WORD = "シュート"
DROP_WORD = "打"
SYSTEM_WORD = "システム"
NO_PIECES = "なし"
END_WORD = "手番終了"
FOUL_WORD = "反則"
THROUGH_WORD = "スルー"


def piece_word(side: str, kind: str) -> str:
    return (KANJI if side == "sente" else ENGLISH)[kind]


def system_text(system: tuple[str, str, str]) -> str:
    """``システム 3-4-3 飛歩歩-角歩歩歩-桂桂歩`` for the letters ``("RPP", "BPPP", "NNP")``."""
    counts = "-".join(str(len(group)) for group in system)
    groups = "-".join(
        "".join(KANJI.get(KIND_OF_LETTER.get(c, ""), c) for c in group) or NO_PIECES
        for group in system
    )
    return f"{SYSTEM_WORD} {counts} {groups}"


@dataclass(frozen=True)
class Declare:
    """Gote's system (【配置】): the pieces of its own area, midfield and sente's area.

    Each group is a string of piece letters (R, B, N, P) in the order rook,
    bishop, knight, pawn; the goalkeeper is not part of a system.
    """

    system: tuple[str, str, str]

    def __post_init__(self) -> None:
        # one system, one value: the letters of each group in the canonical order
        groups = self.system
        if isinstance(groups, tuple) and all(isinstance(g, str) for g in groups):
            ordered = tuple(
                "".join(sorted(g, key=lambda c: SYSTEM_ORDER.find(c) % 99)) for g in groups
            )
            object.__setattr__(self, "system", ordered)

    def __str__(self) -> str:
        return system_text(self.system)


@dataclass(frozen=True)
class Place:
    """Setting one piece up on ``square`` (a drop, written with shogi's 打)."""

    side: str
    kind: str
    square: str

    def __str__(self) -> str:
        return f"{self.square}{piece_word(self.side, self.kind)}{DROP_WORD}"


@dataclass(frozen=True)
class Move:
    """A piece moves: a dribble with the ball, a run without it, a trap, or an ejection."""

    side: str
    kind: str
    origin: str
    target: str
    #: A bishop or rook running past a free ball picks it up (True, a trap) or leaves it
    #: (False): 【トラップ】「越えて移動することが出来る」 is a "may".
    trap: bool = True

    def __str__(self) -> str:
        through = "" if self.trap else THROUGH_WORD
        return f"{self.target}{piece_word(self.side, self.kind)}({self.origin}){through}"


@dataclass(frozen=True)
class Pass:
    """The ball holder on ``origin`` plays the ball to ``target`` (a square)."""

    side: str
    kind: str
    origin: str
    target: str

    def __str__(self) -> str:
        return f"{self.target}{PASS_WORD}({self.origin})"


@dataclass(frozen=True)
class Shot:
    """The ball holder on ``origin`` shoots at the opponent's goal mouth ``goal``."""

    side: str
    kind: str
    origin: str
    goal: str

    def __str__(self) -> str:
        return f"{SHOT_WORD}({self.origin})"


@dataclass(frozen=True)
class EndTurn:
    """Sente ends its first turn after the kick-off pass: 【進行】「先手はキックオフのパスを
    行った後、さらに1手指すことが出来る」 is a "may", so the second action may be left out.

    >>> str(EndTurn("sente"))
    '手番終了'
    """

    side: str

    def __str__(self) -> str:
        return END_WORD


@dataclass(frozen=True)
class Foul:
    """A foul (反則) by ``side``, declared by the players: 【勝敗】「勝敗は、...反則が行われた場合に
    決定する」, so the other side wins. Recorded as an action, so the record keeps it.

    >>> str(Foul("gote"))
    '後手反則'
    """

    side: str

    def __str__(self) -> str:
        return f"{'先手' if self.side == 'sente' else '後手'}{FOUL_WORD}"


Action = Declare | Place | Move | Pass | Shot | EndTurn | Foul
