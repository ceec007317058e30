"""The local web view of one table: a page that draws the physical board from its
definition (pieces, LEDs, score, whose turn, the move list) and, on the simulated
board, lets a person lift and place pieces and press the board's buttons.

The server (:mod:`masume.web.server`) only relays: the page's picture comes from the
table session's ``state()`` pushed over Server-Sent Events, and the page's clicks go
to the session's ``sim_*`` methods, i.e. through the simulated board's real sensor
path. Nothing here knows any game.
"""

from masume.web.server import create_app, serve

__all__ = ["create_app", "serve"]
