"""Certificates as files (``SPEC.md`` section 6): a numpy ``.npz`` archive of one JSON ``header``
(UTF-8 bytes as a ``uint8`` vector) and the arrays it names, the instance a matrix or a recipe
rebuilt with :func:`~attnrank_lite.engine.attention.softmax_attention`; subspace factors in
float32 when the rounded factors still verify, a harmonic upper certificate by its degree alone.

Reading (:func:`read_certificate_file`) executes nothing: the zip directory and each ``.npy``
header are checked (names, dtypes among :data:`DTYPES`, sizes) before any array is allocated,
arrays are loaded with ``allow_pickle=False`` and their sha256 compared; every refusal is a
one-line :class:`CertificateFileError`."""
from __future__ import annotations

import hashlib
import importlib.metadata
import io
import json
import math
import os
import re
import tempfile
import zipfile
from dataclasses import dataclass

import numpy as np

from .attention import softmax_attention
from .certificates import ClusterMassCertificate, FrobeniusTailCertificate, NormCertificate, SubspaceCertificate
from .checks import eps_value, finite_nonnegative, real_matrix
from .checks import log_weights as _check_log_weights
from .harmonic import SPHERE_TOL, HarmonicBasis, HarmonicCertificate
from .neumann import NeumannCertificate
from .right_inverse import RightInverseCertificate

__all__ = [
    "CertificateFileError", "CertificateFile", "FORMAT", "VERSION", "DTYPES", "MAX_ARRAY_BYTES",
    "MAX_TOTAL_BYTES", "save_brackets", "save_brackets_in_folder", "BUDGET_FILE", "SKIPPED_FILE",
    "read_certificate_file", "file_certificates",
]

#: the ``format`` field of every certificate file
FORMAT = "attnrank-certificate"
#: the format version this package writes and reads
VERSION = 1
#: the only dtypes a member may have (little-endian float64/float32, int64, uint8 for the header)
DTYPES = ("<f8", "<f4", "<i8", "|u1")
#: largest array a file may hold (bytes), and largest total of its arrays
MAX_ARRAY_BYTES = 2 * 2**30
MAX_TOTAL_BYTES = 4 * 2**30
#: largest JSON header (bytes)
MAX_HEADER_BYTES = 2**20
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")


class CertificateFileError(ValueError):
    """A certificate file refused: malformed, tampered, of another version or too large (one line)."""


def _package_version() -> str:
    try:
        return importlib.metadata.version("attnrank-lite")
    except Exception:  # pragma: no cover - not installed
        return "unknown"


def _sha256(arr: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(arr).tobytes()).hexdigest()


def _add(arrays: dict, name: str, arr) -> str:
    """Store ``arr`` under ``name`` for writing; returns the name."""
    arr = np.ascontiguousarray(arr)
    if arr.dtype.str not in DTYPES:
        raise TypeError(f"array {name} has dtype {arr.dtype.str}, not one of {DTYPES}")
    arrays[name] = arr
    return name


def _instance_matrix(instance: dict, arrays: dict) -> np.ndarray:
    if instance["kind"] == "matrix":
        return arrays[instance["A"]]
    K = arrays[instance["K"]] if instance["K"] is not None else None
    lw = arrays[instance["log_weights"]] if instance["log_weights"] is not None else None
    return softmax_attention(arrays[instance["Q"]], K, instance["beta"], lw)


def _harmonic_keys(instance: dict, arrays: dict):
    """The keys and log-weights of a recipe whose keys lie on the unit sphere (else ``None``)."""
    if instance["kind"] != "attention":
        return None
    K = arrays[instance["K"] if instance["K"] is not None else instance["Q"]]
    if K.shape[1] < 2 or not np.all(np.abs(np.linalg.norm(K, axis=1) - 1) <= SPHERE_TOL):
        return None
    lw = arrays[instance["log_weights"]] if instance["log_weights"] is not None else None
    return K, lw


