"""A resumable SQLite store (WAL, ``synchronous=FULL``) of sweep rows, one per :data:`KEY` and
code hash, with each row's certificate blob and its points; sweeps share the work by claims."""
from __future__ import annotations

import hashlib
import os
import socket
import sqlite3
import time
import uuid
from pathlib import Path

import numpy as np
import pandas as pd

from .code_identity import code_identity

__all__ = ["COLUMNS", "KEY", "StoreError", "store_error", "code_hash", "open_store", "stored_keys",
           "claim_owner", "claim_rows", "release_claims", "insert_rows", "record_run", "read_store", "read_runs",
           "has_certificates", "stored_rows_with_blobs"]

#: the parameters that identify a configuration (with the code hash)
KEY = ("d", "n", "beta", "eps", "points", "seed")

#: the join of a row and its certificate
_ON = " AND ".join(f"r.{k} = c.{k}" for k in (*KEY, "code_hash"))
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
);
CREATE TABLE IF NOT EXISTS claims (
    d INTEGER NOT NULL, n INTEGER NOT NULL, beta REAL NOT NULL, eps REAL NOT NULL,
    points TEXT NOT NULL, seed INTEGER NOT NULL, code_hash TEXT NOT NULL,
    owner TEXT NOT NULL, claimed_utc TEXT NOT NULL,
    UNIQUE (d, n, beta, eps, points, seed, code_hash)
)
"""


class StoreError(Exception):
    """A store that cannot be opened, read or written (one line); ``filesystem``: the file system refused."""

    def __init__(self, message: str, path, filesystem: bool):
        super().__init__(message)
        self.path = Path(path)
        self.filesystem = filesystem


#: SQLite result codes (primary, the low byte) that the file system, not the file, caused
_FILESYSTEM_CODES = {3: "cannot be accessed (permission denied)",
                     8: "cannot be written (a read-only file or folder)",
                     10: "could not be read or written (an I/O error: a full disk, a file size limit or a failing "
                         "device)",
                     13: "could not be written (the disk is full)"}


def store_error(exc: BaseException, path) -> StoreError:
    """The :class:`StoreError` for a ``sqlite3`` (or pandas) error on ``path``."""
    path = Path(path)
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None and isinstance(exc.__cause__, sqlite3.Error):  # pandas wraps sqlite3's errors
        exc, code = exc.__cause__, getattr(exc.__cause__, "sqlite_errorcode", None)
    primary = None if code is None else code & 0xFF
    if primary in _FILESYSTEM_CODES:
        return StoreError(f"{path} {_FILESYSTEM_CODES[primary]}: {exc}", path, True)
    if path.is_dir():
        return StoreError(f"{path} is a folder, not a SQLite file", path, False)
    if not path.parent.is_dir():
        return StoreError(f"the folder {path.parent} does not exist", path, False)
    if primary == 14:  # SQLITE_CANTOPEN with the folder there
        return StoreError(f"{path} cannot be opened or created (check that it and its folder can be "
                          f"written): {exc}", path, True)
    if primary in (11, 26):  # SQLITE_CORRUPT, SQLITE_NOTADB
        return StoreError(f"{path} is not an intact SQLite file (damaged, truncated or another kind of "
                          f"file): {exc}", path, False)
    return StoreError(f"{path} is not a sweep store: {exc}", path, False)


#: the code identity of a row (:func:`attnrank_lite.laws.code_identity.code_identity`)
code_hash = code_identity


def open_store(path) -> sqlite3.Connection:
    """Open (creating if needed) the store at ``path`` for writing; :class:`StoreError` otherwise."""
    p = Path(path)
    for q in (p, p.parent):  # SQLite opens a read-only file for reading and fails at the first write
        if q.exists() and not os.access(q, os.W_OK):
            raise StoreError(f"{p} cannot be written (a read-only {'file' if q == p else 'folder'})", p, True)
    con = None
    try:
        con = sqlite3.connect(str(path), timeout=30.0)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA synchronous=FULL")
        con.executescript(_SCHEMA)
        con.commit()
        stored_keys(con, "")  # the tables have the columns of a sweep store
        return con
    except sqlite3.Error as exc:
        if con is not None:
            con.close()
        raise store_error(exc, path) from exc


def _key(d, n, beta, eps, points, seed) -> tuple:
    return int(d), int(n), float(beta), float(eps), str(points), int(seed)


def _now(t=None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def stored_keys(con: sqlite3.Connection, code: str) -> set[tuple]:
    """The configurations (tuples in :data:`KEY` order) stored under the code hash ``code``."""
    return {_key(*k) for k in con.execute(f"SELECT {', '.join(KEY)} FROM rows WHERE code_hash = ?", (code,))}


def claim_owner() -> str:
    """A unique name for one sweep: ``host:pid:process start time:random``."""
    import psutil

    return f"{socket.gethostname()}:{os.getpid()}:{psutil.Process().create_time()!r}:{uuid.uuid4().hex[:8]}"


def _owner_alive(owner: str) -> bool:
    """Whether the process of ``owner`` lives on this machine (a WAL store has one machine)."""
    import psutil

    try:
        host, pid, started, _ = owner.rsplit(":", 3)
        return (host == socket.gethostname() and psutil.pid_exists(int(pid))
                and repr(psutil.Process(int(pid)).create_time()) == started)
    except (ValueError, psutil.Error):
        return False


def claim_rows(con: sqlite3.Connection, keys: list[tuple], code: str, owner: str,
               done: set | None = None) -> tuple[list, int]:
    """Claim for ``owner``, in one transaction that drops dead sweeps' claims, the ``keys`` neither
    ``done`` (default: stored) nor claimed: ``(keys claimed, count claimed by running sweeps)``."""
    now = _now()
    con.execute("BEGIN IMMEDIATE")
    try:
        held = {_key(*k): o for *k, o in con.execute(
            f"SELECT {', '.join(KEY)}, owner FROM claims WHERE code_hash = ?", (code,)).fetchall()}
        stale = {o for o in set(held.values()) if not _owner_alive(o)}
        con.executemany("DELETE FROM claims WHERE owner = ?", [(o,) for o in stale])
        busy = {k for k, o in held.items() if o not in stale}
        if done is None:
            done = stored_keys(con, code)
        mine = [k for k in keys if k not in done and k not in busy]
        con.executemany(f"INSERT INTO claims ({', '.join(KEY)}, code_hash, owner, claimed_utc) "
                        f"VALUES ({', '.join('?' * (len(KEY) + 3))})", [(*k, code, owner, now) for k in mine])
        con.commit()
    except BaseException:
        con.rollback()
        raise
    return mine, sum(1 for k in keys if k in busy and k not in done)


def release_claims(con: sqlite3.Connection, owner: str) -> None:
    """Drop the claims of ``owner`` that no row answered (a sweep that stopped early)."""
    with con:
        con.execute("DELETE FROM claims WHERE owner = ?", (owner,))


def insert_rows(con: sqlite3.Connection, rows: list[dict], code: str) -> None:
    """Commit ``rows`` (:data:`COLUMNS` but hash and time; ``certificate`` and ``point_set``
    bytes where they have them) and drop their claims, in one transaction."""
    now = _now()
    vals = [tuple({**r, "code_hash": code, "finished_utc": now}[c] for c in COLUMNS) for r in rows]
    keys = [tuple(r[c] for c in KEY) + (code,) for r in rows]
    blobs = [k + (sqlite3.Binary(bytes(r["certificate"])),) for k, r in zip(keys, rows)
             if r.get("certificate") is not None]
    points = [_point_record(r) for r in rows if r.get("point_set") is not None]
    if blobs or points:
        con.execute(_CERTIFICATE_SCHEMA)
        con.execute(_POINT_SCHEMA)
    with con:  # one transaction: the rows, their certificates and points, or nothing
        if points:
            con.executemany("INSERT OR IGNORE INTO point_sets (points, n_points, d, seed, sha256, npy) "
                            "VALUES (?, ?, ?, ?, ?, ?)", points)
        con.executemany(f"INSERT OR REPLACE INTO rows ({', '.join(COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(COLUMNS))})", vals)
        if blobs:
            con.executemany(f"INSERT OR REPLACE INTO certificates ({', '.join(KEY)}, code_hash, blob) "
                            f"VALUES ({', '.join('?' * (len(KEY) + 2))})", blobs)
        con.executemany(f"DELETE FROM claims WHERE {' AND '.join(f'{c} = ?' for c in KEY)} AND code_hash = ?", keys)


def record_run(con: sqlite3.Connection, started: float, command: str, executor: str, computed: int,
               skipped: int, wall_s: float, code: str) -> None:
    """Commit one line to the ``runs`` table: a sweep that finished (how, how long, which code)."""
    with con:
        con.execute("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (_now(started), _now(), command, executor, computed, skipped, wall_s, code))


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection: ``mode=ro``, or ``immutable=1`` in a read-only folder with no WAL content."""
    uri = path.resolve().as_uri()
    con = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=30.0)
    try:
        con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return con
    except sqlite3.OperationalError as exc:
        con.close()
        wal = path.with_name(path.name + "-wal")
        if (exc.sqlite_errorcode & 0xFF) not in (8, 14) or (wal.is_file() and wal.stat().st_size > 0):
            raise
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, timeout=30.0)


