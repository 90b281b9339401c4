"""``check_file``: the independent checker's verdict on a certificate file.

Each bracket's lower certificate must prove exactly the claimed lower end, its upper certificate
the claimed upper end (harmonic: the checker's own polynomial space has at most that dimension
and meets ``eps``), and ``lower <= upper``. The first failure is named.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import conditions as C
from .instance import Instance, SphereSpace
from .reader import Refused, read_file

__all__ = ["CheckReport", "check_file"]


@dataclass(frozen=True)
class CheckReport:
    """``ok``, one line (``checked: 28 <= rank_0.25(A) <= 78, n = 4096`` or what failed), ``failing``."""

    ok: bool
    line: str
    failing: str = ""


def _eps(value) -> float:
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise Refused(f"eps {value!r} is not a finite number >= 0")
    return float(value)


def _arr(arrays, name, dtype=None):
    if not isinstance(name, str) or name not in arrays:
        raise Refused(f"no array {name!r}")
    arr = arrays[name]
    if dtype is not None and arr.dtype.str != dtype:
        raise Refused(f"array {name} has dtype {arr.dtype.str}, expected {dtype}")
    return arr


def _lower(inst, c, arrays, eps):
    kind = c.get("kind") if isinstance(c, dict) else None
    if kind in ("cluster-mass", "neumann"):
        f = C.cluster_mass_rank if kind == "cluster-mass" else C.neumann_rank
        return f(inst, _arr(arrays, c.get("rows")), _arr(arrays, c.get("keys")), _arr(arrays, c.get("offsets")), eps)
    if kind == "right-inverse":
        return C.right_inverse_rank(inst, _arr(arrays, c.get("rows")), _arr(arrays, c.get("X")), eps)
    if kind == "norm":
        return C.norm_rank(inst, c.get("rank"), c.get("row"), eps)
    if kind == "frobenius-tail":
        rows = None if c.get("rows") is None else _arr(arrays, c.get("rows"))
        cols = None if c.get("cols") is None else _arr(arrays, c.get("cols"))
        return C.frobenius_rank(inst, c.get("rank"), rows, cols, eps)
    raise Refused(f"unknown lower kind {kind!r}")


def _upper(inst, c, arrays, eps, claimed, spaces):
    kind = c.get("kind") if isinstance(c, dict) else None
    if kind == "subspace":
        dt = {"float32": "<f4", "float64": "<f8"}.get(c.get("factors_dtype"))
        if dt is None:
            raise Refused("factors_dtype must be float32 or float64")
        L = _arr(arrays, c.get("L"), dt).astype(np.float64)
        R = _arr(arrays, c.get("R"), dt).astype(np.float64)
        if L.ndim != 2 or R.ndim != 2:
            return None
        return C.factor_rank(inst, L, R, eps)
    if kind == "harmonic":
        deg = c.get("degree")
        if type(deg) is not int or not 0 <= deg <= 1000 or inst.kind != "attention":
            return None
        if deg not in spaces:
            spaces[deg] = SphereSpace(inst.K, inst.lw, deg).V
        V = spaces[deg]
        if V.shape[1] > claimed:
            return None
        k = C.factor_rank(inst, None, np.ascontiguousarray(V.T), eps, left=lambda Ab: Ab @ V)
        return None if k is None else claimed  # rank <= dim V <= claimed
    raise Refused(f"unknown upper kind {kind!r}")


def _proved(side, *args):
    """The rank ``side(*args)`` proves; ``None`` when it raises a ``ValueError`` (bad data), but a
    :class:`Refused` (a malformed file) propagates."""
    try:
        return side(*args)
    except Refused:
        raise
    except ValueError:
        return None


def check_file(path) -> CheckReport:
    """The checker's verdict on the file at ``path`` (``Refused``, a ``ValueError``, if malformed)."""
    header, arrays = read_file(path)
    try:
        inst = Instance(header.get("instance"), arrays)
    except ValueError as exc:
        raise Refused(f"instance: {exc}") from None
    meta = header["instance"]
    if meta.get("n") != inst.n or meta.get("m") != inst.m:
        raise Refused("instance: n, m differ from the arrays")
    brackets = header.get("brackets")
    if not isinstance(brackets, list) or not brackets:
        raise Refused("no brackets")
    spaces: dict = {}
    clauses = []
    for t, b in enumerate(brackets):
        if not isinstance(b, dict):
            raise Refused(f"bracket {t} is not an object")
        eps = _eps(b.get("eps"))
        lo, up = b.get("lower"), b.get("upper")
        if type(lo) is not int or type(up) is not int:
            raise Refused(f"bracket {t}: lower and upper must be integers")
        where = f"bracket {t} (eps = {eps:g})"
        lc, uc = b.get("lower_certificate"), b.get("upper_certificate")
        if _proved(_lower, inst, lc, arrays, eps) != lo:
            return CheckReport(False, f"{where}: lower side does not prove {lo}", f"{where}: lower side")
        if _proved(_upper, inst, uc, arrays, eps, up, spaces) != up:
            return CheckReport(False, f"{where}: upper side does not prove {up}", f"{where}: upper side")
        if lo > up:
            return CheckReport(False, f"{where}: lower end above upper end", f"{where}: lower side")
        clauses.append(f"{lo} <= rank_{eps:g}(A) <= {up}")
    return CheckReport(True, f"checked: {'; '.join(clauses)}, n = {inst.n}")