def _groups_entry(w: dict, prefix: str, cert) -> dict:
    rows = np.asarray(cert.rows, dtype=np.int64).reshape(-1)
    groups = [np.asarray(g, dtype=np.int64).reshape(-1) for g in cert.groups]
    keys = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum([g.size for g in groups], dtype=np.int64)]).astype(np.int64)
    return {"rows": _add(w, f"{prefix}_rows", rows), "keys": _add(w, f"{prefix}_keys", keys),
            "offsets": _add(w, f"{prefix}_offsets", offsets)}


def _lower_entry(w: dict, prefix: str, cert) -> dict:
    kind = type(cert)
    if kind in (ClusterMassCertificate, NeumannCertificate):
        return {"kind": cert.kind, **_groups_entry(w, prefix, cert)}
    if kind is FrobeniusTailCertificate:
        entry = {"kind": "frobenius-tail", "rank": int(cert.rank), "rows": None, "cols": None}
        for part in ("rows", "cols"):
            idx = getattr(cert, part)
            if idx is not None:
                entry[part] = _add(w, f"{prefix}_{part}", np.asarray(idx, dtype=np.int64).reshape(-1))
        return entry
    if kind is NormCertificate:
        return {"kind": "norm", "rank": int(cert.rank), "row": int(cert.row)}
    if kind is RightInverseCertificate:
        return {"kind": "right-inverse", "rows": _add(w, f"{prefix}_rows", np.asarray(cert.rows, dtype=np.int64)),
                "X": _add(w, f"{prefix}_X", np.asarray(cert.X, dtype=np.float64))}
    raise TypeError(f"no file format for a lower certificate of type {kind.__name__}")


def _upper_entry(w: dict, prefix: str, cert, A: np.ndarray, eps: float, harmonic, bases: dict,
                 factors: str) -> dict:
    if type(cert) not in (SubspaceCertificate, HarmonicCertificate):
        raise TypeError(f"no file format for an upper certificate of type {type(cert).__name__}")
    if type(cert) is HarmonicCertificate and harmonic is not None:
        deg = int(cert.degree)
        rebuilt = _harmonic_certificate(A, harmonic, deg, bases)
        if rebuilt.rank == cert.rank and rebuilt.certified_rank(A, eps) == cert.rank:
            return {"kind": "harmonic", "degree": deg, "source": str(cert.source)}
    L = np.asarray(cert.L, dtype=np.float64)
    R = np.asarray(cert.R, dtype=np.float64)
    dtype = np.float64
    if factors == "float32":
        L32, R32 = L.astype(np.float32), R.astype(np.float32)
        if np.isfinite(L32).all() and np.isfinite(R32).all() and SubspaceCertificate(
                L32.astype(np.float64), R32.astype(np.float64)).certified_rank(A, eps) == cert.rank:
            L, R, dtype = L32, R32, np.float32
    return {"kind": "subspace", "source": str(cert.source), "factors_dtype": np.dtype(dtype).name,
            "L": _add(w, f"{prefix}_L", L), "R": _add(w, f"{prefix}_R", R)}


def _harmonic_certificate(A, keys, degree: int, bases: dict) -> HarmonicCertificate:
    """``B = (A V) V^T`` with ``V`` the engine's basis of degree ``<= degree`` on the keys."""
    if "basis" not in bases:
        bases["basis"] = HarmonicBasis(*keys)
    V = bases["basis"].columns(degree)
    return HarmonicCertificate(A @ V, np.ascontiguousarray(V.T), source=f"harmonic degree {degree}",
                               degree=degree)


