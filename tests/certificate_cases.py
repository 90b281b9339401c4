"""Valid certificate files of every kind, and a file rewriter for forgery tests.

Shared by ``tests/engine/test_certificate_file.py``, ``tests/test_checker.py`` and
``tests/site/test_verify_cli.py``. The instances are small matrices whose ranks are known by
hand (``b`` uniform blocks: ``rank_eps = b`` for ``eps < 1``, SPEC Prop 1.2) and small point
sets on the sphere.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from attnrank_lite.engine import (
    ClusterMassCertificate,
    FrobeniusTailCertificate,
    NeumannCertificate,
    NormCertificate,
    RankBracket,
    SubspaceCertificate,
    point_brackets,
)
from attnrank_lite.engine.assemble import CostLimits
from attnrank_lite.engine.certificate_io import save_brackets
from attnrank_lite.engine.right_inverse import RightInverseCertificate
from attnrank_lite.laws.geometry import fibonacci_sphere

BLOCKS, SIZE = 3, 4


def block_matrix(blocks: int = BLOCKS, size: int = SIZE) -> np.ndarray:
    """``blocks`` uniform blocks of ``size`` (each row: 1/size on its block)."""
    return np.kron(np.eye(blocks), np.full((size, size), 1.0 / size))


def _block_pieces():
    n = BLOCKS * SIZE
    rows = [b * SIZE for b in range(BLOCKS)]
    groups = [list(range(b * SIZE, (b + 1) * SIZE)) for b in range(BLOCKS)]
    G = np.zeros((n, BLOCKS))
    for b, g in enumerate(groups):
        G[g, b] = 1.0
    upper = SubspaceCertificate(G.copy(), G.T / SIZE, source="block averages")
    return rows, groups, G, upper


def block_brackets(eps: float = 0.25) -> dict[str, RankBracket]:
    """One bracket ``[3, 3]`` (``[1, 3]`` for the norm kind) per lower kind on :func:`block_matrix`."""
    rows, groups, G, upper = _block_pieces()
    lowers = {
        "cluster-mass": ClusterMassCertificate(rows=rows, groups=groups),
        "neumann": NeumannCertificate(rows=rows, groups=groups),
        "right-inverse": RightInverseCertificate(rows=rows, X=G.copy(), rank=BLOCKS),
        "frobenius-tail": FrobeniusTailCertificate(rank=BLOCKS),
        "norm": NormCertificate(rank=1, row=0),
    }
    return {k: RankBracket(eps, low, upper) for k, low in lowers.items()}


def sphere_instance(n: int = 200, beta: float = 8.0):
    return fibonacci_sphere(n), beta


def harmonic_brackets(eps_values=(0.25, 0.5)):
    """Brackets of self-attention on Fibonacci points whose upper side is harmonic (no l1 fit)."""
    P, beta = sphere_instance()
    return P, beta, point_brackets(P, beta, list(eps_values), limits=CostLimits(l1=0))


def write_all(folder: Path) -> dict[str, Path]:
    """Valid files of every kind in ``folder``: ``{name: path}``."""
    folder = Path(folder)
    A = block_matrix()
    out = {}
    for kind, b in block_brackets().items():
        out[kind] = Path(save_brackets(folder / f"block-{kind}.npz", [b], A=A))
    out["float64-factors"] = Path(save_brackets(folder / "block-f64.npz", [block_brackets()["neumann"]], A=A,
                                                factors="float64"))
    P, beta, hb = harmonic_brackets()
    out["harmonic"] = Path(save_brackets(folder / "sphere-harmonic.npz", hb, Q=P, beta=beta))
    # an SVD upper side (factors), weighted keys: a separate key set with log-weights
    rng = np.random.default_rng(1)
    K = fibonacci_sphere(150)
    lw = rng.uniform(-2.0, 0.0, size=150)
    Q = fibonacci_sphere(120)
    wb = point_brackets(Q, 6.0, [0.3], K=K, log_weights=lw, limits=CostLimits(l1=0))
    out["recipe-weighted"] = Path(save_brackets(folder / "weighted.npz", wb, Q=Q, K=K, beta=6.0, log_weights=lw))
    return out


# ----------------------------------------------------------------------------- rewriting files

def read_raw(path) -> tuple[dict, dict]:
    """``(header, arrays)`` of a file, read without any check (``allow_pickle=False``)."""
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(arrays.pop("header").tobytes().decode())
    return header, arrays


def write_raw(path, header: dict, arrays: dict, rehash: bool = True) -> Path:
    """Write ``header`` and ``arrays`` as a certificate file; ``rehash`` recomputes the table of
    arrays (dtype, shape, sha256) as a forger would."""
    if rehash:
        header = dict(header)
        header["arrays"] = {k: {"dtype": a.dtype.str, "shape": list(a.shape),
                                "sha256": hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()}
                            for k, a in arrays.items()}
    blob = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    with open(path, "wb") as fh:
        np.savez(fh, header=blob, **arrays)
    return Path(path)
