"""``masume club``: club mode, many boards on an MQTT broker.

    masume club serve --broker mqtt://USER@HOST:PORT --password-file FILE --tables tables.toml
                      [--db club.db] [--http-port 8022]
    masume club broker-config --boards table-1,table-2 --servers club-1 --out DIR
                              [--tls-port 8883 --tls-host NAME] [--port 1883]
    masume club results [--db club.db]
    masume club export --db club.db --out DIR

The tables file names every board (its unit id) with its game and players::

    [tables.table-1]
    game = "soccer-shogi"
    players = ["Aiko", "Ben"]

The broker password comes from --password-file (a file holding it, or the
credentials.toml that broker-config wrote) or from $MASUME_MQTT_PASSWORD, never
from the command line, which every user of the machine can read.

See docs/club.md for running an event.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from masume.cli import add_password_file, described


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser("club", help="club mode: every table of an event over MQTT",
                            description=described(__doc__),
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    cmds = parser.add_subparsers(dest="club_command", metavar="SUBCOMMAND", required=True)

    serve = cmds.add_parser("serve", help="run the game of every table")
    serve.add_argument("--broker", required=True, metavar="URL",
                       help="mqtt://USER@HOST:PORT, or mqtts://USER@HOST:PORT?ca=CA.crt (TLS); "
                       "no password in it")
    add_password_file(serve)
    serve.add_argument("--tables", required=True, type=Path, help="the tables file (TOML)")
    serve.add_argument("--db", default="club.db",
                       help="SQLite file, or postgresql://... (default: club.db)")
    serve.add_argument("--server-id", default="club",
                       help="this server's name (several servers: each its own)")
    serve.add_argument("--shared", action="store_true",
                       help="several servers share the broker and the database: split the boards")
    serve.add_argument("--workers", type=int, default=None, metavar="N",
                       help="worker processes for the tables' tracker work (default: one "
                       "per core; 0 or 1: in the server's own process)")
    serve.add_argument("--http-host", default="127.0.0.1")
    serve.add_argument("--http-port", type=int, default=8022,
                       help="live page port (0: any free one)")
    serve.add_argument("--no-web", action="store_true")
    serve.add_argument("--http-allow-host", action="append", default=[], metavar="NAME",
                       help="another name the live page is reached by (repeatable)")
    serve.add_argument("--arbiter-password-file", type=Path, metavar="FILE",
                       help="the arbiter's password (first line), for the live page's "
                            "login; else $MASUME_ARBITER_PASSWORD; neither: nobody may "
                            "change the event from the page")
    serve.set_defaults(handler=run_serve)

    conf = cmds.add_parser("broker-config", help="write a Mosquitto configuration for the event")
    conf.add_argument("--boards", required=True, help="board unit ids, comma-separated")
    conf.add_argument("--servers", default="club", help="club server user names, comma-separated")
    conf.add_argument("--out", required=True, type=Path, help="folder to write into")
    conf.add_argument("--port", type=int, help="the plain (unencrypted) listener's port "
                      "(default 1883; with --tls-port only with --also-plain)")
    conf.add_argument("--bind", default="0.0.0.0")
    conf.add_argument("--tls-port", type=int, help="listen with TLS on this port, and not in "
                      "plain (makes a CA and the broker's certificate)")
    conf.add_argument("--tls-host", default="localhost",
                      help="the broker's name in its certificate")
    conf.add_argument("--also-plain", action="store_true",
                      help="with --tls-port, keep a plain listener on --port too "
                      "(a closed network only)")
    conf.add_argument("--user", help="the user Mosquitto runs as, who alone may read its password, "
                      "ACL and key files (default: mosquitto as root, else you)")
    conf.set_defaults(handler=run_broker_config)

    results = cmds.add_parser("results", help="every game of the event and its result")
    results.add_argument("--db", default="club.db")
    results.set_defaults(handler=run_results)

    export = cmds.add_parser("export", help="write every game as a record file")
    export.add_argument("--db", default="club.db")
    export.add_argument("--out", required=True, type=Path)
    export.set_defaults(handler=run_export)


def run_serve(args: argparse.Namespace) -> int:
    import logging
    import signal
    import threading

    from masume.club.arbiter import PASSWORD_ENV, read_password
    from masume.club.pool import default_workers
    from masume.club.server import AssignmentError, ClubServer, ServerRunning, load_assignments
    from masume.club.store import ClubStore
    from masume.link.mqtt import BrokerUrl

    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stderr)
    logging.getLogger("masume.link").setLevel(logging.WARNING)
    try:
        arbiter_password = read_password(args.arbiter_password_file)
        broker = BrokerUrl.from_command_line(args.broker, args.password_file)
        assignments = load_assignments(args.tables)
        store = ClubStore(args.db)
        if args.workers is not None and args.workers < 0:
            raise ValueError(f"--workers {args.workers}: a number of processes, 0 or more")
        workers = default_workers() if args.workers is None else args.workers
        server = ClubServer(broker, store, assignments, server_id=args.server_id,
                            shared=args.shared, workers=workers, own_process=True)
    except (AssignmentError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    # The loop's CPU so far, stage by stage (with MASUME_LOOP_CPU=1: masume.health.LoopCpu).
    from masume.health import LOOP_CPU

    signal.signal(signal.SIGUSR1, lambda *_: print(LOOP_CPU.line(), file=sys.stderr, flush=True))
    try:
        server.start()
    except ServerRunning as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    assert server.hub is not None  # started
    print(f"club server {args.server_id}: {len(assignments)} tables, broker "
          f"{server.hub.url.host}:{server.hub.url.port}, db {args.db}", flush=True)
    if server.pool is not None:
        print(f"tracker work in {server.pool.size} worker processes", flush=True)
    stop_web = None
    if not args.no_web:
        from masume.club.web import serve as serve_web

        url, stop_web = serve_web(server, host=args.http_host, port=args.http_port,
                                  arbiter_password=arbiter_password,
                                  allow_hosts=args.http_allow_host)
        print(f"live page: {url}", flush=True)
        print("arbiter login: " + ("on" if arbiter_password else
                                   f"off (no --arbiter-password-file, no {PASSWORD_ENV})"),
              flush=True)
    try:
        while not stop.wait(0.5):
            pass
    except KeyboardInterrupt:
        pass
    finally:
        if stop_web:
            stop_web()
        server.close()
        store.close()
    return 0


def run_broker_config(args: argparse.Namespace) -> int:
    from masume.club.broker import closed_to, write_broker_config

    boards = [b.strip() for b in args.boards.split(",") if b.strip()]
    servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    if args.tls_port is not None and args.port is not None and not args.also_plain:
        print("error: --port is the plain listener's, and with --tls-port there is none: "
              "add --also-plain to keep one", file=sys.stderr)
        return 2
    try:
        conf = write_broker_config(args.out, boards, servers, port=args.port or 1883,
                                   bind=args.bind, tls_port=args.tls_port,
                                   tls_host=args.tls_host, also_plain=args.also_plain,
                                   user=args.user)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    ports = (("plain", conf.port), ("TLS", conf.tls_port))
    listeners = [f"{kind} on {port}" for kind, port in ports if port is not None]
    print(f"wrote {conf.conf} ({len(boards)} boards, {len(servers)} servers; "
          f"{', '.join(listeners)}); passwords in {conf.folder / 'credentials.toml'}")
    if conf.tls_port is None:
        print("note: no TLS: passwords and moves cross the network in clear "
              "(--tls-port 8883 on a network you do not own)")
    closed = closed_to(conf.folder, conf.user) if conf.user else None
    if closed is not None:
        print(f"warning: Mosquitto, as {conf.user}, cannot enter {closed}, so cannot read "
              f"its files: write them elsewhere (e.g. /srv/event), or name another --user")
    print(f"start it with: mosquitto -c {conf.conf}")
    return 0


#: A game's headers that are not a player's name: the table's, and the table's state
#: saved with the record (masume.play.table).
NOT_PLAYERS = ("Table", "Options", "Resigned", "Rolls", "Clock", "Link", "Sensed", "Tracker")


def run_results(args: argparse.Namespace) -> int:
    from masume.club.store import ClubStore

    store = ClubStore(args.db)
    for g in store.games():
        players = " - ".join(v for k, v in g["headers"].items() if k not in NOT_PLAYERS)
        state = g["result"] or ("playing" if g["active"] else "unfinished")
        print(f"{g['id']:4d}  {g['table']:<12} {g['game']:<14} {players:<30} {state}")
    store.close()
    return 0


def run_export(args: argparse.Namespace) -> int:
    from masume.club.store import ClubStore

    store = ClubStore(args.db)
    args.out.mkdir(parents=True, exist_ok=True)
    n = 0
    for g in store.games():
        record = store.record(g["id"])
        if record:
            (args.out / f"{g['id']:04d}-{g['table']}-{g['game']}.txt").write_text(record)
            n += 1
    store.close()
    print(f"wrote {n} records to {args.out}")
    return 0
