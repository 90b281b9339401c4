"""A resumable SQLite store of sweep rows (stdlib ``sqlite3``, write-ahead log).

One row per configuration ``(d, n, beta, eps, points, seed)`` and code hash: the certified
bracket, its certificate kinds and harmonic degree, whether it was re-verified, and the wall and
CPU seconds of the task that computed it. Each finished task's rows are committed in one
transaction as soon as the task returns, so a sweep killed with SIGKILL loses at most the tasks
still in flight: SQLite's write-ahead log (``journal_mode=WAL``, ``synchronous=FULL``) keeps
every committed transaction and leaves the file readable after a crash of the writer.

The code hash (:func:`code_hash`) is the code identity of a row
(:mod:`attnrank_lite.laws.code_identity`): the SHA-256 of the syntax trees, docstrings removed,
of the package modules the row's computation imports. A rerun skips the configurations already
stored under the same hash and recomputes them after that code changed; a docstring, a comment
or a module the computation does not import leaves the hash alone.
"""
from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pandas as pd

from .code_identity import code_identity

__all__ = ["COLUMNS", "KEY", "code_hash", "open_store", "stored_keys", "insert_rows", "record_run",
           "read_store", "read_runs", "insert_certified_rows", "has_certificates", "read_certified_store",
           "stored_rows_with_blobs"]

#: the parameters that identify a configuration (with the code hash)
KEY = ("d", "n", "beta", "eps", "points", "seed")

#: every column of the ``rows`` table, in order
COLUMNS = KEY + ("n_points", "lower", "upper", "lower_kind", "upper_source", "degree", "verified",
                 "wall_s", "cpu_s", "code_hash", "finished_utc")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (
    d INTEGER NOT NULL, n INTEGER NOT NULL, beta REAL NOT NULL, eps REAL NOT NULL,
    points TEXT NOT NULL, seed INTEGER NOT NULL, n_points INTEGER NOT NULL,
    lower INTEGER NOT NULL, upper INTEGER NOT NULL, lower_kind TEXT NOT NULL,
    upper_source TEXT NOT NULL, degree INTEGER, verified INTEGER NOT NULL,
    wall_s REAL NOT NULL, cpu_s REAL NOT NULL, code_hash TEXT NOT NULL, finished_utc TEXT NOT NULL,
    CHECK (0 <= lower AND lower <= upper),
    UNIQUE (d, n, beta, eps, points, seed, code_hash)
);
CREATE TABLE IF NOT EXISTS runs (
    started_utc TEXT NOT NULL, finished_utc TEXT NOT NULL, command TEXT NOT NULL,
    executor TEXT NOT NULL, computed INTEGER NOT NULL, skipped INTEGER NOT NULL,
    wall_s REAL NOT NULL, code_hash TEXT NOT NULL
)
"""


def code_hash() -> str:
    """The code identity of a row (:func:`attnrank_lite.laws.code_identity.code_identity`): the
    SHA-256 (first 16 hex digits) of the docstring-free syntax trees of the modules a row's
    computation imports."""
    return code_identity()


def open_store(path) -> sqlite3.Connection:
    """Open (creating if needed) the store at ``path`` in WAL mode."""
    con = sqlite3.connect(str(path), timeout=30.0)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=FULL")
    con.executescript(_SCHEMA)
    con.commit()
    return con


def stored_keys(con: sqlite3.Connection, code: str) -> set[tuple]:
    """The configurations (tuples in :data:`KEY` order) stored under the code hash ``code``."""
    cur = con.execute(f"SELECT {', '.join(KEY)} FROM rows WHERE code_hash = ?", (code,))
    return {(int(d), int(n), float(b), float(e), str(p), int(s)) for d, n, b, e, p, s in cur}


def insert_rows(con: sqlite3.Connection, rows: list[dict], code: str) -> None:
    """Commit ``rows`` (dicts with the :data:`COLUMNS` but the hash and time) in one transaction."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    vals = [tuple({**r, "code_hash": code, "finished_utc": now}[c] for c in COLUMNS) for r in rows]
    with con:  # one transaction: all rows of the task or none
        con.executemany(f"INSERT OR REPLACE INTO rows ({', '.join(COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(COLUMNS))})", vals)


def record_run(con: sqlite3.Connection, started: float, command: str, executor: str, computed: int,
               skipped: int, wall_s: float, code: str) -> None:
    """Commit one line to the ``runs`` table: a sweep that finished (how, how long, which code)."""
    def utc(t):
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))

    with con:
        con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (utc(started), utc(time.time()), command, executor, computed, skipped, wall_s, code))


