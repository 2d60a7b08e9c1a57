#!/usr/bin/env python3
"""Seed 000's counter app (as examples/rails-counter) on Python 3's standard library alone.

One table, counters, with one row, count_up. POST /count_up adds one as Rails'
update_all("count = count + 1") does and answers {"count":N}; GET /count answers the count; any
other request gets 404. --prepare creates the table and the row if missing, then exits, as
`bin/rails db:prepare` does before a Rails container's server starts.
"""
import argparse
import contextlib
import json
import queue
import signal
import socket
import sqlite3
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Rails 8's pragmas on every connection, as examples/rails-counter/config/initializers/rails8_sqlite.rb
# sets them (activerecord 8.0's DEFAULT_PRAGMAS): WAL, synchronous NORMAL, 128 MiB mmap, ...
PRAGMAS = [("foreign_keys", "ON"), ("journal_mode", "WAL"), ("synchronous", "NORMAL"),
           ("mmap_size", 134217728), ("journal_size_limit", 67108864), ("cache_size", 2000)]
TIMEOUT = 5.0  # config/database.yml's timeout: 5000 (ms)
THREADS = 3  # Puma's threads in Rails 8's config/puma.rb (RAILS_MAX_THREADS)
GVL = contextlib.nullcontext()  # --gvl: a threading.Lock (see sql)


def busy(statement):
    """Runs statement, waiting for SQLite's lock as Rails 8's busy handler does (sqlite3 2.x's
    busy_handler_timeout, copied into rails8_sqlite.rb): retry at once, then every 1 ms, until
    TIMEOUT has passed. SQLite's own busy_timeout would back off to 100 ms sleeps instead."""
    deadline = None
    while True:
        try:
            return statement()
        except sqlite3.OperationalError as e:
            if (e.sqlite_errorcode & 0xFF) != sqlite3.SQLITE_BUSY:
                raise
            now = time.monotonic()
            if deadline is None:
                deadline = now + TIMEOUT
            elif now > deadline:
                raise
            else:
                time.sleep(0.001)


def connect(path):
    # Autocommit (isolation_level=None): transactions are explicit. timeout=0: busy() waits instead.
    # One thread at a time uses a connection (the pool below), so any thread may.
    conn = sqlite3.connect(path, timeout=0, isolation_level=None, check_same_thread=False)
    for name, value in PRAGMAS:
        busy(lambda: sql(conn, f"PRAGMA {name} = {value}"))
    return conn


def sql(conn, text, *params):
    """One statement, stepped to its end. With --gvl, one at a time process-wide, as sqlite3-ruby
    steps each statement holding Ruby's GVL (Python's sqlite3 releases the GIL meanwhile)."""
    with GVL:
        return conn.execute(text, params).fetchall()


def count_up(conn):
    # Rails runs update_all and find as two statements; one IMMEDIATE transaction around both makes
    # the count answered the one this request wrote (still one commit per request).
    busy(lambda: sql(conn, "BEGIN IMMEDIATE"))
    try:
        sql(conn, "UPDATE counters SET count = count + 1 WHERE id = ?", "count_up")
        rows = sql(conn, "SELECT count FROM counters WHERE id = ?", "count_up")
        sql(conn, "COMMIT")
    except BaseException:
        if conn.in_transaction:
            sql(conn, "ROLLBACK")
        raise
    return rows


def show(conn):
    # 0 where the row itself was lost (an instance dead before Litestream first replicated it).
    return busy(lambda: sql(conn, "SELECT count FROM counters WHERE id = ?", "count_up")) or [(0,)]


ROUTES = {("POST", "/count_up"): count_up, ("GET", "/count"): show}  # config/routes.rb
# Puma serves 3 requests at once and queues the rest; each of its threads holds a database
# connection from Rails' pool meanwhile. Taking one of THREADS open connections is both here: the
# 4th request waits for one, and connections live as long as the app (no open per request).
POOL = queue.Queue()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as Puma keeps k6's connections
    disable_nagle_algorithm = True  # the body follows the headers at once, not after a delayed ACK

    def do_GET(self):
        self.serve("GET")

    def do_POST(self):
        self.serve("POST")

    def serve(self, method):
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        route = ROUTES.get((method, self.path.split("?", 1)[0]))
        rows = None
        if route:
            conn = POOL.get()
            try:
                rows = route(conn)
            except sqlite3.Error as e:
                self.log_error("%s: %s", type(e).__name__, e)
                return self.answer(500, {"status": 500, "error": "Internal Server Error"})
            finally:
                POOL.put(conn)
        if not rows:  # no route, or no row (Rails' find: RecordNotFound)
            return self.answer(404, {"status": 404, "error": "Not Found"})
        self.answer(200, {"count": rows[0][0]})

    def answer(self, status, body):
        data = json.dumps(body, separators=(",", ":")).encode()  # {"count":4856}, as Rails renders it
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_request(self, code="-", size="-"):
        pass  # no line per request: writing it would cost CPU the measurement counts


class Server(ThreadingHTTPServer):
    request_queue_size = 1024  # Puma's backlog; socketserver's 5 drops connections of 20 VUs


def prepare(path):
    conn = connect(path)
    busy(lambda: sql(conn, "BEGIN IMMEDIATE"))
    # db/schema.rb's table as Rails creates it, and db/seeds.rb's row.
    sql(conn, 'CREATE TABLE IF NOT EXISTS "counters" ("id" varchar NOT NULL PRIMARY KEY, '
              '"count" integer DEFAULT 0 NOT NULL)')
    sql(conn, "INSERT OR IGNORE INTO counters (id, count) VALUES ('count_up', 0)")
    sql(conn, "COMMIT")
    conn.close()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (only this one)")
    p.add_argument("--port", type=int, default=3000)
    p.add_argument("--db", required=True, help="the SQLite database file")
    p.add_argument("--prepare", action="store_true", help="create the table and its row, then exit")
    p.add_argument("--gvl", action="store_true", help="one SQLite statement at a time, as Ruby's GVL")
    a = p.parse_args()
    global GVL
    if a.gvl:
        GVL = threading.Lock()
    if a.prepare:
        return prepare(a.db)
    for _ in range(THREADS):
        POOL.put(connect(a.db))
    if ":" in a.host:
        Server.address_family = socket.AF_INET6
    server = Server((a.host, a.port), Handler)
    # shutdown() waits for serve_forever(), which runs in this (the signal's) thread: ask from another.
    stop = lambda *_: threading.Thread(target=server.shutdown).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"python-counter: http://{a.host}:{a.port}, {THREADS} at once{', GVL' if a.gvl else ''}, database {a.db}, "
          f"Python {sys.version.split()[0]}, SQLite {sqlite3.sqlite_version}", file=sys.stderr, flush=True)
    server.serve_forever()
    server.server_close()
    for _ in range(THREADS):  # each connection once its request is done
        POOL.get().close()
    print("python-counter: stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
