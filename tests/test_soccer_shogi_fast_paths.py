"""The shortcuts of the Soccer Shogi engine's generation give the same positions as
the plain dataclass (docs/benchmarks.md, "the settle search made cheaper")."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
from collections.abc import Iterator

from masume.rules.soccer_shogi import PIECE_NAMES, PITCH, RULES, SQUARE_NAMES, Position
from masume.rules.soccer_shogi.position import _QuickTest


def _positions(count: int = 300, seed: int = 4, **options: bool) -> list[Position]:
    """``count`` positions of random games (a new game where one ends)."""
    rng, out = random.Random(seed), []
    position = RULES.start(**options)
    while len(out) < count:
        actions = list(position.legal_actions())
        if not actions or position.outcome() is not None:
            position = RULES.start(first=rng.choice(["blue", "red"]), **options)
            continue
        out.append(position)
        position = position.apply(rng.choice(actions))
    return out


def _plain_layout(position: Position) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    for i in PITCH:
        cell = position.cells[i]
        if cell:
            piece = PIECE_NAMES[cell]
            out[SQUARE_NAMES[i]] = ("ball", piece) if i == position.ball else (piece,)
    if not position.cells[position.ball]:
        out[SQUARE_NAMES[position.ball]] = ("ball",)
    return out


def test_generated_positions_equal_and_hash_as_the_dataclass_made_ones() -> None:
    for position in _positions():
        for child in position._children.values():
            plain = dataclasses.replace(child)  # made by the dataclass's __init__
            assert plain == child and hash(plain) == hash(child)
            assert plain.to_text() == child.to_text()
            assert list(child.layout().items()) == list(_plain_layout(child).items())


def test_a_pickled_position_keeps_no_hash() -> None:
    position = _positions(40)[-1]
    hash(position)
    copy = pickle.loads(pickle.dumps(position))
    assert "_hash" not in vars(copy) and copy == position and hash(copy) == hash(position)


def _has_legal_action(position: Position) -> bool:
    """Position._has_legal_action without its shortcuts (no quick test)."""
    if position.phase == "over":
        return False
    if position.phase != "play":
        return True
    if position.done == 1:
        return any(position._may_end_turn(effect) for effect in position._effects())
    return any(position._resolve(effect)[0] is not None for effect in position._effects())


def _full_test(position: Position) -> dict[str, str]:
    """Every legal action and the position it leads to, by the full test alone (each
    effect resolved, its look ahead made without the quick test), in the engine's order."""
    saved = Position._has_legal_action
    Position._has_legal_action = _has_legal_action  # type: ignore[method-assign]
    try:
        return _resolved(position)
    finally:
        Position._has_legal_action = saved  # type: ignore[method-assign]


def _resolved(position: Position) -> dict[str, str]:
    if position.phase != "play":
        return {str(a): position.apply(a).to_text() for a in position.legal_actions()}
    out: dict[str, str] = {}
    for effect in position._effects():
        child, _ = position._resolve(effect)
        if child is not None:
            out[str(effect.action)] = child.to_text()
    if not out:
        out["pass"] = position.apply(next(iter(position.legal_actions()))).to_text()
    return out


def _quick(position: Position) -> dict[str, str]:
    return {str(a): position.apply(a).to_text() for a in position.legal_actions()}


def _quick_tested(count: int, *seeds: int) -> Iterator[tuple[Position, _QuickTest]]:
    """Positions of random games (``count`` a seed) in play where the quick test is used,
    each with its quick test."""
    for seed in seeds:
        for position in _positions(count, seed):
            quick = position._quick_test() if position.phase == "play" else None
            if quick is not None:
                yield position, quick


