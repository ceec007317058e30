"""What mypy checks of each engine against the contract of masume.rules.base (not run:
tests/test_contract.py has mypy check this file): its RULES is a Rules (and a CardRules
and WarnsOfCards for the card games), its Position a Position over its actions, and the
card games' positions hide information and lie on cards."""

from __future__ import annotations

from masume.rules import (
    eyeshield21,
    magic_number_eleven,
    masume_tactics,
    shogi_soccer,
    soccer_shogi,
)
from masume.rules.base import (
    CardRules,
    HidesInformation,
    OnCards,
    Position,
    Rules,
    WarnsOfCards,
)

RULES: tuple[Rules, ...] = (soccer_shogi.RULES, shogi_soccer.RULES, masume_tactics.RULES,
                            magic_number_eleven.RULES, eyeshield21.RULES)
CARD_RULES: tuple[CardRules, ...] = (masume_tactics.RULES, magic_number_eleven.RULES,
                                     eyeshield21.RULES)
WARNING_RULES: tuple[WarnsOfCards, ...] = (masume_tactics.RULES, magic_number_eleven.RULES,
                                           eyeshield21.RULES)


def soccer_shogi_position(p: soccer_shogi.Position) -> Position[soccer_shogi.Action]:
    return p


def shogi_soccer_position(p: shogi_soccer.Position) -> Position[shogi_soccer.Action]:
    return p


def masume_tactics_position(p: masume_tactics.Position) -> Position[masume_tactics.Action]:
    return p


def magic_number_eleven_position(
        p: magic_number_eleven.Position) -> Position[magic_number_eleven.Action]:
    return p


def eyeshield21_position(p: eyeshield21.Position) -> Position[eyeshield21.Action]:
    return p


def card_positions(mne: magic_number_eleven.Position, es21: eyeshield21.Position) -> tuple[
        HidesInformation[magic_number_eleven.Action], HidesInformation[eyeshield21.Action],
        OnCards, OnCards]:
    return mne, es21, mne, es21
