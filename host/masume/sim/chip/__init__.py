"""The emulated chip (board.py: ChipBoard). Beside it, the chip's peripherals and
virtual board, which run inside the MicroPython VM and import each other as
top-level names, as the firmware does: MicroPython code, not CPython modules of
this package (mypy and the doctests leave them out; the VM runs them in the
tests/test_chip_*.py tests). Their machine, time and os are the modules
MicroPython's stubs describe, so the firmware's stub check cannot take them as
they are named."""

VM_MODULES = ("world", "machine", "neopixel", "time", "os", "boot")