def _listed_beside_full(seeds: tuple[int, int]) -> Iterator[
        tuple[Position, _QuickTest, list[str], dict[str, str]]]:
    """Positions of random games in play where the quick test is used (300 a seed, the
    second seed's with ``keepers_cannot_jump``), each made afresh from its text: (the
    position, its quick test, its legal actions as listed, :func:`_full_test`'s)."""
    for seed, options in zip(seeds, ({}, {"keepers_cannot_jump": True})):
        for position in _positions(300, seed, **options):
            fresh = RULES.from_text(position.to_text())
            quick = fresh._quick_test()
            if quick is not None and fresh.phase == "play":
                full = _full_test(RULES.from_text(position.to_text()))
                yield fresh, quick, [str(a) for a in fresh.legal_actions()], full


def test_the_quick_test_agrees_with_the_full_test() -> None:
    # The bitboard quick test (issue 15) decides most actions without the look ahead;
    # over positions of random games (both sides first, with the rule options too) it
    # must say exactly what the full test says.
    for seed, options in ((5, {}), (6, {"keepers_cannot_jump": True})):
        for position in _positions(400, seed, **options):
            fresh = RULES.from_text(position.to_text())
            assert _quick(fresh) == _full_test(RULES.from_text(position.to_text())), fresh


def test_a_position_keeps_the_sets_its_cells_give() -> None:
    # Issue 15, third round: a position's sets (``_boards`` and ``_active_squares``, made
    # together by whichever is asked first) are its cells'. Stop 28: ``_empty`` and
    # ``_active_squares`` made by the constructor or carried from the listed parent by
    # ``apply`` (``_carry_sets``: every child here) are its cells' too.
    for position in _positions(120, seed=8):
        made = (position, *position._children.values(), dataclasses.replace(position))
        for k, child in enumerate(made):
            if k % 2:
                child._active_squares  # noqa: B018 - made first here, by the other there
            raw = bytes(child.cells)
            mine = [i for i in PITCH if child.cells[i] == child.side + 1]
            assert child._active_squares == mine, child
            empty = sum(1 << (8 * i) for i in PITCH if not raw[i])
            assert child._boards[0] == empty and child._boards[1] == sum(1 << (8 * i) for i in mine)
            assert child._empty == empty, child
            if "_other_active" in child.__dict__:  # made by the constructor, or carried
                theirs = [i for i in PITCH if child.cells[i] == 2 - child.side]
                assert child.__dict__["_other_active"] == theirs, child


def test_the_sets_apply_carries_are_the_cells_over_long_games() -> None:
    # Stop 28: every position of random games (steals, resting players, goals, Takes
    # among them) holds the sets its parent carried to it, or makes them from its cells.
    rng, position, steals = random.Random(28), RULES.start(), 0
    for _ in range(3000):
        known = dict(position.__dict__)
        cells, side = position.cells, position.side
        if "_empty" in known:
            assert known["_empty"] == sum(1 << (8 * i) for i in PITCH if not cells[i]), position
        if "_active_squares" in known:
            assert known["_active_squares"] == [i for i in PITCH if cells[i] == side + 1]
        if "_other_active" in known:
            assert known["_other_active"] == [i for i in PITCH if cells[i] == 2 - side]
        actions = list(position.legal_actions())
        if not actions or position.outcome() is not None:
            position = RULES.start(first=rng.choice(["blue", "red"]))
            continue
        action = rng.choice(actions)
        steals += bool(getattr(action, "steal", 0))
        position = position.apply(action)
    assert steals > 0


def test_an_action_is_found_alike_by_identity_and_by_equality() -> None:
    # apply() finds a listed action by its id (no hashing), any other by equality:
    # both give the same position, on the position and on a copy of it.
    for position in _positions(60, seed=9):
        actions = list(position.legal_actions())
        by_identity = [position.apply(a).to_text() for a in actions]
        fresh = RULES.from_text(position.to_text())
        assert [fresh.apply(copy.deepcopy(a)).to_text() for a in actions] == by_identity
        copied = pickle.loads(pickle.dumps(position))
        assert "_identities" not in vars(copied)
        assert [copied.apply(a).to_text() for a in copied.legal_actions()] == by_identity
        assert not position.is_legal([str(actions[0])])  # unhashable: no action


