r"""Tables of chapters 4 and 5, and the numbers their prose quotes (strings for ``myst_nb.glue``,
from the run's own tables)."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd

from ..engine.attention import softmax_attention
from ..engine.perturbation import oscillation_bound
from ..laws.fitting import fit_loglog_slope, interval_text
from ..laws.geometry import gaussian_ball, uniform_ball
from ..laws.sweeps import bracket_sweep
from ..laws.verdicts import WIDTH_SENTENCE, counts_text, judge_slope, judged_slope_table, width_text, width_trend
from . import constructions as cs
from . import interaction as ia
from .polynomial import degree_table, polynomial_sweep

__all__ = ["FIXED_N_FAMILY", "ROUNDING", "SHARP_FAMILY", "degree_against_m", "degree_numbers", "head_quotient",
           "lemma_checks", "polynomial_numbers", "polynomial_table", "r_half_numbers", "r_half_slopes",
           "r_half_sweeps", "r_half_widths", "sharp_family_degrees", "tightness", "tolerance_curves",
           "tradeoff_numbers", "truncation_table"]

#: the family whose size grows with beta (n ~ beta^{r/2}): its upper end is about n/2
SHARP_FAMILY = "Gaussian ball"
#: the family with a fixed number of points: its upper end is free to leave beta^{r/2}
FIXED_N_FAMILY = "uniform random"

# chapter 4

def head_quotient(W_Q, b_Q, W_K, b_K, beta: float) -> tuple[pd.DataFrame, dict]:
    r"""The head example of ``prop-head-visible`` on the Gaussian ball ``(2, beta)``, one row: ranks of the logits
    and of the row-centred logits, the visible dimension, the head formula with and without :math:`b_Q`, and the
    largest entry of :math:`|A_\text{head} - A_\text{visible}|` (:func:`~.interaction.visible_coordinates` with its
    key offsets). Numbers: ``head_rowc``, ``head_vis``."""
    W_Q, W_K = np.asarray(W_Q, float), np.asarray(W_K, float)
    X, logw = gaussian_ball(2, beta)
    Qh, Kh = X @ W_Q.T + b_Q, X @ W_K.T + b_K
    L = beta * (Qh @ Kh.T) + logw[None, :]
    Qv, Kv, a = ia.visible_coordinates(Qh, Kh)
    A_head = softmax_attention(Qh, Kh, beta, log_weights=logw)
    A_vis = softmax_attention(Qv, Kv, beta, log_weights=logw + beta * a)
    row = {
        "logit rank": int(np.linalg.matrix_rank(L)),
        "row-centred rank": int(np.linalg.matrix_rank(ia.row_scalar_quotient(L))),
        "visible dimension": int(ia.visible_dimension(L)),
        "head formula": int(ia.head_visible_dimension(W_Q, b_Q, W_K, b_K, key_states=X)),
        "head formula, b_Q = 0": int(ia.head_visible_dimension(W_Q, None, W_K, b_K, key_states=X)),
        "max |A_head - A_visible|": float(np.abs(A_head - A_vis).max()),
    }
    return pd.DataFrame([row]), {"head_rowc": row["row-centred rank"], "head_vis": row["visible dimension"]}


def _sharp(r: int, extra: int, seed: int):
    def recipe(beta):  # the instance of a certificate file (bracket_sweep)
        Q, K, lw = cs.sharp_hidden_instance(r, beta, extra, seed)
        return {"Q": Q, "K": K, "beta": beta, "log_weights": lw}

    def make(beta):
        return softmax_attention(**recipe(beta))

    make.recipe = recipe
    return make


def _fixed_n(r: int, n: int, extra: int, seed: int):
    Q, K = cs.hidden_instance(uniform_ball(n, r, seed=seed), uniform_ball(n, r, seed=seed + 1), extra=extra, seed=seed)
    if ia.visible_dimension(Q @ K.T) != r:
        raise AssertionError(f"the random instance does not have visible dimension {r}")

    def make(beta):
        return softmax_attention(Q, K, beta)

    make.recipe = lambda beta: {"Q": Q, "K": K, "beta": beta}
    return make


def r_half_sweeps(betas_by_r: dict, betas_random, n_random: int, eps: float, extra: int,
                  seed: int, certificates=None) -> pd.DataFrame:
    r"""Certified brackets (rows of :func:`attnrank_lite.laws.sweeps.bracket_sweep` with ``r``, ``family``) of the
    two families of ``thm-r-half-law`` per visible dimension r, hidden in ``r + extra`` dimensions:
    :data:`SHARP_FAMILY` (:func:`~.constructions.sharp_hidden_instance` at ``betas_by_r[r]``) and
    :data:`FIXED_N_FAMILY` (``n_random`` uniform points of the unit r-ball at ``betas_random``). ``certificates``: a
    folder for one file per row in ``r<r>-ball/``, ``r<r>-random/``. ``AssertionError`` if an instance does not have
    visible dimension r or a bracket does not verify."""
    def sub(name):
        return None if certificates is None else os.path.join(os.fspath(certificates), name)

    parts = []
    for r, betas in betas_by_r.items():
        Q, K, lw = cs.sharp_hidden_instance(r, betas[0], extra, seed)
        if ia.visible_dimension(betas[0] * (Q @ K.T) + lw[None, :]) != r:
            raise AssertionError(f"the sharp instance does not have visible dimension {r}")
        parts.append(bracket_sweep(_sharp(r, extra, seed), betas, [eps], r=r, certificates=sub(f"r{r}-ball"),
                                   family=SHARP_FAMILY, desc=f"ball r={r}"))
        parts.append(bracket_sweep(_fixed_n(r, n_random, extra, seed), betas_random, [eps],
                                   certificates=sub(f"r{r}-random"),
                                   r=r, family=FIXED_N_FAMILY, desc=f"random r={r}"))
    law = pd.concat(parts, ignore_index=True)
    if not law["verified"].all():
        raise AssertionError("a bracket of the r/2 sweeps does not verify")
    return law


def r_half_slopes(law: pd.DataFrame, fit_points: int) -> pd.DataFrame:
    r"""Slopes of both ends over the last ``fit_points`` betas of each sweep, judged against :math:`r/2` by
    :func:`attnrank_lite.laws.verdicts.judged_slope_table` (``max width`` r/4). ``can fail`` is False for the sharp
    family's upper end, whose n grows like :math:`\beta^{r/2}` by construction (slope ``n slope + upper/n slope``).

    Returns
    -------
    pandas.DataFrame
        :data:`attnrank_lite.laws.verdicts.SLOPE_COLUMNS`, then r, family, end, beta_min, beta_max, max width,
        n slope, upper/n slope, can fail.
    """
    tail = law.groupby(["r", "family"]).tail(fit_points)
    fits = judged_slope_table(tail, lambda g: g["r"] / 2, by=("r", "family"))
    fits["max width"] = fits["r"] / 4
    tails = dict(list(tail.groupby(["r", "family"])))
    groups = [tails[(f.r, f.family)] for f in fits.itertuples()]
    fits["n slope"] = [fit_loglog_slope(g["beta"], g["n"]).slope for g in groups]
    fits["upper/n slope"] = [fit_loglog_slope(g["beta"], g["upper"] / g["n"]).slope for g in groups]
    fits["can fail"] = ~((fits["family"] == SHARP_FAMILY) & (fits["end"] == "upper"))
    return fits


def r_half_widths(law: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Width upper/lower per beta, one column per (r, family), and the strings
    ``r_half_width_trend`` and ``r_half_width_sentence``."""
    labels = [f"r = {r}, {f}" for r, f in zip(law["r"], law["family"])]
    table = width_trend(law["beta"], law["lower"], law["upper"], group=labels)
    return table, {"r_half_width_trend": width_text(law, by=("r", "family")),
                   "r_half_width_sentence": WIDTH_SENTENCE}


