"""Byte transports under a BoardSession: each delivers whole frames.

The session only needs open/close/send/receive; the serial transport cuts the
byte stream into frames with COBS, the MQTT transport (club mode) gets one
frame per message.
"""

from __future__ import annotations

import os
from typing import Protocol

import serial

from masume_protocol.codec import Deframer

#: What pyserial raises when the device vanishes: SerialException, OSError, and
#: TypeError or AttributeError from its internals when the port closes under a
#: read or write in another thread.
_GONE = (serial.SerialException, OSError, TypeError, AttributeError)


class LinkDown(Exception):
    """The transport is not usable now (unplugged, port gone, broker away)."""


class Transport(Protocol):
    @property
    def port(self) -> str:
        """Where the board is (a serial device, a club unit's topics): its name in messages."""

    def open(self) -> None: ...

    def close(self) -> None: ...

    def send(self, frame: bytes) -> None: ...

    def receive(self, timeout: float) -> list[bytes]:
        """Complete raw frames (COBS-encoded, without the zero), possibly none."""


class SerialTransport:
    """A USB CDC serial port through pyserial (a real board or `masume sim`)."""

    def __init__(self, port: str, baudrate: int = 115200) -> None:
        self.port = port
        self.baudrate = baudrate  # USB CDC ignores it; a UART bridge needs it
        self._serial: serial.Serial | None = None
        self._deframer = Deframer()

    def open(self) -> None:
        self.close()
        if not os.path.exists(self.port):
            raise LinkDown(f"{self.port} is not there (unplugged?)")
        try:
            self._serial = serial.Serial(self.port, self.baudrate, timeout=0, exclusive=True)
            self._serial.reset_input_buffer()
        except (serial.SerialException, OSError) as exc:
            self._serial = None
            raise LinkDown(f"cannot open {self.port}: {exc}") from exc
        self._deframer = Deframer()

    def close(self) -> None:
        if self._serial is not None:
            try:
                self._serial.close()
            except (serial.SerialException, OSError):
                pass
            self._serial = None

    def send(self, frame: bytes) -> None:
        port = self._serial
        if port is None:
            raise LinkDown("port closed")
        try:
            port.write(frame)
        except _GONE as exc:
            raise LinkDown(f"write failed: {exc}") from exc

    def receive(self, timeout: float) -> list[bytes]:
        port = self._serial
        if port is None:
            raise LinkDown("port closed")
        try:
            port.timeout = timeout
            data = port.read(max(1, port.in_waiting))
            if data and port.in_waiting:
                data += port.read(port.in_waiting)
        except _GONE as exc:
            raise LinkDown(f"read failed: {exc}") from exc
        return self._deframer.feed(data) if data else []