def test_a_sandwich_closes_where_the_ends_of_the_holders_line_say() -> None:
    # Issue 15, fourth round: whether a move closes a sandwich is read from the ends of
    # the holder's line (``_closing_squares``), no longer searched on a copied board. On
    # positions of random games where the opponent of the side to move holds the ball
    # (and no sandwich stands), moving any active player of the side to any empty pitch
    # square closes one exactly where it says, the other end not being the mover's.
    from masume.rules.soccer_shogi.position import _closing_squares, _sandwich

    checked = 0
    for position in _positions(600, seed=11):
        cells, ball, side = position.cells, position.ball, position.side
        if cells[ball] != 2 - side or _sandwich(cells, ball, side)[0]:
            continue
        closers = _closing_squares(cells, ball, side)
        assert closers is not None
        for frm in PITCH:
            if cells[frm] != side + 1:
                continue
            for to in PITCH:
                if cells[to]:
                    continue
                after = list(cells)
                after[frm], after[to] = 0, side + 1
                closes = bool(_sandwich(tuple(after), ball, side)[0])
                assert closes == (to in closers and closers[to] != frm), (position, frm, to)
                checked += 1
    assert checked > 1000


def test_the_closing_squares_are_none_exactly_where_a_sandwich_stands() -> None:
    # Issue 15, stop 30, second round: a listing finds a sandwich standing on the board on
    # the walk that finds the closing squares (``_closing_squares`` says None), no longer
    # with ``_sandwich`` first. On positions of random games where the opponent of the
    # side to move holds the ball, and on each with one more active player of the side on
    # each empty pitch square (most sandwiches are met so), the two agree.
    from masume.rules.soccer_shogi.geometry import ACTIVE, BLUE, EMPTY, RED, SQUARE_INDEX
    from masume.rules.soccer_shogi.position import _closing_squares, _sandwich

    standing = clear = 0
    for position in _positions(600, seed=12):
        cells, ball, side = position.cells, position.ball, position.side
        if cells[ball] != ACTIVE[1 - side]:
            continue
        for added in (-1, *PITCH):
            if added >= 0 and cells[added] != EMPTY:
                continue
            board = list(cells)
            if added >= 0:
                board[added] = ACTIVE[side]
            after = tuple(board)
            sandwiched = bool(_sandwich(after, ball, side)[0])
            assert (_closing_squares(after, ball, side) is None) == sandwiched, (position, added)
            standing, clear = standing + sandwiched, clear + (not sandwiched)
    assert standing > 100 and clear > 1000, (standing, clear)
    # Both ends of a line closed by end lines alone sandwich nothing: the holder on A1 and
    # its team-mates on the rest of the A file (an end line behind each corner).
    board = [EMPTY] * 50
    for name in ("A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8"):
        board[SQUARE_INDEX[name]] = ACTIVE[RED]
    board[SQUARE_INDEX["C3"]] = ACTIVE[BLUE]
    cells, ball = tuple(board), SQUARE_INDEX["A1"]
    assert _sandwich(cells, ball, BLUE) == ((), ())
    assert _closing_squares(cells, ball, BLUE) is not None


def test_steps_taken_in_one_go_and_chains_onto_the_free_ball_agree_with_the_full_test() -> None:
    # Issue 15, fifth round: a plain mover whose every step its class decides takes them
    # from a table (``_plain_steps``), and a plain mover's chain that ends on the free
    # ball's square has its plain verdict (``free_flags``). Both must list exactly what
    # the full test finds legal; both must be met here.
    from masume.rules.soccer_shogi.geometry import BB_STEPS, EMPTY

    in_one_go = onto_the_ball = 0
    for fresh, quick, listed, full in _listed_beside_full((7, 8)):
        _, step_open = quick.step_sets or (0, -1)
        for square in fresh._active_squares:
            name = SQUARE_NAMES[square]
            if quick.plain_from_flags[square] and square != fresh.keepers[fresh.side] \
                    and not BB_STEPS[square] & step_open:
                in_one_go += 1
                mine = [a for a in listed if "-" in a and a.split("-")[0] == name]
                assert mine == [a for a in full if "-" in a and a.split("-")[0] == name \
                                and not a.startswith("b(")], fresh
        free_ball = fresh.ball if fresh.cells[fresh.ball] == EMPTY else -1
        for square in fresh._jumpers():
            for jump, _, end, _ in fresh._chains(square, fresh._chain_setting()):
                if end == free_ball and quick.plain_from_flags[square]:
                    onto_the_ball += 1
                    assert (str(jump) in listed) == (str(jump) in full), fresh
    assert in_one_go > 100 and onto_the_ball > 0, (in_one_go, onto_the_ball)


