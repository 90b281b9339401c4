r"""The certificate of a stored sweep row: a certificate file (``SPEC.md`` section 6) on the
recipe ``Q = X``, ``K = null``, ``beta`` less its member ``Q`` (the header keeps its sha256; the
points are put back from the store, else rebuilt), rechecked from the store alone."""
from __future__ import annotations

import io
import json
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..engine.certificate_file import CertificateFileError, verify_file
from ..engine.certificate_io import FORMAT, MAX_HEADER_BYTES, save_brackets
from ..engine.threads import single_threaded
from .geometry import random_sphere, well_spread_sphere

__all__ = ["POINTS_MEMBER", "point_set", "npy_bytes", "npy_array", "certificate_blob", "blob_header", "claims_match",
           "RowVerdict", "verify_row", "row_label", "recheck_rows"]

#: the certificate-file member left out of a stored blob (the points, rebuilt from the row)
POINTS_MEMBER = "Q"


def point_set(points: str, n: int, d: int, seed: int) -> np.ndarray:
    """The ``n x d`` point set of a sweep row (``"well-spread"`` or ``"random"``), unit rows."""
    if points == "well-spread":
        return well_spread_sphere(n, d, seed=seed)
    if points == "random":
        return random_sphere(n, d, seed=seed)
    raise ValueError(f"point set {points!r} is not one of well-spread, random")


def npy_bytes(arr: np.ndarray) -> bytes:
    """``arr`` as the bytes of a ``.npy`` file (no pickle)."""
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(arr), allow_pickle=False)
    return buf.getvalue()


def npy_array(data: bytes) -> np.ndarray:
    """The array of ``.npy`` bytes, read with ``allow_pickle=False`` (``ValueError`` otherwise)."""
    return np.lib.format.read_array(io.BytesIO(bytes(data)), allow_pickle=False)


def _rezip(data: bytes, drop: str | None = None, add: tuple[str, np.ndarray] | None = None) -> bytes:
    """The zip ``data`` without the member ``drop.npy``, with ``add`` (name, array) as ``name.npy``."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, \
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if add is not None and info.filename == f"{add[0]}.npy":
                raise CertificateFileError(f"the stored blob already holds a member {add[0]}.npy")
            if drop is None or info.filename != f"{drop}.npy":
                dst.writestr(info.filename, src.read(info), compress_type=zipfile.ZIP_DEFLATED)
        if add is not None:
            dst.writestr(f"{add[0]}.npy", npy_bytes(add[1]))
    return out.getvalue()


def certificate_blob(bracket, X: np.ndarray, beta: float) -> bytes:
    """The file of ``bracket`` (verified on saving) on the recipe ``Q = X``, ``beta``, less ``Q``."""
    with tempfile.TemporaryDirectory(prefix="attnrank-row-") as tmp:
        path = save_brackets(os.path.join(tmp, "row.npz"), bracket, Q=X, beta=float(beta))
        with open(path, "rb") as fh:
            data = fh.read()
    return _rezip(data, drop=POINTS_MEMBER)


def blob_header(blob: bytes) -> dict:
    """The JSON header of a stored blob (no array read); ``CertificateFileError`` (one line) else."""
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            info = zf.getinfo("header.npy")
            if info.file_size > MAX_HEADER_BYTES + 10000:
                raise CertificateFileError("the blob's header member is larger than the format allows")
            with zf.open(info) as fp:
                header = np.lib.format.read_array(fp, allow_pickle=False)
        doc = json.loads(header.tobytes().decode("utf-8"))
    except CertificateFileError:
        raise
    except KeyError:
        raise CertificateFileError("the blob has no header member") from None
    except Exception as exc:
        raise CertificateFileError(f"the blob is not a readable certificate ({type(exc).__name__})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise CertificateFileError(f"the blob is not an {FORMAT} file")
    return doc


def claims_match(row, header: dict) -> str:
    """``""`` when the header is the row's recipe with one bracket of its eps and ends, else what differs."""
    inst = header.get("instance")
    if not isinstance(inst, dict) or inst.get("kind") != "attention" or inst.get("K") is not None:
        return "its instance is not the self-attention recipe of a sweep row"
    q = header.get("arrays", {}).get(inst.get("Q"), {}) if isinstance(header.get("arrays"), dict) else {}
    n, d = int(row["n_points"]), int(row["d"])
    if not isinstance(q, dict) or q.get("shape") != [n, d]:
        return f"its points have shape {q.get('shape') if isinstance(q, dict) else None}, the row's {[n, d]}"
    if inst.get("beta") != float(row["beta"]):
        return f"it is for beta = {inst.get('beta')}, the row's is {float(row['beta']):g}"
    if inst.get("n") != n or inst.get("m") != n:
        return f"it is for n = {inst.get('n')}, the row's is {n}"
    brackets = header.get("brackets")
    if not isinstance(brackets, list) or len(brackets) != 1 or not isinstance(brackets[0], dict):
        return "it does not hold exactly one bracket"
    b = brackets[0]
    if b.get("eps") != float(row["eps"]):
        return f"it is for eps = {b.get('eps')}, the row's is {float(row['eps']):g}"
    if (b.get("lower"), b.get("upper")) != (int(row["lower"]), int(row["upper"])):
        return (f"it claims [{b.get('lower')}, {b.get('upper')}], the row says "
                f"[{int(row['lower'])}, {int(row['upper'])}]")
    return ""


