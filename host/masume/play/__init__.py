"""Playing a game on a board: one table session (layer 5)."""