def save_brackets(path, brackets, *, A=None, Q=None, K=None, beta=None, log_weights=None,
                  factors: str = "float32") -> str:
    """Write brackets of one instance to a certificate file (replaced atomically), after verifying them
    (``ValueError`` and nothing written when one does not verify, or the arguments are inconsistent);
    returns the path.

    Parameters
    ----------
    path : str or os.PathLike
    brackets : RankBracket or sequence of RankBracket
        Brackets of the same matrix.
    A : array_like, shape (n, m), optional
        The matrix, or else the recipe ``Q``, ``K`` (``None``: self-attention), ``beta``, ``log_weights``.
    Q, K, beta, log_weights : optional
    factors : {"float32", "float64"}
        float32 when the rounded factors still certify the same rank."""
    brackets = [brackets] if hasattr(brackets, "lower_certificate") else list(brackets)
    if not brackets or not all(type(b).__name__ == "RankBracket" for b in brackets):
        raise TypeError("brackets must be a RankBracket or a non-empty sequence of them")
    if factors not in ("float32", "float64"):
        raise ValueError(f"factors must be 'float32' or 'float64', got {factors!r}")
    w: dict = {}
    if (A is None) == (Q is None):
        raise ValueError("give either the matrix A or the recipe Q (with beta, optional K, log_weights)")
    if A is not None:
        if K is not None or beta is not None or log_weights is not None:
            raise ValueError("K, beta and log_weights belong to the recipe; with A give none of them")
        instance = {"kind": "matrix", "A": _add(w, "A", real_matrix("A", A))}
    else:
        if beta is None:
            raise ValueError("the recipe needs beta")
        Qm = real_matrix("Q", Q)
        Km = None if K is None else real_matrix("K", K)
        m = Qm.shape[0] if Km is None else Km.shape[0]
        instance = {"kind": "attention", "Q": _add(w, "Q", Qm), "K": None if Km is None else _add(w, "K", Km),
                    "beta": finite_nonnegative("beta", beta),
                    "log_weights": None if log_weights is None else
                    _add(w, "log_weights", _check_log_weights(log_weights, m))}
    Am = _instance_matrix(instance, w)
    n, m = Am.shape
    instance.update(n=int(n), m=int(m))
    harmonic = _harmonic_keys(instance, w)
    bases: dict = {}
    entries = []
    for t, b in enumerate(brackets):
        eps = eps_value(b.eps)
        if not b.verify(Am, eps):
            raise ValueError(f"bracket {t} (eps = {eps:g}, [{b.lower}, {b.upper}]) does not verify on the "
                             "instance given; nothing was written")
        entries.append({"eps": eps, "lower": int(b.lower), "upper": int(b.upper),
                        "lower_certificate": _lower_entry(w, f"b{t}_lower", b.lower_certificate),
                        "upper_certificate": _upper_entry(w, f"b{t}_upper", b.upper_certificate, Am, eps,
                                                          harmonic, bases, factors)})
    header = {"format": FORMAT, "version": VERSION, "package": "attnrank_lite",
              "package_version": _package_version(), "instance": instance, "brackets": entries,
              "arrays": {name: {"dtype": a.dtype.str, "shape": list(a.shape), "sha256": _sha256(a)}
                         for name, a in w.items()}}
    blob = np.frombuffer(json.dumps(header, allow_nan=False, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".cert-", suffix=".npz", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, header=blob, **w)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


#: file in a certificate folder holding its byte budget (written by whoever made the folder)
BUDGET_FILE = ".budget"
#: file in a certificate folder counting the instances not written once the budget was spent
SKIPPED_FILE = ".skipped"


def save_brackets_in_folder(folder, stem: str, brackets, **instance) -> str | None:
    """:func:`save_brackets` to ``folder/stem.npz`` and its path, unless the ``.npz`` files under the
    folder exceed the bytes in its (or its parent's) :data:`BUDGET_FILE`: then None, and the stem is
    added to :data:`SKIPPED_FILE`."""
    folder = os.fspath(folder)
    parent = os.path.dirname(os.path.abspath(folder))
    # the budget is the folder's own, or its parent's (sweeps write one subfolder per family)
    root = parent if (not os.path.exists(os.path.join(folder, BUDGET_FILE))
                      and os.path.exists(os.path.join(parent, BUDGET_FILE))) else folder
    budget_path = os.path.join(root, BUDGET_FILE)
    os.makedirs(folder, exist_ok=True)
    if os.path.exists(budget_path):
        with open(budget_path) as fh:
            budget = int(fh.read().strip() or 0)
        spent = sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(root)
                    for f in files if f.endswith(".npz"))
        if spent > budget:
            with open(os.path.join(root, SKIPPED_FILE), "a") as fh:
                fh.write(f"{stem}\n")
            return None
    return save_brackets(os.path.join(folder, f"{stem}.npz"), brackets, **instance)