@dataclass(frozen=True)
class RowVerdict:
    """Outcome of :func:`verify_row`: ``ok``, ``line`` (the verdict or what failed), ``seconds``."""

    ok: bool
    line: str
    seconds: float


def verify_row(row, blob, second=None) -> RowVerdict:
    """Recheck one stored row: its blob's claims against the row, then both sides of the rebuilt
    file; ``second(path, ok)``: a second opinion, ``""`` when it agrees, else why it fails."""
    t0 = time.perf_counter()

    def fail(why):
        return RowVerdict(False, f"not verified: {why}", time.perf_counter() - t0)

    if blob is None or (isinstance(blob, float) and np.isnan(blob)):
        return fail("the row has no stored certificate")
    try:
        header = blob_header(bytes(blob))
    except CertificateFileError as exc:
        return fail(f"its certificate is refused: {exc}")
    why = claims_match(row, header)
    if why:
        return fail(f"its certificate does not match the row: {why}")
    stored = row.get("point_set")
    try:
        if isinstance(stored, (bytes, bytearray, memoryview)):  # the points the store keeps
            X = npy_array(stored)
        else:  # a store without its point sets: rebuilt as the task built them
            with single_threaded():
                X = point_set(str(row["points"]), int(row["n_points"]), int(row["d"]), int(row["seed"]))
        data = _rezip(bytes(blob), add=(POINTS_MEMBER, X))
    except (ValueError, zipfile.BadZipFile) as exc:
        return fail(f"its certificate is refused: {exc}".replace("\n", " "))
    with tempfile.TemporaryDirectory(prefix="attnrank-row-") as tmp:
        path = os.path.join(tmp, "row.npz")
        with open(path, "wb") as fh:
            fh.write(data)
        try:
            verdict = verify_file(path)
        except CertificateFileError as exc:
            if f"array {POINTS_MEMBER}: sha256 mismatch" in str(exc):
                if isinstance(stored, (bytes, bytearray, memoryview)):
                    return fail("the points the store keeps for this row are not those the certificate "
                                "was made on (sha256)")
                return fail(f"the points rebuilt from (points = {row['points']}, n = {int(row['n_points'])}, "
                            f"d = {int(row['d'])}, seed = {int(row['seed'])}) differ from those the "
                            "certificate was made on (sha256)")
            return fail(f"its certificate is refused: {exc}")
        other = second(path, verdict.ok) if second is not None else ""
    if other:
        return fail(other)
    if not verdict.ok:
        return RowVerdict(False, verdict.line, time.perf_counter() - t0)
    return RowVerdict(True, verdict.line + ("; second opinion agrees" if second is not None else ""),
                      time.perf_counter() - t0)


def row_label(row) -> str:
    """``d=3 n=400 beta=4 eps=0.25 well-spread seed=0 [8, 11]``."""
    return (f"d={int(row['d'])} n={int(row['n'])} beta={float(row['beta']):g} eps={float(row['eps']):g} "
            f"{row['points']} seed={int(row['seed'])} [{int(row['lower'])}, {int(row['upper'])}]")


def recheck_rows(rows: pd.DataFrame, on_row=None, second=None) -> pd.DataFrame:
    """:func:`verify_row` per row, then ``on_row(label, verdict)``: ``row``, ``ok``, ``line``, ``seconds``."""
    out = []
    for _, r in rows.iterrows():
        blob = r.get("certificate")
        v = verify_row(r, blob, second)
        label = row_label(r)
        if on_row is not None:
            on_row(label, v)
        out.append({"row": label, "ok": v.ok, "line": v.line, "seconds": v.seconds,
                    "blob_bytes": len(blob) if isinstance(blob, (bytes, bytearray, memoryview)) else 0})
    return pd.DataFrame(out, columns=["row", "ok", "line", "seconds", "blob_bytes"])