def _read(path, query: str, params=None) -> pd.DataFrame:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no sweep store at {path}")
    try:  # read-only: reading never changes the store (a WAL store needs its -shm file for this)
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
        return pd.read_sql_query(query, con, params=params)
    except sqlite3.OperationalError:
        con = sqlite3.connect(str(path), timeout=30.0)
        return pd.read_sql_query(query, con, params=params)
    finally:
        con.close()


def read_runs(path) -> pd.DataFrame:
    """The ``runs`` table: every finished sweep on this store, oldest first."""
    return _read(path, "SELECT * FROM runs ORDER BY started_utc")


def read_store(path, code: str | None = None) -> pd.DataFrame:
    """The stored rows as a table (all code hashes, or only ``code``), sorted by configuration.

    Opened read-only (``mode=ro``) where possible: reading never changes the store.
    """
    q = f"SELECT {', '.join(COLUMNS)} FROM rows" + (" WHERE code_hash = ?" if code else "")
    df = _read(path, q, (code,) if code else None)
    df["verified"] = df["verified"].astype(bool)
    return df.sort_values(list(KEY)).reset_index(drop=True)


# ------------------------------------------------------------------ certificates beside the rows

#: the ``certificates`` table: one blob per row, keyed like the rows (:mod:`.row_certificates`)
_CERTIFICATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS certificates (
    d INTEGER NOT NULL, n INTEGER NOT NULL, beta REAL NOT NULL, eps REAL NOT NULL,
    points TEXT NOT NULL, seed INTEGER NOT NULL, code_hash TEXT NOT NULL, blob BLOB NOT NULL,
    UNIQUE (d, n, beta, eps, points, seed, code_hash)
)
"""


def insert_certified_rows(con: sqlite3.Connection, rows: list[dict], code: str) -> None:
    """Commit ``rows`` and their certificates in one transaction: all of them or none.

    Parameters
    ----------
    con : sqlite3.Connection
        From :func:`open_store`.
    rows : list of dict
        As for :func:`insert_rows`, each with ``certificate`` (bytes,
        :func:`attnrank_lite.laws.row_certificates.certificate_blob`) too.
    code : str
        The code hash the rows are stored under.
    """
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    vals = [tuple({**r, "code_hash": code, "finished_utc": now}[c] for c in COLUMNS) for r in rows]
    blobs = [tuple(r[c] for c in KEY) + (code, sqlite3.Binary(bytes(r["certificate"]))) for r in rows]
    con.execute(_CERTIFICATE_SCHEMA)
    with con:  # one transaction: the rows and their certificates, or nothing
        con.executemany(f"INSERT OR REPLACE INTO rows ({', '.join(COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(COLUMNS))})", vals)
        con.executemany(f"INSERT OR REPLACE INTO certificates ({', '.join(KEY)}, code_hash, blob) "
                        f"VALUES ({', '.join('?' * (len(KEY) + 2))})", blobs)


def has_certificates(path) -> bool:
    """Whether the store at ``path`` has a ``certificates`` table (stores written before it do not)."""
    q = "SELECT COUNT(*) AS k FROM sqlite_master WHERE type = 'table' AND name = 'certificates'"
    return bool(_read(path, q)["k"].iloc[0])


def read_certified_store(path, code: str | None = None) -> pd.DataFrame:
    """:func:`read_store` with the column ``certificate``: each row's blob (bytes), ``None``
    where the row has none (or the store has no ``certificates`` table)."""
    if not has_certificates(path):
        return read_store(path, code).assign(certificate=None)
    on = " AND ".join(f"r.{k} = c.{k}" for k in (*KEY, "code_hash"))
    q = (f"SELECT {', '.join('r.' + c for c in COLUMNS)}, c.blob AS certificate FROM rows r "
         f"LEFT JOIN certificates c ON {on}" + (" WHERE r.code_hash = ?" if code else ""))
    df = _read(path, q, (code,) if code else None)
    df["verified"] = df["verified"].astype(bool)
    df["certificate"] = [None if b is None or (isinstance(b, float) and b != b) else bytes(b)
                         for b in df["certificate"]]
    return df.sort_values(list(KEY)).reset_index(drop=True)


def stored_rows_with_blobs(con: sqlite3.Connection, code: str) -> list[dict]:
    """Rows stored under ``code`` on an open store, each with its ``certificate`` (or ``None``)."""
    con.execute(_CERTIFICATE_SCHEMA)
    on = " AND ".join(f"r.{k} = c.{k}" for k in (*KEY, "code_hash"))
    cols = (*KEY, "n_points", "lower", "upper")
    cur = con.execute(f"SELECT {', '.join('r.' + c for c in cols)}, c.blob FROM rows r "
                      f"LEFT JOIN certificates c ON {on} WHERE r.code_hash = ?", (code,))
    return [{**dict(zip(cols, rec[:-1])), "certificate": None if rec[-1] is None else bytes(rec[-1])}
            for rec in cur]
