"""The tests' Mosquitto: masume.club.mosquitto (shared with `masume bench club`)."""

from masume.club.mosquitto import Broker, free_port  # noqa: F401