def test_steps_onto_the_free_ball_and_chains_into_a_keeper_area_agree_with_the_full_test(
) -> None:
    # Issue 15, twelfth round: a plain mover's step onto the free ball on a quiet square
    # is in ``step_sets``' legal set where ``plenty`` holds or a plain step is legal at
    # the second action, and a plain jumper's chain into a keeper area (no ball taken) is
    # judged in the listing without ``verdict``. Both must list exactly what the full test
    # finds legal; both must be met here, at either action.
    from masume.rules.soccer_shogi.geometry import BB_SQUARES, BB_STEPS, EMPTY

    onto_the_ball, into_an_area = set(), set()
    for fresh, quick, listed, full in _listed_beside_full((9, 10)):
        keeper, ball = fresh.keepers[fresh.side], fresh.ball
        step_legal = (quick.step_sets or (0, 0))[0]
        if step_legal & BB_SQUARES[ball] and fresh.cells[ball] == EMPTY:
            for square in fresh._active_squares:
                if quick.plain_from_flags[square] and square != keeper \
                        and BB_STEPS[square] & BB_SQUARES[ball]:
                    onto_the_ball.add(fresh.done)
                    step = f"{SQUARE_NAMES[square]}-{SQUARE_NAMES[ball]}"
                    assert (step in listed) == (step in full), fresh
        if quick._may_spare or quick.plain is not None:
            for square in fresh._jumpers():
                if not quick.plain_from_flags[square] or square == keeper:
                    continue
                for jump, _, end, has_ball in fresh._chains(square, fresh._chain_setting()):
                    if not has_ball and quick._areas_free & BB_SQUARES[end]:
                        into_an_area.add(fresh.done)
                        assert (str(jump) in listed) == (str(jump) in full), fresh
    assert onto_the_ball == {0, 1} and into_an_area == {0, 1}, (onto_the_ball, into_an_area)


def test_the_quiet_steps_left_by_a_mover_are_the_other_players_steps() -> None:
    # ``_QuickTest._others`` (issue 15, fifth round) takes a mover's targets off all of
    # them where no other player reaches them; it must be the union over the others.
    from masume.rules.soccer_shogi.geometry import BB_STEPS

    compared = 0
    for position, quick in _quick_tested(200, 9):
        steps = {square: BB_STEPS[square] & quick._free for square in position._active_squares
                 if quick.plain_from_flags[square]}
        for frm in position._active_squares:
            expected = 0
            for square, targets in steps.items():
                if square != frm:
                    expected |= targets
            assert quick._others(frm) == expected, (position, frm)
            compared += 1
    assert compared > 500


def test_a_first_action_position_has_a_legal_action_as_the_look_ahead_says() -> None:
    # ``Position._has_legal_action`` at the first action (issue 15, fifth round) stops at
    # a step the quick test finds legal; it must say what the look ahead of every action
    # says, on positions of random games and on those a sandwich's take leads to.
    compared = 0
    for position in _positions(300, seed=10):
        candidates = [position]
        if position.phase == "take":
            candidates += list(position._take_variants()[0].values())
        for candidate in candidates:
            if candidate.phase == "play" and candidate.done == 0:
                fresh = RULES.from_text(candidate.to_text())
                assert fresh._has_legal_action() == _has_legal_action(
                    RULES.from_text(candidate.to_text())), candidate
                compared += 1
    assert compared > 100