@dataclass(frozen=True)
class CertificateFile:
    """A certificate file after every structural check: its header and arrays (by name)."""

    path: str
    header: dict
    arrays: dict

    @property
    def instance(self) -> dict:
        return self.header["instance"]

    def matrix(self) -> np.ndarray:
        """The instance's matrix: the stored ``A`` or the recipe rebuilt by ``softmax_attention``."""
        return _instance_matrix(self.instance, self.arrays)


def _refuse(msg: str):
    raise CertificateFileError(msg)


def _member_header(fp, name: str):
    """``(shape, dtype)`` of a ``.npy`` member from its header alone (no array read)."""
    fmt = np.lib.format
    try:
        version = fmt.read_magic(fp)
        if version not in ((1, 0), (2, 0), (3, 0)):
            _refuse(f"array {name}: unknown .npy version {version}")
        read = fmt.read_array_header_1_0 if version == (1, 0) else fmt.read_array_header_2_0
        shape, fortran, dtype = read(fp, max_header_size=10000)
    except CertificateFileError:
        raise
    except Exception as exc:
        _refuse(f"array {name}: unreadable .npy header ({type(exc).__name__}: {exc})".replace("\n", " "))
    if dtype.hasobject or dtype.str not in DTYPES:
        _refuse(f"array {name}: dtype {dtype.str} refused (allowed: {', '.join(DTYPES)}; never objects or pickles)")
    if fortran:
        _refuse(f"array {name}: Fortran order refused")
    return tuple(int(s) for s in shape), dtype


def read_certificate_file(path, *, max_array_bytes: int = MAX_ARRAY_BYTES,
                          max_total_bytes: int = MAX_TOTAL_BYTES) -> CertificateFile:
    """Read and check a certificate file's structure (nothing is verified yet); a one-line
    :class:`CertificateFileError` names what is refused."""
    path = os.fspath(path)
    with open(path, "rb") as fh:
        data = fh.read(max_total_bytes + MAX_HEADER_BYTES + 1)
    if len(data) > max_total_bytes + MAX_HEADER_BYTES:
        _refuse(f"file larger than {max_total_bytes + MAX_HEADER_BYTES} bytes")
    if data[:2] != b"PK":
        _refuse("not an .npz certificate file (no zip archive; pickles and other formats are refused)")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
        infos = zf.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError, OSError) as exc:
        _refuse(f"truncated or corrupt zip archive ({exc})")
    names = [i.filename for i in infos]
    if len(set(names)) != len(names):
        _refuse("a member name is repeated in the archive")
    members = {}
    for info in infos:
        if not info.filename.endswith(".npy") or not _NAME.match(info.filename[:-4]):
            _refuse(f"unexpected archive member {info.filename!r}")
        if info.flag_bits & 0x1:
            _refuse(f"encrypted member {info.filename!r}")
        members[info.filename[:-4]] = info
    if "header" not in members:
        _refuse("no header member")
    total = 0
    shapes = {}
    try:
        for name, info in members.items():
            with zf.open(info) as fp:
                shape, dtype = _member_header(fp, name)
            if any(s < 0 for s in shape):
                _refuse(f"array {name}: negative dimension")
            nbytes = math.prod(shape) * dtype.itemsize
            limit = MAX_HEADER_BYTES if name == "header" else max_array_bytes
            if nbytes > limit:
                _refuse(f"array {name} of shape {shape} ({nbytes} bytes) is larger than the limit {limit}")
            if info.file_size > nbytes + 10000:
                _refuse(f"array {name}: member larger than its declared shape")
            total += nbytes
            if total > max_total_bytes:
                _refuse(f"arrays larger than {max_total_bytes} bytes in total")
            shapes[name] = (shape, dtype)
        if shapes["header"][1].str != "|u1" or len(shapes["header"][0]) != 1:
            _refuse("the header member must be a uint8 vector")
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            loaded = {name: npz[name] for name in members}
    except CertificateFileError:
        raise
    except (zipfile.BadZipFile, ValueError, EOFError, OSError, KeyError) as exc:
        _refuse(f"truncated or corrupt archive ({type(exc).__name__}: {exc})".replace("\n", " "))
    header = _parse_header(loaded.pop("header"))
    arrays = _check_arrays(header, loaded)
    _check_header(header, arrays)
    return CertificateFile(path, header, arrays)


