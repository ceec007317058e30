# ISO/IEC 14443-3 type A, the parts a reader needs to find and read tags
# ("-3 x.y" is a section of ISO/IEC 14443-3:2018): command codes, CRC_A, BCC,
# and the NTAG21x READ (NXP NTAG213/215/216 data sheet, section 10.2).

from micropython import const

REQA = const(0x26)  # -3 6.4.1: 7-bit short frames
WUPA = const(0x52)  # wakes HALTed tags too
SEL_CL1 = const(0x93)  # -3 6.5.3.2: SEL of cascade levels 1, 2, 3
NVB_ALL = const(0x20)  # -3 6.5.3.3: only SEL and NVB known: every tag answers
NVB_SELECT = const(0x70)  # all 40 bits known: SELECT
CASCADE_TAG = const(0x88)  # -3 6.5.4: CT, "the UID goes on at the next level"
SAK_CASCADE = const(0x04)  # -3 6.5.3.4: SAK bit 3, UID not complete
HLTA = const(0x50)  # -3 6.4.3, followed by 0x00 and CRC_A
READ = const(0x30)  # NTAG 10.2: 16 bytes from a page, and CRC_A
CODE_PAGE = const(4)  # the piece code: byte 0 of page 4 (hardware/README.md)

# Air times at 106 kbit/s (-3 6.1, 6.2): 1 etu = 128 / 13.56 MHz; a reader's frame
# of n bytes is (9n + 3) etu, a tag's (9n + 2); the tag answers 91 us after the
# reader's frame (-3 6.2.1.1, n = 9).
ETU_NS = const(9440)
FDT_US = const(91)
SHORT_FRAME_US = const(94)


def frame_us(reader_bytes, tag_bytes):
    """Air time of an exchange: the reader's frame, the frame delay, the answer."""
    out = SHORT_FRAME_US if reader_bytes == 0 else (9 * reader_bytes + 3) * ETU_NS // 1000
    if tag_bytes == 0:
        return out
    return out + FDT_US + (9 * tag_bytes + 2) * ETU_NS // 1000


def crc_a(data, start, n):
    """CRC_A of data[start:start + n] (-3 6.2.4 and annex B): the CRC-16 of
    ISO/IEC 13239 (x^16 + x^12 + x^5 + 1, reflected), preset 0x6363, no final
    inversion. Sent low byte first. Byte-wise, without a table: 256 entries of
    RAM would buy little for frames of at most 18 bytes."""
    crc = 0x6363
    for i in range(start, start + n):
        b = (data[i] ^ crc) & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = (crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)
    return crc


def append_crc(frame, n):
    """Put CRC_A after frame[:n]; returns the new length."""
    crc = crc_a(frame, 0, n)
    frame[n] = crc & 0xFF
    frame[n + 1] = crc >> 8
    return n + 2


def crc_ok(data, n):
    """True if data[:n] ends with the CRC_A of what comes before it."""
    if n < 3:
        return False
    crc = crc_a(data, 0, n - 2)
    return data[n - 2] == crc & 0xFF and data[n - 1] == crc >> 8


def bcc(data, start):
    """-3 6.5.3.1: the check byte of a cascade level, the XOR of its four bytes."""
    return data[start] ^ data[start + 1] ^ data[start + 2] ^ data[start + 3]
