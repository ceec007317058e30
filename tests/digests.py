"""The behaviour digests' one hash (tests/test_engine_digest.py, test_tracker_digest.py)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def digest_of(lines: Iterable[str]) -> str:
    """The first 32 hex digits of the SHA-256 of the lines, each ended by a newline."""
    h = hashlib.sha256()
    for line in lines:
        h.update(line.encode() + b"\n")
    return h.hexdigest()[:32]