def r_half_numbers(law: pd.DataFrame, fits: pd.DataFrame) -> dict:
    """Strings the chapter-4 prose quotes from the r/2 sweeps: per r and end ``{end}_r{r}``, ``{end}_verdict_r{r}``
    (sharp family; prefix ``fixed_`` for the fixed-n family), ``sharp_n_slopes``, ``fixed_n``, ``r3_beta``,
    ``r3_n``, ``r_half_verdicts`` (over the ends that can fail) and ``r_half_left_out``."""
    out = {}
    for prefix, fam in (("", SHARP_FAMILY), ("fixed_", FIXED_N_FAMILY)):
        sub = fits[fits["family"] == fam].set_index(["r", "end"])
        for (r, end), f in sub.iterrows():
            out[f"{prefix}{end}_r{r}"] = interval_text(f.slope, f.ci_low, f.ci_high)
            out[f"{prefix}{end}_verdict_r{r}"] = f.verdict
    sharp = law[law["family"] == SHARP_FAMILY]
    up = fits[(fits["family"] == SHARP_FAMILY) & (fits["end"] == "upper")].sort_values("r")
    out["sharp_n_slopes"] = "; ".join(f"r = {f.r}: n {f['n slope']:.2f}, upper/n {f['upper/n slope']:+.2f}"
                                      for _, f in up.iterrows())
    fixed = law[law["family"] == FIXED_N_FAMILY]
    out["fixed_n"] = str(int(fixed["n"].iloc[0])) if len(fixed) else "n/a"
    top = int(sharp["r"].max())
    last = sharp[sharp["r"] == top].iloc[-1]
    out["r3_beta"], out["r3_n"] = f"{last.beta:g}", str(int(last.n))
    out["r_half_verdicts"] = counts_text(fits.loc[fits["can fail"], "verdict"])
    out["r_half_left_out"] = str(int(fits["left_out"].sum()))
    return out


