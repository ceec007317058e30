"""Game record files (masume.records) and ``masume record check|show``.

The reader, checker and writer are generic: besides Soccer Shogi they are run
here on a tiny counting game defined in this file, which no engine code knows.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from masume import games as games_registry
from masume.records import (
    RecordError,
    check_record,
    final_position,
    parse_options,
    parse_record,
    read_record,
    replay,
    write_record,
)
from masume.rules import Game, IllegalAction, NotationError, Outcome, Status
from masume.rules.soccer_shogi import RULES

RECORDS = Path(__file__).parent / "records" / "soccer-shogi"
LEGAL = sorted(p for p in RECORDS.glob("*.txt") if "-illegal-" not in p.name)
ILLEGAL = sorted(RECORDS.glob("*-illegal-*.txt"))


def masume(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "masume.cli", *args], capture_output=True, text=True, timeout=120
    )


# ---------------------------------------------------------------- reading


def test_comments_headers_blank_lines_and_both_separators() -> None:
    record = parse_record(
        "# a comment\n"
        '[Game "soccer-shogi"]\n'
        '[Blue "Dad \\"the wall\\""]\n'
        "\n"
        "A7-A6, A6-A5\n"
        "# between turns\n"
        "C2-C3、C3-C4\n"
    )
    assert record.headers == {"Game": "soccer-shogi", "Blue": 'Dad "the wall"'}
    assert [(t.number, t.line, t.actions) for t in record.turns] == [
        (1, 5, ("A7-A6", "A6-A5")),
        (2, 7, ("C2-C3", "C3-C4")),
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ('[Game soccer-shogi]\n', '^file line 1: malformed header'),
        ('A7-A6, A6-A5\n[Game "soccer-shogi"]\n', "^file line 2: headers come before the first turn line"),
        ('[Game "a"]\n[Game "b"]\n', "^file line 2: header Game given twice"),
        ("# turn lines are counted, not file lines\nA7-A6,, A6-A5\n", "^line 1: empty action"),
    ],
)
def test_malformed_records_name_the_line(text: str, message: str) -> None:
    with pytest.raises(RecordError, match=message):
        parse_record(text)


def test_options_header_values() -> None:
    assert parse_options("goals_to_win=3 keepers-cannot-jump=yes x=off") == {
        "goals_to_win": 3,
        "keepers_cannot_jump": True,
        "x": False,
    }
    with pytest.raises(ValueError, match="not name=value"):
        parse_options("goals_to_win")


# ---------------------------------------------------------------- checking


def expected_failure(path: Path) -> str | None:
    """What an illegal twin's ``# expect:`` header says ``masume record check`` must
    report (``line N: ACTION: reason``), or None for a legal record."""
    return next((line.removeprefix("# expect: ")
                 for line in path.read_text(encoding="utf-8").splitlines()
                 if line.startswith("# expect: ")), None)


@pytest.mark.parametrize("path", LEGAL, ids=lambda p: p.name)
def test_the_seed_records_are_legal(path: Path) -> None:
    record = read_record(path)
    game = replay(record)
    assert len(game.actions) == sum(len(t.actions) for t in record.turns)


@pytest.mark.parametrize("path", ILLEGAL, ids=lambda p: p.name)
def test_each_illegal_twin_fails_where_and_why_its_header_says(path: Path) -> None:
    expected = expected_failure(path)
    with pytest.raises(RecordError) as caught:
        replay(read_record(path))
    assert str(caught.value) == expected
    # The twin differs from its legal original on the failing line only.
    original = RECORDS / (path.name.split("-illegal-")[0] + ".txt")
    assert original in LEGAL


def test_each_line_holds_exactly_one_sides_turn() -> None:
    with pytest.raises(RecordError, match="^line 1: A7-A6: blue's turn is not over"):
        replay(parse_record('[Game "soccer-shogi"]\nA7-A6\nA6-A5\n'))
    with pytest.raises(RecordError, match="^line 1: C2-C3: blue's turn ended with A6-A5"):
        replay(parse_record('[Game "soccer-shogi"]\nA7-A6, A6-A5, C2-C3\n'))


def test_n_counts_the_turn_lines_and_the_file_line_is_kept() -> None:
    text = '# a comment\n[Game "soccer-shogi"]\n\nA7-A6, A6-A5\n# red\nC2-C3, C2-C4\n'
    with pytest.raises(RecordError) as caught:
        replay(parse_record(text))
    assert str(caught.value) == "line 2: C2-C4: there is no player on C2"
    assert (caught.value.line, caught.value.file_line, caught.value.action) == (2, 6, "C2-C4")


def test_notation_errors_and_illegal_actions_are_reported_with_the_action() -> None:
    with pytest.raises(RecordError, match=r"^line 1: A7-Z9: not soccer-shogi notation: 'Z9' is not a square"):
        replay(parse_record('[Game "soccer-shogi"]\nA7-Z9, A6-A5\n'))
    with pytest.raises(RecordError, match=r"^line 1: A6-A5: there is no player on A6$"):
        replay(parse_record('[Game "soccer-shogi"]\nA6-A5, A7-A6\n'))


def test_lines_after_the_end_of_the_game_are_refused() -> None:
    text = (RECORDS / "example-3.txt").read_text(encoding="utf-8") + "restart, A7-A6\n"
    with pytest.raises(RecordError, match="the game is already over"):
        replay(parse_record(text))


def test_first_position_options_and_resigned_headers() -> None:
    first = replay(parse_record('[Game "soccer-shogi"]\n[First "red"]\nC4-C5, C5-C6\n'))
    assert first.start == RULES.start(first="red")
    options = replay(parse_record('[Game "soccer-shogi"]\n[Options "goals_to_win=5"]\n'))
    assert options.position.options.goals_to_win == 5
    text = RULES.start(first="red").to_text()
    positioned = replay(parse_record(f'[Game "soccer-shogi"]\n[Position "{text}"]\n'))
    assert positioned.start == RULES.start(first="red")
    resigned = final_position(parse_record('[Game "soccer-shogi"]\n[Resigned "blue"]\nA7-A6, A6-A5\n'))
    assert resigned.outcome() == Outcome("red", "resignation", {"blue": 0, "red": 0})
    with pytest.raises(RecordError, match="cannot set up the start"):
        replay(parse_record('[Game "soccer-shogi"]\n[First "green"]\n'))
    with pytest.raises(RecordError, match="unknown soccer-shogi option"):
        replay(parse_record('[Game "soccer-shogi"]\n[Options "offside=true"]\n'))


def test_the_game_comes_from_the_header_or_the_caller() -> None:
    with pytest.raises(RecordError, match="which game"):
        replay(parse_record("A7-A6, A6-A5\n"))
    with pytest.raises(RecordError, match="unknown game 'chess'"):
        replay(parse_record('[Game "chess"]\n'))
    assert replay(parse_record("A7-A6, A6-A5\n"), RULES).position.status().to_move == "red"


# ---------------------------------------------------------------- writing


@pytest.mark.parametrize("path", LEGAL, ids=lambda p: p.name)
def test_write_record_reproduces_the_turn_lines(path: Path) -> None:
    record = read_record(path)
    game = replay(record)
    written = parse_record(write_record(game, dict(record.headers)))
    expected, index = [], 0
    for turn in record.turns:  # the same lines, in canonical notation
        positions, actions = game.positions()[index:], game.actions[index:]
        expected.append(tuple(positions[k].notation(actions[k]) for k in range(len(turn.actions))))
        index += len(turn.actions)
    assert [t.actions for t in written.turns] == expected
    assert written.headers == {"Game": "soccer-shogi", **record.headers}
    assert replay(written).position == game.position


def test_write_record_adds_a_position_header_only_when_needed() -> None:
    default = Game(RULES.start())
    default.push_notation("A7-A6")
    assert "Position" not in write_record(default)
    red_first = Game(RULES.start(first="red"))
    assert '[Position "' in write_record(red_first)
    assert "Position" not in write_record(red_first, {"First": "red"})


# ---------------------------------------------------------------- a game no engine knows


@dataclass(frozen=True)
class CountPosition:
    """Count to ten, one or two at a time; whoever says ten wins."""

    total: int = 0
    side: int = 0
    game = "count-to-ten"
    sides = ("odd", "even")

    def legal_actions(self) -> Iterator[int]:
        return iter([] if self.total >= 10 else [n for n in (1, 2) if self.total + n <= 10])

    def is_legal(self, action: Any) -> bool:
        return action in list(self.legal_actions())

    def apply(self, action: Any) -> "CountPosition":
        if not self.is_legal(action):
            raise IllegalAction(f"+{action}: one or two, up to ten")
        return CountPosition(self.total + action, 1 - self.side)

    def layout(self) -> dict[str, tuple[str, ...]]:
        return {"pile": ("stone",) * self.total}

    def status(self) -> Status:
        return Status(self.sides[self.side], message=f"{self.total} so far")

    def outcome(self) -> Outcome | None:
        return Outcome(self.sides[1 - self.side], "ten") if self.total >= 10 else None

    def parse_action(self, text: str) -> int:
        if text not in ("+1", "+2"):
            raise NotationError(f"{text!r}: write +1 or +2")
        action = int(text[1:])
        self.apply(action)
        return action

    def notation(self, action: Any) -> str:
        return f"+{action}"

    def diagram(self) -> str:
        return "o" * self.total

    def to_text(self) -> str:
        return f"{self.total} {self.side}"


class CountRules:
    name = "count-to-ten"
    board = "none"

    def start(self, first: str = "odd", **options: Any) -> CountPosition:
        return CountPosition(0, CountPosition.sides.index(first))

    def from_text(self, text: str, **options: Any) -> CountPosition:
        total, side = text.split()
        return CountPosition(int(total), int(side))

    def resign(self, position: CountPosition, side: str) -> CountPosition:
        raise IllegalAction("no resigning at counting")


@pytest.fixture
def count_game(monkeypatch: pytest.MonkeyPatch) -> CountRules:
    module = type(sys)("count_to_ten_rules")
    module.RULES = CountRules()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "count_to_ten_rules", module)
    monkeypatch.setitem(games_registry.GAMES, "count-to-ten", "count_to_ten_rules")
    return module.RULES  # type: ignore[attr-defined]


def test_records_work_for_any_game(count_game: CountRules) -> None:
    game = replay(parse_record('[Game "count-to-ten"]\n+2\n+2\n+1\n+2\n+2\n+1\n'))
    assert game.position.outcome() == Outcome("even", "ten")
    assert parse_record(write_record(game)).turns[-1].actions == ("+1",)
    with pytest.raises(RecordError, match="^line 1: \\+3: not count-to-ten notation: write \\+1 or \\+2"):
        replay(parse_record('[Game "count-to-ten"]\n+3\n'))
    with pytest.raises(RecordError, match="^line 1: \\+2: odd's turn ended with \\+1"):
        replay(parse_record('[Game "count-to-ten"]\n+1, +2\n'))
    with pytest.raises(RecordError, match="Resigned header: no resigning"):
        final_position(parse_record('[Game "count-to-ten"]\n[Resigned "odd"]\n+1\n'))


# ---------------------------------------------------------------- the command


def test_record_check_exits_zero_for_a_legal_record() -> None:
    result = masume("record", "check", "--game", "soccer-shogi", str(RECORDS / "example-1.txt"))
    assert result.returncode == 0, result.stderr
    assert "ok, 31 actions on 16 turn lines" in result.stdout


@pytest.mark.parametrize("path", ILLEGAL[:3], ids=lambda p: p.name)
def test_record_check_prints_the_first_illegal_action(path: Path) -> None:
    result = masume("record", "check", "--game", "soccer-shogi", str(path))
    expected = expected_failure(path)
    assert result.returncode == 1
    assert result.stderr.strip() == expected


def test_record_check_without_a_game_or_a_file(tmp_path: Path) -> None:
    bare = tmp_path / "bare.txt"
    bare.write_text("A7-A6, A6-A5\n", encoding="utf-8")
    result = masume("record", "check", str(bare))
    assert result.returncode == 1 and "which game" in result.stderr
    assert masume("record", "check", "--game", "soccer-shogi", str(bare)).returncode == 0
    missing = masume("record", "check", str(tmp_path / "missing.txt"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr


def test_record_show_prints_the_final_diagram() -> None:
    path = RECORDS / "example-3.txt"
    result = masume("record", "show", "--text", str(path))
    assert result.returncode == 0, result.stderr
    final = final_position(read_record(path))
    assert result.stdout == (final.diagram() + "\n" + "red wins (goals)\n" + final.to_text()
                             + "\n")


# ---------------------------------------------------------------- the Result header

#: For each game, a shipped record, how ``record check`` states its end, and a wrong claim.
RESULTS = [
    ("eyeshield21/full-game.txt", "home wins (deck-out)", "away wins (deck-out)"),
    ("magic-number-eleven/seed-tackle.txt",
     "in progress, home to play action 1 of 1", "away wins (goals)"),
    ("masume-tactics/kick-off-and-goal.txt",
     "in progress, home to play action 1 of 3", "home wins (goals)"),
    ("shogi-soccer/figure6-mate-in-3.txt", "sente wins (checkmate)", "gote wins (checkmate)"),
    ("soccer-shogi/match-2-3.txt", "red wins (goals)", "blue wins (goals)"),
]


def with_result(path: Path, result: str | None, tmp_path: Path) -> Path:
    """A copy of the record at ``path`` whose Result header says ``result`` (None: none)."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines()
             if not line.startswith("[Result ")]
    if result is not None:
        lines.insert(next(k for k, line in enumerate(lines) if line.startswith("[Game ")) + 1,
                     f'[Result "{result}"]')
    out = tmp_path / path.name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize("name, ends, wrong", RESULTS, ids=lambda v: str(v).split("/")[0])