def _read(path, query: str, params=None) -> pd.DataFrame:
    """``query`` on the store ``path``, read-only (``FileNotFoundError``, :class:`StoreError`)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no sweep store at {path}" + (" (a folder)" if path.is_dir() else
                                " (no such file)"))
    con = None
    try:  # read-only: reading never changes the store
        con = _connect_read_only(path)
        return pd.read_sql_query(query, con, params=params)
    except (sqlite3.Error, pd.errors.DatabaseError) as exc:
        raise store_error(exc, path) from exc
    finally:
        if con is not None:
            con.close()


def read_runs(path) -> pd.DataFrame:
    """The ``runs`` table: every finished sweep on this store, oldest first."""
    return _read(path, "SELECT * FROM runs ORDER BY started_utc")


def read_store(path, code: str | None = None, certificates: bool = False) -> pd.DataFrame:
    """The stored rows (of ``code`` if given), sorted; ``certificates``: with ``certificate``, ``point_set``."""
    cert = certificates and has_certificates(path)
    q = (f"SELECT {', '.join('r.' + c for c in COLUMNS)}" + (", c.blob AS certificate" if cert else "")
         + " FROM rows r" + (f" LEFT JOIN certificates c ON {_ON}" if cert else "")
         + (" WHERE r.code_hash = ?" if code else ""))
    df = _read(path, q, (code,) if code else None)
    df["verified"] = df["verified"].astype(bool)
    if certificates:
        df["certificate"] = ([None if b is None or (isinstance(b, float) and b != b) else bytes(b)
                              for b in df["certificate"]] if cert else None)
        df["point_set"] = _point_sets_of(path, df) if cert else None
    return df.sort_values(list(KEY)).reset_index(drop=True)


# ------------------------------------------------------------------ certificates beside the rows

#: one certificate blob per row, keyed like the rows
_CERTIFICATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS certificates (
    d INTEGER NOT NULL, n INTEGER NOT NULL, beta REAL NOT NULL, eps REAL NOT NULL,
    points TEXT NOT NULL, seed INTEGER NOT NULL, code_hash TEXT NOT NULL, blob BLOB NOT NULL,
    UNIQUE (d, n, beta, eps, points, seed, code_hash)
)
"""


