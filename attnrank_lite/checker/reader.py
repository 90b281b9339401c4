"""The independent checker's own reader of certificate files, sharing no code with
:mod:`attnrank_lite.engine.certificate_io`. Every refusal is a :class:`Refused`; nothing in a file
is executed (no pickles, dtypes among :data:`ALLOWED`, sizes checked before any array is read).
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import re
import zipfile

import numpy as np

__all__ = ["Refused", "ALLOWED", "read_file", "LIMIT_BYTES"]

#: the dtypes a member may have
ALLOWED = {"<f8", "<f4", "<i8", "|u1"}
#: the largest total of a file's arrays (bytes)
LIMIT_BYTES = 4 * 2**30
_MEMBER = re.compile(r"^([A-Za-z][A-Za-z0-9_]{0,63})\.npy$")


class Refused(ValueError):
    """The file is not a well-formed certificate file (one line)."""


def _npy_header(fp, name):
    version = np.lib.format.read_magic(fp)
    reader = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0,
              (3, 0): np.lib.format.read_array_header_2_0}.get(version)
    if reader is None:
        raise Refused(f"array {name}: .npy version {version} unknown")
    shape, fortran, dtype = reader(fp, max_header_size=10000)
    if dtype.hasobject or dtype.str not in ALLOWED or fortran:
        raise Refused(f"array {name}: dtype {dtype.str} (or its layout) refused")
    return tuple(int(s) for s in shape), dtype


def _reject_constant(name):
    raise Refused(f"header holds the non-finite number {name}")


def read_file(path, limit_bytes: int = LIMIT_BYTES) -> tuple[dict, dict]:
    """``(header, arrays)`` of a certificate file after its structural and sha256 checks."""
    with open(path, "rb") as fh:
        data = fh.read(limit_bytes + 2**21)
    if len(data) > limit_bytes + 2**20:
        raise Refused("file too large")
    if not data.startswith(b"PK"):
        raise Refused("not a zip (.npz) archive")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        names = {}
        total = 0
        for info in zf.infolist():
            match = _MEMBER.match(info.filename)
            if match is None or match.group(1) in names:
                raise Refused(f"archive member {info.filename!r} refused")
            with zf.open(info) as fp:
                shape, dtype = _npy_header(fp, match.group(1))
            nbytes = math.prod(shape) * dtype.itemsize
            total += nbytes
            if total > limit_bytes or info.file_size > nbytes + 10000:
                raise Refused(f"array {match.group(1)}: too large")
            names[match.group(1)] = info.filename
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in names}
    except Refused:
        raise
    except Exception as exc:  # a corrupt archive may fail in many ways; all are refusals
        raise Refused(f"unreadable archive ({type(exc).__name__})") from None
    blob = arrays.pop("header", None)
    if blob is None or blob.dtype.str != "|u1" or blob.ndim != 1:
        raise Refused("no header")
    try:
        header = json.loads(blob.tobytes().decode("utf-8"), parse_constant=_reject_constant)
    except Refused:
        raise
    except Exception:
        raise Refused("header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != "attnrank-certificate" \
            or header.get("package") != "attnrank_lite" \
            or type(header.get("version")) is not int or header["version"] != 1:
        raise Refused("not a version-1 attnrank-certificate file")
    table = header.get("arrays")
    if not isinstance(table, dict) or set(table) != set(arrays):
        raise Refused("the header's table of arrays does not match the archive")
    for name, arr in arrays.items():
        meta = table[name]
        if not isinstance(meta, dict) or meta.get("dtype") != arr.dtype.str or meta.get("shape") != list(arr.shape):
            raise Refused(f"array {name}: dtype or shape differs from the header")
        if meta.get("sha256") != hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest():
            raise Refused(f"array {name}: sha256 mismatch")
    return header, arrays
