"""``lem-softmax-perturbation``: ||softmax(a + delta) - softmax(a)||_1 <= 2 tanh(osc/4) <= osc/2,
checked on random pairs, by an adversarial search and on the two-level example that attains it."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

import attnrank_lite
from attnrank_lite import row_softmax
from attnrank_lite.engine.perturbation import oscillation, oscillation_bound, softmax_perturbation_bound


def test_perturbation_bound_shapes_and_export():
    assert attnrank_lite.softmax_perturbation_bound is softmax_perturbation_bound
    assert softmax_perturbation_bound(np.zeros((3, 4))).shape == (3,)
    assert np.ndim(softmax_perturbation_bound(np.array([0.0, 2.0]))) == 0
    assert np.isclose(softmax_perturbation_bound(np.array([0.0, 2.0])), 2 * np.tanh(0.5))
    assert np.allclose(oscillation([[1.0, -2.0, 0.5]]), 3.0)
    assert np.allclose(oscillation_bound([0.0, 4.0, np.inf]), [0.0, 2 * np.tanh(1.0), 2.0])
    with pytest.raises(ValueError, match="osc"):
        oscillation_bound(-1.0)


def test_softmax_perturbation_lemma_on_100000_random_pairs():
    rng = np.random.default_rng(2026)
    total = 0
    worst = 0.0
    for m, count in ((2, 30000), (3, 20000), (5, 20000), (17, 15000), (100, 15000)):
        scale_a = 10.0 ** rng.uniform(-2, 2, size=(count, 1))
        scale_d = 10.0 ** rng.uniform(-3, 1.5, size=(count, 1))
        a = rng.standard_normal((count, m)) * scale_a
        d = rng.standard_normal((count, m)) * scale_d
        two = rng.random(count) < 0.3  # a third of the deltas two-level, the sharp shape
        d[two] = np.where(rng.random((two.sum(), m)) < 0.5, 0.0, 1.0) * scale_d[two] * 4
        lhs = np.abs(row_softmax(a + d) - row_softmax(a)).sum(axis=1)
        bound = softmax_perturbation_bound(d)
        osc = oscillation(d)
        # rounding: forming a + d moves the logits by ~u (|a| + |d|); the softmax moves by as much
        slack = 16 * np.finfo(float).eps * (np.abs(a).max(axis=1) + np.abs(d).max(axis=1) + 1)
        assert np.all(lhs <= bound * (1 + 1e-12) + slack)
        assert np.all(bound <= osc / 2 * (1 + 1e-15) + 1e-300)
        ok = bound > 1e-6
        worst = max(worst, float(np.max(lhs[ok] / bound[ok])))
        total += count
    assert total == 100_000
    assert worst > 0.9  # the random search gets close to the bound, so the check has teeth


def test_softmax_perturbation_lemma_adversarial_search():
    """Maximise ||softmax(a + delta) - softmax(a)||_1 / (2 tanh(osc/4)) with Nelder-Mead."""
    rng = np.random.default_rng(7)

    def ratio(x, m):
        a, d = x[:m], x[m:]
        osc = d.max() - d.min()
        if osc < 1e-6:
            return 0.0
        lhs = np.abs(row_softmax((a + d)[None]) - row_softmax(a[None])).sum()
        return lhs / (2 * np.tanh(osc / 4))

    best = 0.0
    for m in (2, 3, 4):
        for _ in range(12):
            x0 = rng.standard_normal(2 * m) * rng.choice([0.5, 2.0, 6.0])
            res = minimize(lambda x, m=m: -ratio(x, m), x0, method="Nelder-Mead",
                           options={"maxiter": 3000, "xatol": 1e-10, "fatol": 1e-14})
            best = max(best, -res.fun)
            assert -res.fun <= 1 + 1e-10
    assert best > 0.999  # the search finds the sharp configurations


def test_softmax_perturbation_lemma_two_level_example_is_sharp():
    t = np.logspace(-3, np.log10(20), 400)
    # a = (0, -t/2): mass 1/(1 + e^{t/2}) on key 2; delta = (0, t)
    a = np.column_stack([np.zeros_like(t), -t / 2])
    d = np.column_stack([np.zeros_like(t), t])
    lhs = np.abs(row_softmax(a + d) - row_softmax(a)).sum(axis=1)
    assert np.max(np.abs(lhs - 2 * np.tanh(t / 4))) < 1e-12
    assert np.max(np.abs(softmax_perturbation_bound(d) - 2 * np.tanh(t / 4))) < 1e-15
    # the same with many keys split over the two levels (mass fraction kept)
    m = 10
    a10 = np.column_stack([np.zeros((t.size, 5)), np.repeat(-t[:, None] / 2, 5, axis=1)])
    d10 = np.column_stack([np.zeros((t.size, 5)), np.repeat(t[:, None], 5, axis=1)])
    lhs10 = np.abs(row_softmax(a10 + d10) - row_softmax(a10)).sum(axis=1)
    assert a10.shape[1] == m and np.max(np.abs(lhs10 - 2 * np.tanh(t / 4))) < 1e-12
