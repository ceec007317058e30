"""Eyeshield 21 TCG (アイシールド21 トレーディングカードゲーム, Konami 2005): rules engine.

The rules, each with the sentence of the seed (004) it comes from and every
reading chosen where the seed is silent, are in docs/rules/eyeshield21.md; the
mat is hardware/boards/eyeshield21.toml; the cards are a card set file
(host/masume/cards/sets/eyeshield21-demo.toml, made up: not the publisher's). The
engine is given the set: a ``CardSet``, or a name it reads through the loader
``masume.games.load_rules`` gives it (``RULES`` here has none).

Modules: ``geometry`` (the mat's cells), ``cards`` (the card fields, abilities, deck
lists and their checks; the decks in play), ``actions`` (the actions), ``position``
(the rules of play), ``notation`` (actions and positions read from text).

Two sides, ``home`` and ``away``, each with a 40-card deck and a pair of ball
cards. The host never knows a hand or the order of a deck: those cards are an
unseen pool per side, and an action that lays a card from it names whichever
copy the reader sees. Draws and other counted moves are calls (``draw``,
``damage 3``) that leave the mat as it is.

The set-up and the first turn's attack, in the manner of python-chess::

    >>> from masume.games import load_rules
    >>> from masume.rules import Game
    >>> game = Game(load_rules("eyeshield21").start())
    >>> for text in ("F01.1@home-character-1", "F05.1@home-character-2", "F03.1@home-character-3",
    ...              "deal", "S02.1@away-character-1", "S05.1@away-character-2",
    ...              "S04.1@away-character-3", "deal", "reveal"):
    ...     _ = game.push_notation(text)
    >>> game.position.status().message
    'home, main phase: characters, reactions, abilities, buy cards (1 guts each; 4 guts), then ...'
    >>> game.position.piles[0], game.position.piles[1]
    (Piles(deck=29, hand=4, guts=4, discard=0), Piles(deck=27, hand=5, guts=5, discard=0))
    >>> for text in ("attack", "home-character-1>home-pass-1", "home-character-2>home-pass-2",
    ...              "home-character-3>home-run-1", "B1.1@home-pass-ball", "B0.1@home-run-ball",
    ...              "ready", "away-character-1>away-run-1", "away-character-2>away-pass-1",
    ...              "away-character-3>away-pass-2", "ready", "B1.2@away-run-ball", "reveal"):
    ...     _ = game.push_notation(text)
    >>> p = game.position
    >>> p.area, p.hit, p.power("home"), p.power("away"), p.damage()
    ('pass', False, 3, 5, 0)
    >>> p.seen_by("away").cells["home-run-1"]
    ('face down',)
    >>> p.seen_by("home").cells["home-run-1"]
    ('F03.1 Shiraishi (RUN 4), face down',)
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..base import ReadsCardSets, resigning
from ..card_set import CardSet
from .actions import Action, Call, Move, Place, Use
from .cards import (
    Ability,
    Deck,
    Table,
    ability_of,
    card_warnings,
    check_cards,
    deck_lists,
    make_table,
)
from .geometry import SIDES
from .notation import parse_notation, read_text
from .position import STEPS, Options, Piles, Position

if TYPE_CHECKING:
    from os import PathLike


class Eyeshield21Rules(ReadsCardSets):
    """The entry point, as ``masume.games.load_rules("eyeshield21")`` returns it: given
    the card-set loader. ``RULES`` here has none, so it plays only a CardSet it is given.

    >>> from masume.games import load_rules
    >>> rules = load_rules("eyeshield21")
    >>> rules.start(first="away").status().to_move
    'away'
    >>> rules.start(deck_home="sharks", deck_away="falcons").table.deck_ids
    ('sharks', 'falcons')
    """

    name = "eyeshield21"
    board = "eyeshield21"
    Options = Options

    def _table(self, cards: str | PathLike[str] | CardSet, deck_home: str,
               deck_away: str) -> Table:
        """The table for a card set given, or named (a shipped set's name, or a path)."""
        if isinstance(cards, CardSet):
            return make_table(cards, str(cards.path) if cards.path else cards.id, deck_home,
                              deck_away)
        return make_table(self._card_set(cards), str(cards), deck_home, deck_away)

    def start(self, cards: str | PathLike[str] | CardSet = "eyeshield21-demo",
              deck_home: str = "", deck_away: str = "", **options: Any) -> Position:
        """The set-up: ``cards`` a shipped set name or a path (read through the card
        source), or a CardSet; ``deck_home`` and ``deck_away`` name deck lists of the set
        (default: its first two); ``first`` (home or away) starts; ``draw_cost``,
        ``hand_limit``: see :class:`Options`."""
        table = self._table(cards, deck_home, deck_away)
        made = Options.make(**options)
        first = SIDES.index(made.first)
        piles = tuple(Piles(len(deck.copies), 0, 0, 0) for deck in table.decks)
        return Position(table, "setup", first, first, 0, piles=piles, options=made)  # type: ignore[arg-type]

    def from_text(self, text: str, **options: Any) -> Position:
        """The position written by :meth:`Position.to_text`; options given here override.

        >>> from masume.games import load_rules
        >>> rules = load_rules("eyeshield21")
        >>> rules.from_text(rules.start().to_text()) == rules.start()
        True
        """
        return read_text(text, dict(options), self._table)

    def resign(self, position: Position, side: str) -> Position:
        """The position after ``side`` resigns.

        >>> from masume.games import load_rules
        >>> rules = load_rules("eyeshield21")
        >>> rules.resign(rules.start(), "away").outcome().winner
        'home'
        """
        return replace(position, step="over", over="resignation",
                       loser=resigning(position, side))

    def check_cards(self, card_set: CardSet) -> list[str]:
        """The game's checks of a card set, one line per problem (:func:`.cards.check_cards`)."""
        return check_cards(card_set)

    def card_warnings(self, card_set: CardSet) -> list[str]:
        """Abilities the players apply by hand (:func:`.cards.card_warnings`)."""
        return card_warnings(card_set)


RULES = Eyeshield21Rules()

__all__ = [
    "RULES",
    "SIDES",
    "STEPS",
    "Ability",
    "Action",
    "Call",
    "Deck",
    "Eyeshield21Rules",
    "Move",
    "Options",
    "Piles",
    "Place",
    "Position",
    "Table",
    "Use",
    "ability_of",
    "check_cards",
    "deck_lists",
    "parse_notation",
]
