"""The board link, host side: transports and the session that keeps a board connected."""

from .base import LedPicture, Link, LinkState, NoBoard
from .events import BoardEvent, Led, Reading
from .session import BoardMismatch, BoardSession
from .transport import LinkDown, SerialTransport, Transport

__all__ = [
    "BoardEvent",
    "BoardMismatch",
    "BoardSession",
    "Led",
    "LedPicture",
    "Link",
    "LinkDown",
    "LinkState",
    "NoBoard",
    "Reading",
    "SerialTransport",
    "Transport",
]
