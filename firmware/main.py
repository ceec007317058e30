# Runs on the chip at power-up: load board.json, start the board, poll forever.
import time

import app
from hw_chip import Hardware

definition, board_hash = app.load_definition()
board = app.Board(Hardware(definition), definition, board_hash)
while True:
    board.poll()
    time.sleep_ms(1)