def _all_verified(table: pd.DataFrame, every: bool = False) -> pd.DataFrame:
    """``table``, after checking that every certificate found (every row when ``every``) verified."""
    found = table["verified"].notna() if every else table["degree"].notna()
    if not table.loc[found, "verified"].all():
        raise AssertionError("a polynomial certificate does not verify")
    return table


def polynomial_table(n: int, betas, eps: float, extra: int, seed: int) -> pd.DataFrame:
    r"""Polynomial certificates (``prop-polynomial-certificate``) next to certified brackets, for r = 1, 2: ``n``
    uniform points of the r-ball hidden in ``r + extra`` dimensions, each certificate built in the visible
    coordinates and verified against the attention of the original queries and keys. Columns of
    :func:`~.polynomial.polynomial_sweep`, ``bracket lower``, ``bracket upper``, ``count / upper``, ``count >= n``
    (vacuous); ``AssertionError`` if a certificate found does not verify."""
    rows = []
    for r in (1, 2):
        Y, Xk = uniform_ball(n, r, seed=seed + 2), uniform_ball(n, r, seed=seed + 3)
        Q, K = cs.hidden_instance(Y, Xk, extra=extra, seed=seed)
        Qv, Kv, a = ia.visible_coordinates(Q, K)

        def make(beta, Q=Q, K=K):
            return softmax_attention(Q, K, beta)

        pr = pd.DataFrame(polynomial_sweep(Qv, Kv, betas, eps, key_offsets=a, attention=make))
        br = bracket_sweep(make, betas, [eps], desc=f"poly r={r}")
        rows.append(pr.assign(**{"bracket lower": br["lower"].to_numpy(), "bracket upper": br["upper"].to_numpy()}))
    poly = _all_verified(pd.concat(rows, ignore_index=True))
    poly["count / upper"] = poly["count"] / poly["bracket upper"]
    poly["count >= n"] = poly["count"] >= n
    return poly


def polynomial_numbers(poly: pd.DataFrame, n: int, fit_points: int) -> tuple[pd.DataFrame, dict]:
    r"""Count slopes of polynomial certificates against :math:`r/2` (:func:`attnrank_lite.laws.verdicts.judge_slope`)
    over the last ``fit_points`` non-vacuous certificates per r; vacuous ones (count ``>= n``) left out and counted.

    Returns
    -------
    fits : pandas.DataFrame
        Per r: :data:`attnrank_lite.laws.verdicts.SLOPE_COLUMNS`, ``r``, ``beta_min``, ``beta_max``.
    numbers : dict
        ``count_slope_r{r}``, ``ratio_r{r}`` (count over upper end, first and last beta), ``trivial_r{r}``,
        ``vacuous_r{r}``, ``poly_n``.
    """
    out, rows = {"poly_n": str(n)}, []
    for r, g in poly.groupby("dim"):
        found = g[g["degree"].notna()]
        vac, useful = found[found["count"] >= n], found[found["count"] < n].tail(fit_points)
        sel = pd.concat([useful, vac])
        row = judge_slope(sel["beta"], sel["count"], r / 2, left_out=(sel["count"] >= n).to_numpy())
        row.update(r=r, beta_min=float(useful["beta"].min()), beta_max=float(useful["beta"].max()))
        if np.isfinite(row["slope"]):
            out[f"count_slope_r{r}"] = (
                interval_text(row["slope"], row["ci_low"], row["ci_high"])
                + f" (β = {row['beta_min']:g}-{row['beta_max']:g}; {row['verdict']})")
        else:
            out[f"count_slope_r{r}"] = f"not fitted (only {len(useful)} non-vacuous certificates)"
        rows.append(row)
        ratio = found.loc[found["count"] < n, "count / upper"].dropna()
        out[f"ratio_r{r}"] = (f"{ratio.iloc[0]:.3g} to {ratio.iloc[-1]:.3g}" if len(ratio)
                              else "n/a (no non-vacuous certificate)")
        trivial = g.loc[g["count >= n"], "beta"]
        out[f"trivial_r{r}"] = (f"from beta = {trivial.min():g} on" if len(trivial) else "at no beta of this sweep")
        out[f"vacuous_r{r}"] = str(len(vac))
    return pd.DataFrame(rows), out


