"""Screenshots of the web view, to look at it: the page over the tests' in-memory
table, in headless Chromium.

    .venv/bin/python tests/web_screenshot.py [BOARD] [--width W] [--height H] [--out FILE]

BOARD is a board id (soccer-shogi by default); a few pieces, LEDs and moves are put
on it so the picture shows them.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from browser import CHROMIUM, CHROMIUM_ARGS  # noqa: E402
from test_web import FakeTable  # noqa: E402

from masume.web import serve  # noqa: E402


def scene(board: str, *, simulated: bool = True) -> FakeTable:
    table = FakeTable(board, simulated=simulated)
    b = table._board
    sensed = [c for c in b.cells if c.sensor != "none"]
    lamps = [c for c in b.cells if c.sensor == "none"]
    names = list(b.pieces)
    pieces: dict[str, list[str]] = {}
    leds: dict[str, dict] = {}
    if names:
        # A few pieces of each side along the middle, the ball under one of them,
        # a resting piece, and a stack.
        middle = sorted(sensed, key=lambda c: (abs(c.y - sensed[len(sensed) // 2].y), c.x))
        for i, cell in enumerate(middle[: min(len(names) + 3, 10)]):
            pieces[cell.name] = [names[i % len(names)]]
        first = middle[0].name
        if "ball" in names:
            pieces[first] = ["ball", next(n for n in names if n != "ball")]
        for cell in middle[12:15]:
            leds[cell.name] = {"rgb": [0, 200, 60], "pattern": "steady"}
        leds[middle[16].name] = {"rgb": [255, 40, 40], "pattern": "blink"}
        leds[middle[17].name] = {"rgb": [255, 190, 0], "pattern": "pulse"}
    else:
        for i, cell in enumerate(sensed[::5][:8]):
            pieces[cell.name] = [f"tag:04a1b2{i:02x}"]
        for cell in sensed[1:4]:
            leds[cell.name] = {"rgb": [60, 140, 255], "pattern": "steady"}
    for lamp in lamps[:2]:
        leds[lamp.name] = {"rgb": [0, 80, 255], "pattern": "steady"}
    table.pieces = pieces
    table.leds = leds
    table.moves = [
        {"number": 1, "side": "blue", "actions": ["A7-A6", "A6-A5"]},
        {"number": 2, "side": "red", "actions": ["C2-C3", "C3xC4"]},
        {"number": 3, "side": "blue", "actions": ["C5-C4"]},
    ]
    table.status = {**table.status, "action_number": 2, "score": {"blue": 1, "red": 0},
                    "message": "blue, action 2 of 2"}
    table.tracker = {"state": "lifted", "message": "blue lifted from C5: put it down on a lit square",
                     "squares": []}
    return table


def main() -> None:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser()
    ap.add_argument("board", nargs="?", default="soccer-shogi")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=860)
    ap.add_argument("--out", default="/tmp/masume-web.png")
    ap.add_argument("--real", action="store_true", help="a real board (mirror only)")
    ap.add_argument("--hold", nargs="*", default=[], help="pieces to take from the box first")
    args = ap.parse_args()

    table = scene(args.board, simulated=not args.real)
    web = serve(table)
    url, stop = web.url, web.stop
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": args.width, "height": args.height})
            page.on("console", lambda m: print("console:", m.text))
            page.on("pageerror", lambda e: print("pageerror:", e))
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]")
            for name in args.hold:
                page.click(f'[data-piece-choice="{name}"]')
            time.sleep(0.3)
            page.screenshot(path=args.out, full_page=True)
            browser.close()
    finally:
        stop()
    print(args.out)


if __name__ == "__main__":
    main()