def _no_constant(name):
    _refuse(f"header: non-finite number {name} refused")


def _parse_header(blob: np.ndarray) -> dict:
    try:
        text = blob.tobytes().decode("utf-8")
        header = json.loads(text, parse_constant=_no_constant)
    except CertificateFileError:
        raise
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        _refuse(f"header is not valid JSON ({type(exc).__name__})")
    if not isinstance(header, dict):
        _refuse("header is not a JSON object")
    if header.get("format") != FORMAT:
        _refuse(f"not an {FORMAT} file (format {header.get('format')!r})")
    version = header.get("version")
    if type(version) is not int or version != VERSION:
        _refuse(f"unsupported format version {version!r} (this package reads version {VERSION})")
    return header


def _keys(obj, where: str, required: set, optional: set = frozenset()) -> dict:
    if not isinstance(obj, dict):
        _refuse(f"header: {where} must be an object")
    missing = required - obj.keys()
    extra = obj.keys() - required - optional
    if missing:
        _refuse(f"header: {where} lacks {sorted(missing)}")
    if extra:
        _refuse(f"header: {where} has unknown fields {sorted(extra)}")
    return obj


def _int(value, where: str, minimum: int = 0) -> int:
    if type(value) is not int or value < minimum:
        _refuse(f"header: {where} must be an integer >= {minimum}, got {value!r}")
    return value


def _float(value, where: str) -> float:
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        _refuse(f"header: {where} must be a finite number >= 0, got {value!r}")
    return float(value)


def _check_arrays(header: dict, loaded: dict) -> dict:
    table = header.get("arrays")
    if not isinstance(table, dict):
        _refuse("header: arrays must be an object")
    if set(table) != set(loaded):
        _refuse(f"the archive's arrays {sorted(loaded)} differ from the header's {sorted(table)}")
    for name, arr in loaded.items():
        meta = _keys(table[name], f"arrays.{name}", {"dtype", "shape", "sha256"})
        if meta["dtype"] != arr.dtype.str or meta["shape"] != list(arr.shape):
            _refuse(f"array {name}: dtype/shape {arr.dtype.str} {list(arr.shape)} differ from the header's "
                    f"{meta['dtype']} {meta['shape']}")
        if meta["sha256"] != _sha256(arr):
            _refuse(f"array {name}: sha256 mismatch (the array is not the one the header describes)")
    return loaded


def _array(arrays: dict, name, where: str, dtype: str, ndim: int) -> str:
    if not isinstance(name, str) or name not in arrays:
        _refuse(f"header: {where} names no array of the file ({name!r})")
    arr = arrays[name]
    if arr.dtype.str not in (dtype if isinstance(dtype, tuple) else (dtype,)) or arr.ndim != ndim:
        _refuse(f"array {name} ({where}) must be {ndim}-D {dtype}, got {arr.ndim}-D {arr.dtype.str}")
    return name


