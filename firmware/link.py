# The board's end of the protocol (protocol/SPEC.md): handshake, event
# sequence numbers and the journal, cumulative acks both ways, resend after
# silence (backing off while the acks are merely late), in-order commands,
# heartbeats. Frame-level: the serial link feeds it frames cut by a Deframer, the
# MQTT link one frame per message.

from clock import ticks_diff
from masume_protocol import codec as c

RESEND_MS = 250  # no ack progress for this long: send the unacked events again
RESEND_MAX_MS = 2000  # each pass without progress doubles the wait, up to this
RESEND_BURST = 32  # at most this many frames per resend pass
HEARTBEAT_MS = 1000
HOST_TIMEOUT_MS = 3500  # no frame from the host for this long: it is gone


class BoardLink:
    def __init__(self, send, journal, boot, firmware, board_id, board_hash, device):
        # send(frame_bytes); device: on_leds(entries, whole) -> unknown cells,
        # readings() -> [(cell, reading)], faults() -> [ERROR texts of faulty sensors]
        self.send = send
        self.journal = journal
        self.boot = boot
        self.firmware = firmware
        self.board_id = board_id
        self.board_hash = board_hash
        self.device = device
        self.host_seen = None  # ticks of the last good frame from the host
        self.last_cmd = 0  # seq of the last command carried out
        # ticks since the oldest unacked event waits: the last ack that freed journal
        # space, or the event sent into an empty journal
        self.last_progress = 0
        self.last_resend = 0
        self.resend_wait = RESEND_MS  # doubles with each pass without progress
        self.last_heartbeat = 0
        self.bad_frames = 0

    def host_alive(self, now):
        return self.host_seen is not None and ticks_diff(now, self.host_seen) < HOST_TIMEOUT_MS

    def welcome(self):
        j = self.journal
        self.send(c.encode_frame(c.WELCOME, 0, c.pack_welcome(
            self.boot, j.next, j.first, self.board_hash, self.firmware, self.board_id)))

    def event(self, mtype, payload, now):
        """Journal an event and send it if a host listens; returns its seq."""
        seq = self.journal.next
        frame = c.encode_frame(mtype, seq, payload)
        if not len(self.journal):
            self._progress(now)  # its resend waits RESEND_MS from now, not from an old ack
        self.journal.append(frame)
        if self.host_alive(now):
            self.send(frame)
        return seq

    def _progress(self, now):
        self.last_progress = now
        self.resend_wait = RESEND_MS

    def receive(self, raw, now):
        try:
            mtype, seq, payload = c.decode_frame(raw)
            fields = c.unpack(mtype, payload) if mtype in c.NAMES else None
        except c.FrameError:
            self.bad_frames += 1
            return
        self.host_seen = now
        if mtype == c.HELLO and fields is not None:
            version, boot, ack = fields
            if version != c.PROTOCOL_VERSION:
                self._error(c.E_VERSION, "protocol %d not supported; this board speaks %d"
                            % (version, c.PROTOCOL_VERSION))
            self.last_cmd = seq
            if boot == self.boot:
                self.journal.ack(ack)
            self.welcome()
            # The board's clock before the journal's events (protocol 2): the host
            # places resent events in time by it. Then what is broken.
            self._heartbeat(now)
            self.faults()
            if boot == self.boot:
                self._progress(now)  # a new session: its acks are not late yet
                self._resend(now)
        elif mtype == c.ACK:
            before = self.journal.first
            self.journal.ack(seq)
            if self.journal.first != before:
                self._progress(now)
        elif mtype in c.COMMANDS:
            if seq == self.last_cmd + 1:
                self.last_cmd = seq
                self._command(mtype, seq, fields)
            self.send(c.encode_frame(c.ACK, self.last_cmd))
        elif mtype == c.HEARTBEAT:
            pass
        else:
            self._error(c.E_UNKNOWN, "unexpected message type %d" % mtype)

    def _command(self, mtype, seq, fields):
        if mtype == c.SNAPSHOT_REQ:
            self.send(c.encode_frame(c.SNAPSHOT, self.journal.next - 1,
                                     c.pack_snapshot(self.device.readings())))
        else:
            bad = self.device.on_leds(fields, mtype == c.LED_FRAME)
            if bad:
                self._error(c.E_PAYLOAD, "no cell %d on this board" % bad[0])

    def faults(self):
        """ERROR(4) for every faulty sensor (protocol/SPEC.md, "Handshake")."""
        for text in self.device.faults():
            self._error(c.E_SENSOR, text)

    def _error(self, code, text):
        self.send(c.encode_frame(c.ERROR, 0, c.pack_error(code, text)))

    def _heartbeat(self, now):
        self.last_heartbeat = now
        j = self.journal
        self.send(c.encode_frame(c.HEARTBEAT, 0, c.pack_heartbeat(j.next, j.first, now, self.boot)))

    def _resend(self, now, burst=RESEND_BURST):
        j = self.journal
        last = min(j.next, j.first + burst)
        for seq in range(j.first, last):
            self.send(j.frame(seq))
        self.last_resend = now

    def poll(self, now):
        """Resend and heartbeat timers; allocates nothing when neither is due.

        Unacked events go again RESEND_MS after the last progress (up to
        RESEND_BURST of them: a lost one is repaired with those after it, which the
        host dropped), then only the oldest, after 2x, 4x ... that (at most
        RESEND_MAX_MS) while no ack frees journal space: a host whose acks are late
        (busy, or saving) is not fed the same events four times a second, and still
        hears that the board waits. An ack that frees space starts again at
        RESEND_MS, with the whole burst."""
        if ticks_diff(now, self.last_heartbeat) >= HEARTBEAT_MS:
            self._heartbeat(now)
        if (len(self.journal) and self.host_alive(now)
                and ticks_diff(now, self.last_progress) >= RESEND_MS
                and ticks_diff(now, self.last_resend) >= self.resend_wait):
            self._resend(now, RESEND_BURST if self.resend_wait == RESEND_MS else 1)
            self.resend_wait = min(self.resend_wait * 2, RESEND_MAX_MS)

