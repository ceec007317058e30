"""The collector in a process holding many tables (masume.heap, issue 17): what is
alive at a start of tables is frozen out of its walks, in a worker process as in the
server's own; its collections are timed, and a long one is said in the log."""

from __future__ import annotations

import gc
import logging
from pathlib import Path
from typing import Any

import httpx
from test_club import set_up
from waiting import until

from masume import heap
from masume.club.server import ClubServer, make_assignment
from masume.club.store import ClubStore
from masume.club.web import serve


def test_settle_freezes_what_is_alive():
    gc.unfreeze()
    try:
        kept = [object() for _ in range(3)]
        heap.settle()
        assert gc.get_freeze_count() >= len(kept)
    finally:
        gc.unfreeze()  # the test process's collector as it was


def test_pauses_counts_collections_and_says_a_long_one(monkeypatch, caplog):
    caplog.set_level(logging.WARNING, logger="masume.heap")
    pauses = heap.Pauses("here")
    try:
        monkeypatch.setattr(heap, "SAID_MS", -1.0)  # any collection is "long"
        gc.collect()
        assert pauses.collections >= 1 and pauses.longest_ms >= 0
        assert any("here: a generation 2 collection held the process up" in r.getMessage()
                   for r in caplog.records)
        assert pauses.report()["collections"] == pauses.collections
    finally:
        pauses.close()
    after = pauses.collections
    gc.collect()
    assert pauses.collections == after  # closed: no longer called


def test_a_worker_freezes_its_tables_once_opened_and_its_collector_is_reported(
        broker, make_sim, tmp_path: Path):
    unit = "heap-1"
    sim = make_sim(mqtt=broker.url, unit=unit)
    set_up(sim)
    store = ClubStore(tmp_path / "club.db")
    server = ClubServer(broker.url, store, {unit: make_assignment(unit, {"game": "soccer-shogi"})},
                        workers=2).start()
    url, stop = serve(server)
    try:
        assert server.pool is not None
        until(lambda: unit in server.tables and sim.led_colours, "the table lit")
        # Its open answered, the worker settled its heap before it read the next call.
        slot = server.pool.slot_of(unit)
        frozen = server.pool.submit(slot, gc.get_freeze_count).result(10)
        assert frozen > 0
        # The server in a test shares its process: it leaves that process's collector be.
        assert server.own_process is False and heap.report() is None

        # Each worker's collector reaches /api/health (the server asks each once a
        # second): a full collection made in the table's worker is seen there.
        seen = server.pool.submit(slot, heap.report).result(10)["collections"]
        server.pool.submit(slot, gc.collect).result(10)

        def workers() -> list[dict[str, Any]]:
            answer = httpx.get(url + "api/health")
            assert answer.status_code == 200
            listed: list[dict[str, Any]] = answer.json()["workers"]
            return listed

        until(lambda: all(w["gc"] is not None for w in workers())
              and workers()[slot]["gc"]["collections"] > seen, "the collection reported")
        for worker in workers():
            assert set(worker["gc"]) == {"collections", "longest_ms", "frozen"}
            assert worker["gc"]["longest_ms"] >= 0
        assert workers()[slot]["gc"]["frozen"] == frozen
    finally:
        stop()
        server.close()
        store.close()