def _check_header(header: dict, arrays: dict) -> None:
    """Every field of the header has its expected type and names arrays of the right kind."""
    _keys(header, "the header", {"format", "version", "package", "package_version", "instance", "brackets",
                                 "arrays"})
    if not isinstance(header["package_version"], str) or header["package"] != "attnrank_lite":
        _refuse("header: package / package_version malformed")
    inst = header["instance"]
    if not isinstance(inst, dict) or inst.get("kind") not in ("matrix", "attention"):
        _refuse("header: instance kind must be 'matrix' or 'attention'")
    if inst["kind"] == "matrix":
        _keys(inst, "instance", {"kind", "A", "n", "m"})
        A = arrays[_array(arrays, inst["A"], "instance.A", "<f8", 2)]
        shape = A.shape
    else:
        _keys(inst, "instance", {"kind", "Q", "K", "beta", "log_weights", "n", "m"})
        Q = arrays[_array(arrays, inst["Q"], "instance.Q", "<f8", 2)]
        K = Q if inst["K"] is None else arrays[_array(arrays, inst["K"], "instance.K", "<f8", 2)]
        if K.shape[1] != Q.shape[1]:
            _refuse(f"instance: Q {Q.shape} and K {K.shape} differ in dimension")
        _float(inst["beta"], "instance.beta")
        if inst["log_weights"] is not None:
            lw = arrays[_array(arrays, inst["log_weights"], "instance.log_weights", "<f8", 1)]
            if lw.shape != (K.shape[0],) or np.isnan(lw).any() or np.isposinf(lw).any() \
                    or not np.isfinite(lw).any():
                _refuse("instance.log_weights must have one entry per key, no NaN or +inf, one finite")
        if not (np.isfinite(Q).all() and np.isfinite(K).all()):
            _refuse("instance: Q and K must be finite")
        shape = (Q.shape[0], K.shape[0])
    if not (inst["kind"] == "attention" or np.isfinite(arrays[inst["A"]]).all()):
        _refuse("instance.A must be finite")
    if [_int(inst["n"], "instance.n"), _int(inst["m"], "instance.m")] != list(shape):
        _refuse(f"instance: n, m = {inst['n']}, {inst['m']} but the arrays give {shape}")
    brackets = header["brackets"]
    if not isinstance(brackets, list) or not brackets:
        _refuse("header: brackets must be a non-empty list")
    used = {inst.get(k) for k in ("A", "Q", "K", "log_weights")} - {None}
    for t, b in enumerate(brackets):
        where = f"brackets[{t}]"
        _keys(b, where, {"eps", "lower", "upper", "lower_certificate", "upper_certificate"})
        _float(b["eps"], f"{where}.eps")
        _int(b["lower"], f"{where}.lower")
        _int(b["upper"], f"{where}.upper")
        used |= _check_lower(b["lower_certificate"], f"{where}.lower_certificate", arrays, shape)
        used |= _check_upper(b["upper_certificate"], f"{where}.upper_certificate", arrays, shape, inst)
    unused = set(arrays) - used
    if unused:
        _refuse(f"arrays {sorted(unused)} are named by no field of the header")


def _check_lower(c, where: str, arrays: dict, shape) -> set:
    if not isinstance(c, dict):
        _refuse(f"header: {where} must be an object")
    kind = c.get("kind")
    if kind in ("cluster-mass", "neumann"):
        _keys(c, where, {"kind", "rows", "keys", "offsets"})
        names = {_array(arrays, c[f], f"{where}.{f}", "<i8", 1) for f in ("rows", "keys", "offsets")}
        off = arrays[c["offsets"]]
        if off.size != arrays[c["rows"]].size + 1 or off[0] != 0 or off[-1] != arrays[c["keys"]].size \
                or np.any(np.diff(off) < 0):
            _refuse(f"{where}: offsets do not cut keys into one group per row")
        return names
    if kind == "frobenius-tail":
        _keys(c, where, {"kind", "rank", "rows", "cols"})
        _int(c["rank"], f"{where}.rank")
        return {_array(arrays, c[f], f"{where}.{f}", "<i8", 1) for f in ("rows", "cols") if c[f] is not None}
    if kind == "norm":
        _keys(c, where, {"kind", "rank", "row"})
        _int(c["rank"], f"{where}.rank")
        _int(c["row"], f"{where}.row")
        return set()
    if kind == "right-inverse":
        _keys(c, where, {"kind", "rows", "X"})
        return {_array(arrays, c["rows"], f"{where}.rows", "<i8", 1), _array(arrays, c["X"], f"{where}.X", "<f8", 2)}
    _refuse(f"header: {where}.kind {kind!r} is not a lower certificate kind")