def degree_numbers(deg: pd.DataFrame) -> dict:
    """``m_first``, ``m_last``, ``deg_values`` and ``deg_plateau`` (where the degree of
    :func:`~.polynomial.degree_table` stops growing with m, if it does) of the table."""
    d = deg.sort_values("m")
    degs, ms = [int(v) for v in d["degree"]], [int(v) for v in d["m"]]
    k = len(degs) - 1
    while k > 0 and degs[k - 1] == degs[-1]:
        k -= 1
    if k == 0 and len(degs) > 1:
        plateau = "it does not grow with m"
    elif k < len(degs) - 1:
        plateau = f"it stays at {degs[-1]} from m = {ms[k]} on"
    else:
        plateau = "it grows up to the largest m"
    values = ", ".join(str(v) for v in degs[:-1]) + (" and " if len(degs) > 1 else "") + str(degs[-1])
    return {"m_first": ms[0], "m_last": ms[-1], "deg_values": values, "deg_plateau": plateau}


def sharp_family_degrees(betas, eps: float, max_degree: int = 256) -> pd.DataFrame:
    r"""Polynomial degree on the Gaussian ball (r = 1), with its key log-weights and without (an empty ``degree``:
    none up to ``max_degree``); ``AssertionError`` if a certificate found does not verify."""
    rows = []
    for beta in betas:
        X, lw = gaussian_ball(1, beta)
        for label, w in (("with weights", lw), ("without weights", None)):
            row = polynomial_sweep(X, X, [beta], eps, max_degree=max_degree, log_weights=w)[0]
            rows.append({"n": len(X), "weights": label,
                         "log-weight range": 0.0 if w is None else float(np.ptp(w)), **row})
    return _all_verified(pd.DataFrame(rows))


def degree_against_m(beta: float, eps: float, ms, seed: int) -> pd.DataFrame:
    """:func:`~.polynomial.degree_table` for r = 1, every row verified."""
    return _all_verified(pd.DataFrame(degree_table(1, beta, eps, ms, seed=seed)), every=True)


# chapter 5

#: relative and absolute rounding allowance of the chapter-5 checks
ROUNDING = 1e-12


def lemma_checks(n_pairs: int, seed: int) -> tuple[pd.DataFrame, dict, dict]:
    r"""``lem-softmax-perturbation`` against its sharp two-level example (200 oscillations from :math:`10^{-3}` to 20)
    and ``n_pairs`` random pairs over 6 keys: the one-row table (largest gap to :math:`2\tanh(t/4)`, pairs, largest
    change/bound, violations beyond :data:`ROUNDING` relative plus :math:`10^{-13}`), the numbers ``sharp_gap``,
    ``pair_ratio`` and the figure's data ``t``, ``osc``, ``change``; ``AssertionError`` if the gap exceeds
    :data:`ROUNDING` or a pair violates the bound."""
    t = np.logspace(-3, np.log10(20), 200)
    gap = float(np.abs(cs.two_level_example(t) - oscillation_bound(t)).max())
    osc, change = cs.random_perturbation_pairs(n_pairs, 6, seed=seed)
    bound = oscillation_bound(osc)
    ratio = float((change / np.maximum(bound, 1e-300)).max())
    bad = int((change > bound * (1 + ROUNDING) + 1e-13).sum())
    if gap >= ROUNDING or bad:
        raise AssertionError(f"lemma check failed: gap {gap:.1e}, {bad} violations")
    table = pd.DataFrame([{"two-level: max |change - 2 tanh(t/4)|": gap, "random pairs": n_pairs,
                           "max change / bound": ratio, "violations": bad}])
    return (table, {"sharp_gap": f"{gap:.1e}", "pair_ratio": f"{ratio:.4f}"},
            {"t": t, "osc": osc, "change": change})


