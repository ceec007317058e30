"""The simulated board (firmware on the MicroPython VM, a pty as its port)."""