def _check_upper(c, where: str, arrays: dict, shape, inst) -> set:
    if not isinstance(c, dict):
        _refuse(f"header: {where} must be an object")
    kind = c.get("kind")
    if kind == "harmonic":
        _keys(c, where, {"kind", "degree", "source"})
        _int(c["degree"], f"{where}.degree")
        if c["degree"] > 1000:
            _refuse(f"{where}: degree {c['degree']} above 1000 refused")
        if inst["kind"] != "attention":
            _refuse(f"{where}: a harmonic certificate needs a recipe with keys (instance kind 'attention')")
        return set()
    if kind == "subspace":
        _keys(c, where, {"kind", "source", "factors_dtype", "L", "R"})
        if c["factors_dtype"] not in ("float32", "float64"):
            _refuse(f"{where}.factors_dtype must be float32 or float64")
        dt = np.dtype(c["factors_dtype"]).str
        return {_array(arrays, c["L"], f"{where}.L", dt, 2), _array(arrays, c["R"], f"{where}.R", dt, 2)}
    _refuse(f"header: {where}.kind {kind!r} is not an upper certificate kind")


def _lower_certificate(c: dict, arrays: dict):
    kind = c["kind"]
    if kind in ("cluster-mass", "neumann"):
        off = arrays[c["offsets"]]
        keys = arrays[c["keys"]]
        groups = [keys[off[b]:off[b + 1]] for b in range(off.size - 1)]
        cls = ClusterMassCertificate if kind == "cluster-mass" else NeumannCertificate
        return cls(rows=arrays[c["rows"]], groups=groups)
    if kind == "frobenius-tail":
        return FrobeniusTailCertificate(rank=c["rank"], rows=None if c["rows"] is None else arrays[c["rows"]],
                                        cols=None if c["cols"] is None else arrays[c["cols"]])
    if kind == "norm":
        return NormCertificate(rank=c["rank"], row=c["row"])
    rows = arrays[c["rows"]]
    return RightInverseCertificate(rows=rows, X=arrays[c["X"]], rank=int(rows.size))


def _upper_certificate(c: dict, arrays: dict, A: np.ndarray, keys, bases: dict):
    if c["kind"] == "harmonic":
        if keys is None:
            raise CertificateFileError("harmonic certificate: the recipe's keys are not on the unit sphere")
        return _harmonic_certificate(A, keys, c["degree"], bases)
    return SubspaceCertificate(arrays[c["L"]].astype(np.float64), arrays[c["R"]].astype(np.float64),
                               source=c["source"] if isinstance(c["source"], str) else "")


def file_certificates(cf: CertificateFile, A: np.ndarray | None = None) -> list[tuple[float, object, object]]:
    """``(eps, lower certificate, upper certificate)`` of each bracket of a checked file, not verified;
    harmonic factors are rebuilt from the recipe's keys and ``A`` (computed unless given)."""
    keys = _harmonic_keys(cf.instance, cf.arrays)
    bases: dict = {}
    out = []
    for b in cf.header["brackets"]:
        if b["upper_certificate"]["kind"] == "harmonic" and A is None:
            A = cf.matrix()
        out.append((float(b["eps"]), _lower_certificate(b["lower_certificate"], cf.arrays),
                    _upper_certificate(b["upper_certificate"], cf.arrays, A, keys, bases)))
    return out
