"""The emulated chip (board.py: ChipBoard). Beside it, the chip's peripherals and
virtual board, which run inside the MicroPython VM and import each other as
top-level names, as the firmware does: MicroPython code, not CPython modules of
this package (the host's mypy run and the doctests leave them out; the VM runs
them in the tests/test_chip_*.py tests). Their machine, neopixel, time and os
stand for the modules MicroPython's stubs describe: tests/test_chip_types.py
checks them against those stubs, as tests/test_firmware_types.py checks the
firmware."""

VM_MODULES = ("world", "machine", "neopixel", "time", "os", "boot")