def truncation_table(d: int, n: int, decays, betas, key_offset: float, seed: int) -> pd.DataFrame:
    r"""The columns of :func:`~.interaction.residual_bounds` for each decay (one
    :func:`~.constructions.decaying_head` each), beta and ``s = 0..d``. Raises
    ``AssertionError`` if measured <= tanh <= osc <= sigma fails beyond :data:`ROUNDING`."""
    rows = []
    for rho in decays:
        Q, K, M = cs.decaying_head(d, n, n, rho, seed=seed, key_offset=key_offset)
        for beta in betas:
            for s in range(d + 1):
                rows.append({"decay": rho, "beta": beta, "s": s, **ia.residual_bounds(Q, K, M, s, beta)})
    trunc = pd.DataFrame(rows)
    tol = ROUNDING
    ok = ((trunc["measured"] <= trunc["tanh"] + tol).all() and (trunc["tanh"] <= trunc["osc"] + tol).all()
          and (trunc["osc"] <= trunc["sigma"] * (1 + tol) + tol).all())
    if not ok:
        raise AssertionError("the chain measured <= tanh <= osc <= sigma fails")
    return trunc


def tightness(trunc: pd.DataFrame, d: int) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Ratios measured/bound per (decay, beta) over s < d (min, median, max): the table with
    two-level columns, the same flat, and the numbers ``ratio_max``, ``sigma_med_first``,
    ``sigma_med_last``, ``beta_first``, ``beta_last``."""
    ok = trunc[trunc["s"] < d]
    ratios = ok.assign(**{f"measured/{b}": ok.measured / ok[b] for b in ("tanh", "osc", "sigma")})
    cols = ["measured/tanh", "measured/osc", "measured/sigma"]
    tight = ratios.groupby(["decay", "beta"])[cols].agg(["min", "median", "max"])
    flat = tight.reset_index()
    flat.columns = ["_".join(map(str, c)).strip("_") for c in flat.columns]
    med = ratios.groupby("beta")["measured/sigma"].median()
    numbers = {"ratio_max": f"{ratios[cols].max().max():.3f}",
               "sigma_med_first": f"{med.iloc[0]:.3f}", "sigma_med_last": f"{med.iloc[-1]:.3f}",
               "beta_first": f"{med.index[0]:g}", "beta_last": f"{med.index[-1]:g}"}
    return tight, flat, numbers


def tolerance_curves(d: int, n: int, decays, betas, key_offset: float, seed: int, taus=None) -> pd.DataFrame:
    r""":math:`r(\tau)` of each random head at each beta over ``taus`` (default 80 values
    from :math:`10^{-3}` to 10)."""
    taus = np.logspace(-3, 1, 80) if taus is None else np.asarray(taus, float)
    rows = []
    for rho in decays:
        Q, K, M = cs.decaying_head(d, n, n, rho, seed=seed, key_offset=key_offset)
        b = ia.residual_bounds(Q, K, M, 0, 1.0)
        sig = np.linalg.svd(M, compute_uv=False)
        for beta in betas:
            r_tau = ia.tolerance_dimension(sig, taus, beta * b["R_q"] * b["R_k"])
            rows += [{"decay": rho, "beta": beta, "tau": tau, "r_tau": r} for tau, r in zip(taus, r_tau)]
    return pd.DataFrame(rows)


def tradeoff_numbers(d: int, n: int, decay: float, beta: float, eps: float,
                     key_offset: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """:func:`~.interaction.truncation_tradeoff` of one random head, with the quoted numbers ``svd_best``,
    ``svd_best_s``, ``svd_full``, ``poly_best``, ``poly_best_s``, ``poly_full``, ``s_full``, ``s_first``. Raises
    ``AssertionError`` if a certificate with budget left does not verify against A."""
    Q, K, M = cs.decaying_head(d, n, n, decay, seed=seed, key_offset=key_offset)
    trade = pd.DataFrame(ia.truncation_tradeoff(Q, K, M, beta, eps))
    has = trade["budget"] > 0
    if not (trade.loc[has, "verified_on_A"].all()
            and trade.loc[has & trade["poly_count"].notna(), "poly_verified_on_A"].all()):
        raise AssertionError("a trade-off certificate does not verify against A")
    g, full = trade[has], trade.iloc[-1]
    out = {"s_full": int(full.s), "s_first": int(g.s.min())}
    for col, name in (("upper", "svd"), ("poly_count", "poly")):
        v = g[col].astype(float)
        if v.notna().any():
            best = g.loc[v.idxmin()]
            out[f"{name}_best_s"], out[f"{name}_best"] = int(best.s), int(best[col])
        else:
            out[f"{name}_best_s"] = out[f"{name}_best"] = "none"
        out[f"{name}_full"] = int(full[col]) if pd.notna(full[col]) else "none"
    return trade, out