def _reference_chains(position: Position, square: int) -> list[tuple[str, int, bool]]:
    """Every chain of the player on ``square`` as the fifth round's search found them: a
    breadth-first search per family over (square, has the ball) states, the jumper's
    square empty, the shortest path kept (the orthogonal one on a tie): (the Jump's
    text, its end, whether the jumper has the ball there), in its order."""
    from masume.rules.soccer_shogi.geometry import ACTIVE, EMPTY, JUMPS

    cells, ball, me = position.cells, position.ball, position.side
    board = list(cells)
    board[square] = EMPTY
    free_ball = ball if cells[ball] == EMPTY else -1
    victim = ball if cells[ball] == ACTIVE[1 - me] else -1
    start = (square, ball == square)
    best: dict[tuple[int, bool], list[int]] = {}
    for family in (0, 1):
        paths: dict[tuple[int, bool], list[int]] = {start: [square]}
        queue = [start]
        for state in queue:
            at, has_ball = state
            for mid, land in JUMPS[at][family]:
                if board[mid] and not board[land]:
                    new = (land, has_ball or land == free_ball or mid == victim)
                    if new not in paths:
                        paths[new] = paths[state] + [land]
                        queue.append(new)
        del paths[start]
        for state, path in paths.items():
            if state not in best or len(path) < len(best[state]):
                best[state] = path
    out = []
    for (end, has_ball), path in best.items():
        steal = next((k for k in range(1, len(path)) if has_ball and victim >= 0
                      and path[k - 1] + path[k] == 2 * victim), 0)
        written = "・".join(SQUARE_NAMES[i] + ("!" if k and k == steal else "")
                           for k, i in enumerate(path))
        out.append((written, end, has_ball))
    return out


