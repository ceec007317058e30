# The event journal: every event frame the board sent and the host has not yet
# acknowledged, in a fixed ring buffer. After a reconnect the board sends the
# host what it missed from here. When the ring is full the oldest event is
# dropped; the host sees the gap (first > its ack + 1) and asks for a snapshot.


class Journal:
    def __init__(self, capacity=256, frame_max=40):
        self.capacity = capacity
        self.frame_max = frame_max
        self.buf = bytearray(capacity * frame_max)
        self.lens = bytearray(capacity)
        self.first = 1  # seq of the oldest event held
        self.next = 1  # seq the next event gets
        self.dropped = 0  # events lost to overflow since boot

    def __len__(self):
        return self.next - self.first

    def append(self, frame):
        """Store an encoded frame under seq self.next; returns that seq."""
        if len(frame) > self.frame_max:
            raise ValueError("event frame too long for the journal")
        if self.next - self.first >= self.capacity:
            self.first += 1
            self.dropped += 1
        seq = self.next
        slot = seq % self.capacity
        base = slot * self.frame_max
        self.buf[base:base + len(frame)] = frame
        self.lens[slot] = len(frame)
        self.next = seq + 1
        return seq

    def ack(self, seq):
        """The host has every event up to seq: forget them."""
        if seq >= self.next:
            seq = self.next - 1
        if seq >= self.first:
            self.first = seq + 1

    def frame(self, seq):
        """The stored frame of seq as a memoryview (no copy)."""
        slot = seq % self.capacity
        base = slot * self.frame_max
        return memoryview(self.buf)[base:base + self.lens[slot]]