#: each point set a certified row was made on, once, named by the sha256 of its float64 bytes
_POINT_SCHEMA = """
CREATE TABLE IF NOT EXISTS point_sets (
    points TEXT NOT NULL, n_points INTEGER NOT NULL, d INTEGER NOT NULL, seed INTEGER NOT NULL,
    sha256 TEXT NOT NULL, npy BLOB NOT NULL,
    UNIQUE (points, n_points, d, seed, sha256)
)
"""


def _point_record(row: dict) -> tuple:
    from .row_certificates import npy_array

    X = npy_array(row["point_set"])
    sha = hashlib.sha256(np.ascontiguousarray(X).tobytes()).hexdigest()
    return (str(row["points"]), int(row["n_points"]), int(row["d"]), int(row["seed"]), sha,
            sqlite3.Binary(bytes(row["point_set"])))


def _has_table(path, name: str) -> bool:
    q = "SELECT COUNT(*) AS k FROM sqlite_master WHERE type = 'table' AND name = ?"
    return bool(_read(path, q, (name,))["k"].iloc[0])


def has_certificates(path) -> bool:
    """Whether the store at ``path`` has a ``certificates`` table (stores written before it do not)."""
    return _has_table(path, "certificates")


def _point_sets_of(path, df: pd.DataFrame) -> list:
    """Per row of ``df``, the stored ``.npy`` points its certificate names, or ``None``."""
    if not _has_table(path, "point_sets"):
        return [None] * len(df)
    sets = {(str(p), int(n), int(d), int(s), str(h)): bytes(b) for p, n, d, s, h, b in
            _read(path, "SELECT points, n_points, d, seed, sha256, npy FROM point_sets").itertuples(index=False)}
    from ..engine.certificate_io import CertificateFileError
    from .row_certificates import blob_header

    out = []
    for r, blob in zip(df.itertuples(index=False), df["certificate"]):
        try:
            head = blob_header(blob) if blob is not None else None
            sha = head["arrays"][head["instance"]["Q"]]["sha256"] if head else None
        except (CertificateFileError, KeyError, TypeError):
            sha = None
        out.append(sets.get((str(r.points), int(r.n_points), int(r.d), int(r.seed), str(sha))))
    return out


def stored_rows_with_blobs(con: sqlite3.Connection, code: str) -> list[dict]:
    """Rows stored under ``code``, each with its ``certificate`` (or ``None``)."""
    con.execute(_CERTIFICATE_SCHEMA)
    cols = (*KEY, "n_points", "lower", "upper")
    cur = con.execute(f"SELECT {', '.join('r.' + c for c in cols)}, c.blob FROM rows r "
                      f"LEFT JOIN certificates c ON {_ON} WHERE r.code_hash = ?", (code,))
    return [{**dict(zip(cols, rec[:-1])), "certificate": None if rec[-1] is None else bytes(rec[-1])} for rec in cur]
