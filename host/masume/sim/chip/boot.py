# Power-up of the emulated chip: the virtual board (world.py), then the
# firmware's main.py as on the chip (start, then its scan loop forever).
#
# MicroPython under wasmtime cannot see the garbage collector's roots that C
# code keeps in wasm locals (firmware/hw_sim.serve says more): the frame of a
# Python function too big for the C stack lives on the heap, and a collection
# frees it while it runs. So automatic collection is off, the collector runs
# only in time.sleep_ms (main.py's pause between passes) and at boot, and
# every frame on the stack then is small (serve, _run, main.run,
# time.sleep_ms).

import gc
import json

import world


def serve(faults, host):
    # Small on purpose (two locals, a short value stack): its frame stays on the
    # C stack, where the collector sees it, as the collections below run.
    _start(faults, host)
    _measure("emulation")
    _boot()
    _measure("boot")
    _run()


def _start(faults, host):
    gc.disable()
    with open("board.json") as f:
        world.start(json.load(f), json.loads(faults), host)


def _measure(what):
    gc.collect()
    world.board.host["memory"](what, gc.mem_free())


def _boot():
    import main

    main.start(world.board.usb)


def _run():
    try:
        __import__("main").run()
    except world.WatchdogReset:
        world.board.host["reset"]("the watchdog was not fed in time: the chip reset")
    except world.PowerOff:
        pass