def test_the_chain_search_finds_what_a_search_over_every_state_finds() -> None:
    # ``_search_chains`` (issue 15, sixth round) takes a chain's state to be its square
    # alone where the ball cannot change hands on the way (the jumper has it; a free
    # ball, or an opponent holding it, on a square no chain of that jumper lands on or
    # jumps), and leaves the jumper's square taken then: the same chains, in the same order.
    # Since h-chains3 it asks ``_still_chains`` first wherever the ball lies, which says
    # None at the first hop that takes it: where its class lets a chain take the ball
    # and none does, the chains are that search's.
    from masume.rules.soccer_shogi.position import (
        _FIRST_HOP_STARTS,
        _search_chains,
        _still_chains,
    )

    # A square's parity class (the parities of its file and rank): a chain keeps its
    # jumper's, landing only on its squares and jumping only the others'.
    parity = tuple((s % 5 & 1) << 1 | (s // 5 & 1) for s in range(50))

    searched, kinds = 0, set()
    for position in _positions(600, seed=12):
        if position.phase != "play":
            continue
        setting = position._chain_setting()
        board, free_ball, victim = setting
        for square in position._jumpers():
            found = [(str(jump), end, has_ball) for jump, _, end, has_ball
                     in _search_chains(square, position.ball, setting)]
            assert board == list(position.cells)  # the search leaves the board as it was
            assert found == _reference_chains(position, square), (position, square)
            if found:
                searched += 1
                held = position.ball == square
                kinds.add("held" if held else "free, elsewhere" if free_ball >= 0 and
                          parity[free_ball] != parity[square] else "free, in the class"
                          if free_ball >= 0 else "holder" if victim >= 0 else "no ball")
                if any(has_ball for _, _, has_ball in found) and not held:
                    kinds.add("took the ball")
                    # (since h-chains3's second round, only a state that took the ball
                    # tries the hop back: back over the same piece, with the ball)
                    if any(has_ball and end == square for _, end, has_ball in found):
                        kinds.add("back to its start with the ball")
                elif (free_ball >= 0 and parity[free_ball] == parity[square]
                      or victim >= 0 and parity[victim] != parity[square]):
                    start = next(start for mid, land, start in _FIRST_HOP_STARTS[square]
                                 if board[mid] and not board[land])
                    assert _still_chains(square, position.ball, board, free_ball, victim,
                                         start) is not None, (position, square)
                    kinds.add("the ball's class, none took it")
    assert searched > 500 and len(kinds) == 8, (searched, kinds)


def test_a_second_action_position_has_a_legal_action_as_every_effect_says() -> None:
    # ``Position._may_end_turn_quickly`` (stop 30) tries only the steps and chains of the
    # one player that must move, where one must (``_bound_mover``: the player that entered
    # its keeper area, the one holding the ball in its own, the one attacker in the
    # opponent's), and every kick. Over the positions every first action of random games
    # leads to (legal or not: those are where a player is bound), it must say what the
    # turn-end test of every effect says.
    from masume.rules.soccer_shogi.geometry import KEEPER_AREA, SQUARE_INDEX
    from masume.rules.soccer_shogi.position import PLAY, _position, _sandwich

    compared, kinds = 0, set()
    for seed, options in ((14, {}), (15, {"keepers_cannot_jump": True})):
        for position in _positions(300, seed, **options):
            if position.phase != "play" or position.done != 0:
                continue
            for effect in position._effects():
                if effect.goal or _sandwich(effect.cells, effect.ball, position.side)[0]:
                    continue
                own_area = KEEPER_AREA[position.side]  # (as ``_resolve`` says who entered)
                entered = effect.mover_to if effect.mover_to in own_area and effect.mover_from \
                    not in own_area and effect.mover_from != position.keepers[position.side] \
                    else -1
                child = _position(effect.cells, effect.ball, position.side, 1, PLAY,
                                  effect.keepers, entered, position.score, -1,
                                  effect.flipped, position.options)
                if child._has_quiet_step() or child._quick_test() is None:
                    continue  # (decided before the bound player is asked for)
                expected = any(child._may_end_turn(e) for e in child._effects())
                assert child._has_legal_action() == expected, (child, effect.action)
                mover = child._bound_mover()
                if mover >= 0:
                    kinds.add("entered" if mover == entered else "holder" if mover == child.ball
                              else "attacker")
                    if expected and not any(child._may_end_turn(e) for e in child._effects()
                                            if not e.goal):
                        kinds.add("only a goal")
                compared += 1
    assert compared > 300 and kinds >= {"entered", "holder", "attacker"}, (compared, kinds)
    # Random play met none where only a goal ends the turn: C8 entered blue's keeper area
    # and cannot leave it (its steps and hops blocked), C2's shot is the one legal action.
    bound = RULES.from_text("2B2/BRRR1/B1B1B/5/5/R3R/2B2/1R3 blue 1 ball=C2 keepers=A7,B1 "
                            "score=0-0 entered=C8")
    assert bound._bound_mover() == SQUARE_INDEX["C8"] and bound._has_legal_action()
    assert [str(action) for action in bound.legal_actions()] == ["b(C2-C0)goal"]


def test_the_holders_and_the_keepers_chains_have_their_steps_verdicts() -> None:
    # Stop 30: the listing judges a chain of the ball's holder (with the ball) or of the
    # keeper in its area (without it) by the flags of its steps (``mover_steps``) where
    # the flag is 1; the verdict must be what ``verdict`` says of that chain.
    from masume.rules.soccer_shogi.geometry import SQUARE_INDEX
    from masume.rules.soccer_shogi.position import _sandwich

    judged, kinds = 0, set()
    for seed, options in ((16, {}), (17, {"keepers_cannot_jump": True})):
        for position in _positions(800, seed, **options):
            if position.phase != "play" or _sandwich(position.cells, position.ball,
                                                      position.side)[0]:
                continue
            quick, ball = position._quick_test(), position.ball
            assert quick is not None
            setting = position._chain_setting()
            for square in position._jumpers():
                if quick.plain_from_flags[square]:
                    continue
                to_flags, sure, lone, _, _ = quick.mover_steps(square)
                for _, _, end, has_ball in position._chains(square, setting):
                    if to_flags[end] == 1 and has_ball == (square == ball):
                        assert (None if end == lone else sure) == quick.verdict(
                            square, end, end if has_ball else ball), (position, square, end)
                        judged += 1
                        kinds.add(("holder" if square == ball else "keeper", position.done))
    assert judged > 300 and len(kinds) == 4, (judged, kinds)
    # Where a chain takes the ball the flags do not hold: the keeper on B8 takes it on B7
    # and ends in its area on D8, whose quiet neighbours are all taken (no step out with
    # the second action): flag 1 and a sure verdict, where ``verdict`` says None.
    position = RULES.from_text("1B2R/1RRRR/2B2/5/5/BBBB1/5/2R2 blue 0 ball=B7 keepers=B8,C1 "
                               "score=0-0")
    quick, keeper, d8 = position._quick_test(), SQUARE_INDEX["B8"], SQUARE_INDEX["D8"]
    assert quick is not None
    to_flags, sure, _, _, _ = quick.mover_steps(keeper)
    assert to_flags[d8] == 1 and sure and quick.verdict(keeper, d8, d8) is None
    assert (d8, True) in [(end, has_ball) for _, _, end, has_ball
                          in position._chains(keeper, position._chain_setting())]


def test_a_plain_jumpers_chain_back_to_its_square_has_its_plain_verdict() -> None:
    # Issue 15 (h-chains3): a plain jumper's chain that takes the ball and ends back on
    # the jumper's square is judged in the listing by the player's plain verdict
    # (``plain_verdict``), without ``verdict``. It must be what ``verdict`` says of that
    # chain, and the listing must list it exactly where the full test finds it legal;
    # met legal at both actions, not legal at the second (random play meets no first
    # action where the verdict is None: the position owing something, or no quiet step
    # to spare).
    judged, kinds = 0, set()
    for fresh, quick, listed, full in _listed_beside_full((11, 12)):
        setting = fresh._chain_setting()
        for square in fresh._jumpers():
            if not quick.plain_from_flags[square]:
                continue
            for jump, _, end, has_ball in fresh._chains(square, setting):
                if end == square:
                    assert has_ball, (fresh, jump)  # (without the ball: never back)
                    sure = quick.plain_verdict(square)[0]
                    assert sure == quick.verdict(square, square, square), (fresh, jump)
                    assert (str(jump) in listed) == (str(jump) in full), (fresh, jump)
                    judged += 1
                    kinds.add((fresh.done, str(jump) in listed))
    assert judged > 100 and kinds == {(0, True), (1, True), (1, False)}, (judged, kinds)


def test_the_kicks_listed_a_ray_at_a_time_are_the_legal_kicks_in_order() -> None:
    # Stop 31: where every kick but a pass into the own keeper area is legal, the listing
    # reads each kick ray's kicks up to its first occupied square in one go
    # (``_KICK_LINES``); they must be ``_kicks``' that the full test finds legal, in order.
    from masume.rules.soccer_shogi.actions import Kick
    from masume.rules.soccer_shogi.geometry import ACTIVE

    listed = 0
    for seed, options in ((18, {}), (19, {"keepers_cannot_jump": True})):
        for position in _positions(800, seed, **options):
            if position.phase != "play" or position.cells[position.ball] != ACTIVE[position.side]:
                continue
            fresh = RULES.from_text(position.to_text())
            kicks = [action for action in fresh.legal_actions() if isinstance(action, Kick)]
            legal = [kick for kick, target in fresh._kicks()
                     if fresh._resolve(fresh._kick_effect(kick, target))[0] is not None]
            assert kicks == legal, position
            listed += len(kicks)
    assert listed > 2000, listed


def test_the_holders_and_the_keepers_step_sets_are_their_flags() -> None:
    # Stop 31: the listing takes the steps of the ball's holder and of the keeper in its
    # area in one go from the sets of ``mover_steps``, as a plain mover's: the legal set
    # must be the flagged targets whose verdict is sure and legal, the open set those
    # without a flag (-1: a flagged step needs the full test). Second round: a player
    # alone in its own area, and every mover at the second action where the position
    # owes something (no flags, ``_owing_steps``): each step's verdict outside the open
    # set is the legal set's.
    from masume.rules.soccer_shogi.geometry import BB_SQUARES, BB_STEPS, PITCH

    kinds = set()
    for position, quick in _quick_tested(600, 20, 21):
        for square in position._active_squares:
            if quick.plain_from_flags[square]:
                continue
            flags, sure, lone, legal, unflagged = quick.mover_steps(square)
            if unflagged < 0:
                assert lone >= 0 or sure is None
                continue
            kinds.add((square == position.ball, square == position.keepers[position.side],
                       position.done, flags != bytes(50)))
            for target in PITCH:
                bit = BB_SQUARES[target]
                if not position._empty & bit:
                    assert not (legal | unflagged) & bit
                    continue
                if BB_STEPS[square] & bit and not unflagged & bit:
                    new_ball = target if position.ball in (square, target) else position.ball
                    assert quick.verdict(square, target, new_ball) == bool(legal & bit), \
                        (position, square, target)
                if flags == bytes(50):  # (_owing_steps: the sets alone)
                    continue
                flag = flags[target]
                assert bool(unflagged & bit) == (flag == 0), (position, square, target)
                assert bool(legal & bit) == (flag == 3 or flag == 1 and bool(sure))
    assert len(kinds) >= 9, kinds


def test_the_plain_movers_steps_at_the_second_action_and_the_keepers_into_its_area() -> None:
    # Second round: at the second action a plain mover's steps (the keeper's on a quiet
    # square too) are legal or open as ``step_sets`` says (none legal where ``plain`` is
    # not: only where a sandwich may close, the full test); at the first, where the
    # position owes nothing, the keeper's steps into its area are legal where a team-mate
    # stands there or ``plenty`` holds (not where a sandwich may close, nor onto the ball).
    from masume.rules.soccer_shogi.geometry import BB_AREAS, BB_SQUARES, BB_STEPS, PITCH

    seen = set()
    for position, quick in _quick_tested(600, 20, 21):
        keeper, ball = position.keepers[position.side], position.ball
        for square in position._active_squares:
            if not quick.plain_from_flags[square]:
                continue
            for target in PITCH:
                bit = BB_SQUARES[target]
                if not BB_STEPS[square] & bit & position._empty:
                    continue
                verdict = quick.verdict(square, target, target if target == ball else ball)
                if position.done:
                    legal, opened = quick.step_sets
                    if not opened & bit:
                        assert verdict == bool(legal & bit), (position, square, target)
                        seen.add(("second", square == keeper, quick.plain))
                elif square == keeper and quick.plain_step and (quick.own or quick.plenty) \
                        and quick._areas_free & BB_AREAS[position.side] & bit:
                    assert verdict is True, (position, target)
                    seen.add(("first", True, None))
    assert len(seen) == 5, seen


def test_the_kicks_where_plenty_does_not_decide_go_a_ray_at_a_time() -> None:
    # Second round: at the first action, where the position owes nothing and ``plenty``
    # does not hold, the kicks are still listed a ray at a time where the quiet steps'
    # targets are two squares or more: every free kick is then legal (a free square's
    # ``_others`` is all of them), and the listing is the full test's.
    from masume.rules.soccer_shogi.geometry import ACTIVE, ALL_GOALS

    free_kicks = 0
    for fresh, quick, listed, full in _listed_beside_full((9, 10)):
        me, ball = fresh.side, fresh.ball
        if fresh.done or fresh.cells[ball] != ACTIVE[me] or quick.plenty \
                or quick.own > 1 or quick.their:
            continue
        targets = quick._make_targets()
        if not targets & (targets - 1):
            continue
        for kick, target in fresh._kicks():
            if target not in ALL_GOALS and not fresh.cells[target]:
                assert quick.verdict(-1, -1, target) is True, (fresh, kick)
                free_kicks += 1
        assert listed == list(full), fresh
    assert free_kicks >= 20, free_kicks
