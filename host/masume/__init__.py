"""masume: a smart table for board games (host side).

Packages, lowest layer first (see docs/architecture.md):
``masume.rules`` pure rules engines; ``masume.boards`` board definitions;
``masume.link`` the board link (serial, MQTT); ``masume.tracker``, ``masume.leds``,
``masume.records``; ``masume.play`` one table's session; ``masume.sim`` the
simulated board; ``masume.cli`` and ``masume.web`` the faces.
"""

#: The package's version, its one source (pyproject.toml reads it; CHANGELOG.md says
#: what each changed).
__version__ = "0.1.0"
