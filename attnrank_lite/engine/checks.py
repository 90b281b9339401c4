r"""Argument checks shared by the public functions and every certificate verifier: the one place
where arguments and stored certificate data are parsed, so that a ``verify`` never returns
``True`` for data that do not describe the certificate they claim to be. Each check raises
``ValueError`` (``TypeError`` for a wrong type, complex data included: never cast) naming the
argument; :func:`parse_stored` turns bad *stored* data into ``None``."""
from __future__ import annotations

import numbers

import numpy as np

__all__ = ["UNIT_ROUNDOFF", "count_value", "eps_value", "finite_nonnegative", "gamma", "index_array",
           "log_weights", "parse_stored", "real_array", "real_matrix"]

#: unit roundoff of float64, :math:`u = 2^{-53}`
UNIT_ROUNDOFF = np.finfo(np.float64).eps / 2


def gamma(k: int) -> float:
    r"""Higham's :math:`\gamma_k = k u / (1 - k u)`, rounded up by a relative ``1e-12``: for any order
    a k-term sum is within :math:`\gamma_{k-1}\sum_i |x_i|` and a length-k inner product within
    :math:`\gamma_k |x|^T|y|` (Higham, eqs. (3.4)–(3.5)), barring underflow."""
    ku = k * UNIT_ROUNDOFF
    if not ku < 0.5:
        raise ValueError(f"gamma({k}) is undefined: k u must stay below 1/2")
    return ku / (1.0 - ku) * (1.0 + 1e-12)


def _real_number(name: str, value) -> float:
    if value is None:
        raise TypeError(f"{name} must be a real number, got None")
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a real number, got the boolean {value!r}")
    if isinstance(value, (complex, np.complexfloating)):
        raise TypeError(f"{name} must be a real number, got the complex {value!r}")
    if isinstance(value, np.ndarray):
        if value.ndim != 0:
            raise TypeError(f"{name} must be a real number, got an array of shape {value.shape}")
        return _real_number(name, value[()])
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__} {value!r}")
    if isinstance(value, np.integer):
        value = int(value)  # numpy would compare an int64 with a float in float64
    try:
        as_float = float(value)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got one beyond the float64 range") from None
    if not (as_float == value or (as_float != as_float and value != value)):
        raise ValueError(f"{name} must be exactly representable in float64, got {value!r} "
                         f"(it would round to {as_float!r}); pass a float")
    return as_float


def finite_nonnegative(name: str, value) -> float:
    """``float(value)`` if a real number, finite and ``>= 0``: ``None``, bools, complex, strings and
    arrays are a ``TypeError``, NaN, infinities and negatives a ``ValueError``, naming ``name``."""
    value = _real_number(name, value)
    if not (np.isfinite(value) and value >= 0):
        raise ValueError(f"{name} must be a finite number >= 0, got {value}")
    return value


def eps_value(eps) -> float:
    """The error level ``eps`` checked by :func:`finite_nonnegative`."""
    return finite_nonnegative("eps", eps)


def real_array(name: str, X, ndim: int | None = None, finite: bool = True) -> np.ndarray:
    """``X`` as a float64 array (of ``ndim`` dimensions if given), refusing complex / non-numeric data
    (``TypeError``, never cast) and NaN, and infinities unless ``finite=False`` (``ValueError``);
    ``name`` is used in the messages."""
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise TypeError(f"{name} must be real; got complex data (dtype {arr.dtype}). "
                        "Pass the real part explicitly if that is what you mean")
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    arr = _exact_float64(name, arr)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if finite and not np.isfinite(arr).all():
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    if not finite and np.isnan(arr).any():
        raise ValueError(f"{name} must not contain NaN")
    return arr


def _exact_float64(name: str, arr: np.ndarray) -> np.ndarray:
    """``arr`` as float64, refusing (``ValueError``) what the conversion would round (64-bit integers
    beyond ``2**53``, floats wider than float64)."""
    out = arr.astype(np.float64, copy=False)
    if arr.dtype.kind in "iu" and arr.dtype.itemsize >= 8:
        big = arr[np.abs(out) >= 2.0**53]
        exact = all(int(x) == int(float(x)) for x in big.ravel().tolist())
    elif arr.dtype.kind == "f" and arr.dtype.itemsize > 8:
        with np.errstate(over="ignore", invalid="ignore"):
            exact = np.array_equal(out.astype(arr.dtype), arr, equal_nan=True)
    else:
        return out
    if not exact:
        raise ValueError(f"{name} must be exactly representable in float64; its {arr.dtype} "
                         "entries would round (pass float64 data)")
    return out


def real_matrix(name: str, A) -> np.ndarray:
    """``A`` as a finite real float64 matrix (2-D), see :func:`real_array`."""
    return real_array(name, A, ndim=2)


def index_array(name: str, idx, size: int, unique: bool = True) -> np.ndarray:
    """Stored indices into an axis of length ``size`` as an int64 vector; refused (``ValueError``):
    boolean or non-integer dtype (``[0.0, 1.0]`` included), more than one dimension, negatives (no
    wrap-around), indices ``>= size`` and, with ``unique``, repeats."""
    arr = np.asarray(idx)
    if arr.size == 0:
        if arr.ndim > 1:
            raise ValueError(f"{name} must be a 1-D sequence of indices, got shape {arr.shape}")
        return np.zeros(0, dtype=np.int64)
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integer indices, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of indices, got shape {arr.shape}")
    if arr.min() < 0 or arr.max() >= size:
        raise ValueError(f"{name} must lie in [0, {size}), got values from {arr.min()} to {arr.max()}")
    arr = arr.astype(np.int64)
    if unique and np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not repeat an index")
    return arr


def count_value(name: str, value, minimum: int = 0) -> int:
    """A stored rank / degree / count: an integer (not a bool, not ``2.0``) ``>= minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def log_weights(lw, m: int) -> np.ndarray:
    """Key log-weights as a float64 vector of length ``m``: ``-inf`` (weight zero) allowed, NaN and
    ``+inf`` not, a 2-D array refused (never flattened)."""
    w = real_array("log_weights", lw, finite=False)
    if w.ndim != 1 or w.shape[0] != m:
        raise ValueError(f"log_weights must be 1-D of length m = {m} (one per key), got shape {w.shape}")
    if np.isposinf(w).any():
        raise ValueError("log_weights must not contain +inf")
    return w


def parse_stored(parse, *args):
    """``parse(*args)``, or ``None`` when it raises ``ValueError``, ``TypeError``, ``IndexError`` or
    ``OverflowError``: stored data that are no valid certificate make the verifier answer ``False``."""
    try:
        return parse(*args)
    except (ValueError, TypeError, IndexError, OverflowError):
        return None