def test_record_check_compares_the_result_header_with_the_replay(
        name: str, ends: str, wrong: str, tmp_path: Path, capsys: Any) -> None:
    """A Result header is the outcome as ``record check`` prints it; a record claiming
    another end fails with the reason, and a game in progress says so."""
    from masume.cli import main

    path = Path(__file__).parent / "records" / name
    good = with_result(path, ends, tmp_path)
    assert main(["record", "check", str(good)]) == 0
    assert f"turn lines; {ends}" in capsys.readouterr().out
    assert main(["record", "show", str(good)]) == 0
    assert ends in capsys.readouterr().out.splitlines()
    bad = with_result(path, wrong, tmp_path)
    for command in ("check", "show"):
        assert main(["record", command, str(bad)]) == 1
        assert capsys.readouterr().err.strip() == (
            f"{bad}: Result header: {wrong!r}, but the replay ends: {ends}")
    if ends.startswith("in progress"):
        assert main(["record", "check", str(with_result(path, "*", tmp_path))]) == 0


def test_the_older_result_form_still_reads() -> None:
    """``[Result "sente:goal"]`` (WINNER:REASON) in the shogi-soccer records means what it
    meant: the check reads it as ``sente wins (goal)``."""
    for path in sorted((Path(__file__).parent / "records" / "shogi-soccer").glob("*.txt")):
        record = read_record(path)
        if "Result" in record.headers and "-illegal-" not in path.name:
            check_record(record)
