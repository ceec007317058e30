"""The emulated chip (board.py: ChipBoard). Beside it, the chip's peripherals and
virtual board, which run inside the MicroPython VM and import each other as
top-level names, as the firmware does: MicroPython code, not CPython modules of
this package (mypy and the doctests leave them to tests/test_firmware_types.py)."""

VM_MODULES = ("world", "machine", "neopixel", "time", "os", "boot")
