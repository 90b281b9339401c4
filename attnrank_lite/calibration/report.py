r"""Statistics, key numbers and verdict of the BERT calibration study (``claim-bert-calibration``;
the reading rules, printed by :func:`verdict`, use :data:`MODEST`, :data:`MANY`, :data:`MIN_DEFINED`)."""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

__all__ = ["ASSOCIATION_PAIRS", "MANY", "MIN_DEFINED", "MODEST", "RECOMPUTE_THRESHOLD", "STUDY_PARAMETERS",
           "associations", "bracket_check", "chapter_study", "recompute_check", "key_numbers", "reductions_at",
           "sign_class", "spearman", "spearman_bootstrap", "summary_by_multiplier", "vacuous_counts", "verdict"]

#: least fraction of bootstrap resamples that must define the correlation for an interval
MIN_DEFINED = 0.95
#: largest median reduction called "modest"
MODEST = 0.5
#: least fraction of settings called "many"
MANY = 0.25
#: (x, y, what y is): effective dimension against a certificate size
ASSOCIATION_PAIRS = (
    ("r_osc_tau", "upper_mean", "the SVD upper bracket"),
    ("r_osc_tau", "log10_poly_count", "the polynomial certificate count C(r+D, D)"),
    ("r_osc_tau", "poly_degree", "the polynomial certificate degree D"),
    ("r_tau", "upper_mean", "the SVD upper bracket"),
)


def spearman(x, y) -> float:
    """Spearman's rank correlation of 1-D ``x, y``: the Pearson correlation of average ranks
    (``inf`` ranks last); NaN when either side is constant."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError("x and y must be 1-D arrays of equal length")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not contain NaN")
    return float(_spearman_rows(x[None, :], y[None, :])[0])


def _spearman_rows(X, Y) -> np.ndarray:
    """:func:`spearman` of every row pair ``(X[i], Y[i])`` (NaN where a row is constant)."""
    rx, ry = rankdata(X, method="average", axis=1), rankdata(Y, method="average", axis=1)
    rx, ry = rx - rx.mean(axis=1, keepdims=True), ry - ry.mean(axis=1, keepdims=True)
    den = np.sqrt((rx * rx).sum(axis=1) * (ry * ry).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (rx * ry).sum(axis=1) / np.where(den > 0, den, 1.0), np.nan)


def spearman_bootstrap(x, y, groups=None, n_boot: int = 2000, seed: int = 0,
                       level: float = 0.95, min_defined: float = MIN_DEFINED) -> dict:
    """Spearman correlation with a percentile cluster-bootstrap interval.

    Parameters
    ----------
    x, y : array_like, shape (k,)
    groups : array_like, shape (k,), optional
        Cluster labels (the head), whole clusters resampled with replacement; ``None``: one per point.
    n_boot, seed : int
        Resamples (``>= 1``) and the seed of ``numpy.random.default_rng``.
    level : float
        Coverage of the percentile interval, in (0, 1).
    min_defined : float
        Least fraction of resamples defining the correlation for an interval (from those only).

    Returns
    -------
    dict
        ``rho``, ``low``, ``high`` (NaN when undefined), ``n``, ``clusters``, ``n_boot``,
        ``n_valid`` (resamples where both sides varied), ``defined_fraction``.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be >= 1, got {n_boot}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    if not 0 <= min_defined <= 1:
        raise ValueError(f"min_defined must lie in [0, 1], got {min_defined}")
    g = np.arange(x.size) if groups is None else np.asarray(groups)
    if g.shape != x.shape:
        raise ValueError(f"groups must have shape {x.shape}, got {g.shape}")
    rho = spearman(x, y)
    labels, inv = np.unique(g, return_inverse=True)
    members = [np.flatnonzero(inv == c) for c in range(labels.size)]
    rng = np.random.default_rng(seed)
    picks = [rng.integers(0, labels.size, labels.size) for _ in range(int(n_boot))]
    if len({m.size for m in members}) == 1:  # equal clusters: all resamples at once, as one array
        idx = np.stack(members)[np.stack(picks)].reshape(len(picks), -1)
        boot = _spearman_rows(x[idx], y[idx])
    else:
        boot = np.array([spearman(x[i], y[i]) for i in (np.concatenate([members[c] for c in p]) for p in picks)])
    reps = [float(r) for r in boot if np.isfinite(r)]
    frac = len(reps) / int(n_boot)
    lo = hi = float("nan")
    if reps and frac >= min_defined:
        alpha = (1 - level) / 2
        lo, hi = (float(v) for v in np.quantile(reps, [alpha, 1 - alpha]))
    return {"rho": rho, "low": lo, "high": hi, "n": int(x.size), "clusters": int(labels.size),
            "n_boot": int(n_boot), "n_valid": len(reps), "defined_fraction": frac}


def sign_class(low: float, high: float) -> str:
    """``"+"`` (interval above 0), ``"-"`` (below 0), ``"0"`` (contains 0), ``"undefined"``."""
    if not (np.isfinite(low) and np.isfinite(high)):
        return "undefined"
    return "+" if low > 0 else "-" if high < 0 else "0"


def associations(settings: pd.DataFrame, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """Spearman associations of :data:`ASSOCIATION_PAIRS` within each multiplier, then
    ``"pooled"``: the fields of :func:`spearman_bootstrap` and ``sign``; whole heads resampled."""
    heads = (settings["layer"].astype(str) + "/" + settings["head"].astype(str)).to_numpy()
    mults = sorted(settings["multiplier"].unique())
    groups = [(f"{float(m):g}", (settings["multiplier"] == m).to_numpy()) for m in mults]
    groups.append(("pooled", np.ones(len(settings), bool)))
    out = []
    for x, y, _ in ASSOCIATION_PAIRS:
        for name, mask in groups:
            sub = settings[mask]
            res = spearman_bootstrap(sub[x].to_numpy(), sub[y].to_numpy(), groups=heads[mask],
                                     n_boot=n_boot, seed=seed)
            out.append({"x": x, "y": y, "multiplier": name, **res, "sign": sign_class(res["low"], res["high"])})
    return pd.DataFrame(out)


def summary_by_multiplier(settings: pd.DataFrame) -> pd.DataFrame:
    """Per multiplier: reductions (both dimensions), medians, brackets, certificates."""
    g = settings.groupby("multiplier")
    return pd.DataFrame({
        "settings": g.size(), "reduced_svd": g["reduction"].apply(lambda s: int((s > 0).sum())),
        "reduced_osc": g["reduction_osc"].apply(lambda s: int((s > 0).sum())),
        "median_reduction_osc": g["reduction_osc"].median(), "max_reduction_osc": g["reduction_osc"].max(),
        "median_r_osc": g["r_osc_tau"].median(), "mean_lower": g["lower_mean"].mean(),
        "mean_upper": g["upper_mean"].mean(), "poly_verified": g["poly_verified"].sum().astype(int),
        "median_log10_poly_count": g["log10_poly_count"].median(),
    }).reset_index()


def vacuous_counts(settings: pd.DataFrame) -> dict:
    """How many polynomial counts are vacuous (``poly_count >= n_tokens_max``, the trivial bound n), settings
    without a certificate (count ``+inf``) apart.

    Returns
    -------
    dict
        ``settings``, ``found``, ``vacuous``, ``fraction`` (vacuous / settings, NaN for none), ``no_certificate``.
    """
    n = len(settings)
    found = np.isfinite(settings["poly_count"].to_numpy(dtype=float))
    vac = found & (settings["poly_count"].to_numpy(dtype=float) >= settings["n_tokens_max"].to_numpy(dtype=float))
    return {"settings": n, "found": int(found.sum()), "vacuous": int(vac.sum()),
            "fraction": float(vac.sum() / n) if n else float("nan"),
            "no_certificate": int(n - found.sum())}


def reductions_at(settings: pd.DataFrame, multiplier: float) -> dict | None:
    """Heads with a reduction at one multiplier (``None`` when it was not run)."""
    sub = settings[np.isclose(settings["multiplier"], float(multiplier))]
    if sub.empty:
        return None
    return {"heads": len(sub), "osc": int((sub["reduction_osc"] > 0).sum()),
            "svd": int((sub["reduction"] > 0).sum())}


def _interval(r) -> str:
    if not np.isfinite(r["rho"]):
        return "undefined (one side constant)"
    if r["sign"] == "undefined":
        return (f"{r['rho']:.2f}, interval undefined ({100 * r['defined_fraction']:.0f}% of "
                f"resamples define it, below {100 * MIN_DEFINED:.0f}%)")
    where = {"+": "above 0", "-": "below 0", "0": "contains 0"}[r["sign"]]
    return f"{r['rho']:.2f} [{r['low']:.2f}, {r['high']:.2f}] ({where})"


def key_numbers(settings: pd.DataFrame, assoc: pd.DataFrame, heads: pd.DataFrame) -> dict:
    """Numbers the chapter's prose quotes (strings for ``glue``), all from this run."""
    at1 = reductions_at(settings, 1.0)
    red = settings["reduction_osc"] > 0
    counts = settings["poly_count"].astype(float)
    found_counts = counts[np.isfinite(counts)]
    vac = vacuous_counts(settings)
    out = {
        "n_heads": str(len(heads)), "n_settings": str(len(settings)), "d_head": str(int(settings["d_head"].iloc[0])),
        "reduced_osc": str(int(red.sum())), "reduced_svd": str(int((settings["reduction"] > 0).sum())),
        "median_reduction_osc": f"{100 * float(settings.loc[red, 'reduction_osc'].median()):.0f}%"
        if red.any() else "none",
        **{f"m1_{k}": str(at1[k]) if at1 else "not run" for k in ("osc", "svd", "heads")},
        "rebuild_max": f"{float(heads['recompute_error'].max()):.1e}",
        "rebuild_l1": f"{float(heads['recompute_l1'].max()):.1e}",
        "visible_dim_min": str(int(heads["visible_dim"].min())),
        "poly_median_count": f"{float(found_counts.median()):.3g}"
        if len(found_counts) else "none found",
        "max_tokens_seen": str(int(settings["n_tokens_max"].max())),
        "visible_dim_calib_min": str(int(heads["visible_dim_calib"].min())),
        "poly_vacuous": f"{vac['vacuous']} of {vac['settings']} settings "
        f"({100 * vac['fraction']:.0f}%)" if vac["settings"] else "no settings",
        "poly_missing": str(vac["no_certificate"]),
    }
    within, pooled = _pair(assoc, "r_osc_tau", "upper_mean")
    out["upper_within"], out["upper_pooled"] = _within_text(within), _interval(pooled)
    return out


def _pair(assoc: pd.DataFrame, x: str, y: str):
    """The rows of one pair at fixed temperatures, and its pooled row."""
    rows = assoc[(assoc["x"] == x) & (assoc["y"] == y)]
    return rows[rows["multiplier"] != "pooled"], rows[rows["multiplier"] == "pooled"].iloc[0]


def _within_text(within: pd.DataFrame) -> str:
    return "; ".join(f"multiplier {r['multiplier']}: {_interval(r)}" for _, r in within.iterrows())


def _association_verdict(assoc: pd.DataFrame, x: str, y: str) -> tuple[str, str]:
    """(one line per temperature then pooled, verdict word) for one pair."""
    within, pooled = _pair(assoc, x, y)
    defined = [s for s in within["sign"] if s != "undefined"]
    pos, neg = sum(s == "+" for s in defined), sum(s == "-" for s in defined)
    text = (f"at fixed temperature: {_within_text(within)}. Pooled over temperatures "
            f"(confounded by temperature): {_interval(pooled)}")
    if not defined:
        word = "**not testable** (no temperature with a defined interval)"
    elif pos == len(defined):
        word = f"**supported** (positive at all {len(defined)} temperatures with a defined interval)"
    elif pos:
        word = (f"**partly supported** (positive at {pos} of {len(defined)} temperatures with a "
                f"defined interval, negative at {neg})")
    else:
        word = (f"**not supported** (positive at none of {len(defined)} temperatures with a defined "
                f"interval, negative at {neg})")
    if pooled["sign"] == "+" and pos == 0:
        word += ("; positive only when pooled over temperatures (the temperature confounds it: "
                 "Simpson's paradox)" if neg else
                 "; positive only when pooled over temperatures, which mixes in the temperature")
    elif pooled["sign"] == "+" and pos < len(defined):
        word += "; the pooled interval is positive, but pooling mixes in the temperature"
    return text, word


def verdict(settings: pd.DataFrame, assoc: pd.DataFrame, model_name: str) -> str:
    """Comparison with the abstract's qualitative claims (Markdown), from this run's tables only."""
    n, d = len(settings), int(settings["d_head"].iloc[0])
    lines = [(f"**On {model_name}** ({n} head–temperature settings, d_head = {d}). Reading rules: a reduction "
             f"means r(tau) < d_head or r_osc(tau) < d_head; *modest*: median reduction among the settings with "
             f"one <= {100 * MODEST:.0f}%; *many*: at least {100 * MANY:.0f}% of settings; an association is "
             f"*positive* when its whole 95% head-bootstrap interval is above 0, and an interval is *undefined* "
             f"when fewer than {100 * MIN_DEFINED:.0f}% of the "
             f"resamples define it."), "", "*Effective-dimension reductions, per temperature:*", ""]
    for m, sub in settings.groupby("multiplier"):
        k_o, k_b = int((sub["reduction_osc"] > 0).sum()), int((sub["reduction"] > 0).sum())
        red_m = sub.loc[sub["reduction_osc"] > 0, "reduction_osc"]
        med = (f", median among them {100 * red_m.median():.0f}%" if k_o else "")
        own = " (the model's own scale)" if np.isclose(m, 1.0) else ""
        lines.append(f"* multiplier {m:g}{own}: r_osc(tau) < d_head for {k_o} of {len(sub)} heads"
                     f"{med}; the SVD bound r(tau) certifies {k_b}.")
    red = settings["reduction_osc"] > 0
    red_b = int((settings["reduction"] > 0).sum())
    frac = float(red.mean()) if n else 0.0
    med = float(settings.loc[red, "reduction_osc"].median()) if red.any() else 0.0
    summary = []
    if not red.any():
        summary.append("reductions: **not observed**")
    else:
        modest, many = med <= MODEST, frac >= MANY
        summary.append(
            f"reductions (measured-oscillation dimension): {'modest' if modest else 'not modest'} "
            f"(median {100 * med:.0f}%), in {100 * frac:.0f}% of settings ("
            + ("many" if many else "not many") + ") — "
            + ("**consistent with the abstract**" if modest and many
               else "**partly consistent**" if modest or many else "**not consistent**")
            + f"; the SVD bound r(tau) certifies a reduction in {red_b} of {n}")
    vac = vacuous_counts(settings)
    vac_text = (f"the counts are vacuous (at least the longest bracketed sequence) in "
                f"{vac['vacuous']} of {n} settings ({100 * vac['fraction']:.0f}%)"
                + (f", and {vac['no_certificate']} settings have no certificate up to the "
                   f"largest degree tried" if vac["no_certificate"] else ""))
    lines += ["", "*Associations (the book's reading of the abstract's \"positive associations\"):*", ""]
    for x, y, what in ASSOCIATION_PAIRS:
        if x != "r_osc_tau":
            continue
        text, word = _association_verdict(assoc, x, y)
        if y == "log10_poly_count":
            lines.append(f"* r_osc(tau) against {what}, {text}. Not judged on its own: at a "
                         "fixed degree D the count grows with r, so a positive value is built "
                         "in; the degree row below is the part that is not.")
            continue
        if y == "poly_degree":
            lines.append(f"* r_osc(tau) against {what}, {text}. Verdict for the polynomial "
                         f"certificates (from the degree): {word}; {vac_text}.")
            summary.append(f"association with the polynomial certificates, judged by their "
                           f"degree: {word}; {vac_text}")
            continue
        lines.append(f"* r_osc(tau) against {what}, {text}. Verdict: {word}.")
        summary.append(f"association with {what}: {word}")
    lines += ["", "**Summary against the abstract:** " + "; ".join(summary) + "."]
    return "\n".join(lines)


#: the chapter parameters passed on to :func:`attnrank_lite.calibration.study.run_study`
STUDY_PARAMETERS = ("layers", "heads", "multipliers", "eps", "tau", "bracket_sequences", "max_tokens",
                    "max_degree", "tau_values")
#: largest entry of ``abs(A_rebuilt - A_model)`` the chapter accepts (float32 model against float64 rebuild)
RECOMPUTE_THRESHOLD = 1e-5


def chapter_study(model, tokenizer, info, texts, params, certificates=None) -> dict:
    """:func:`~attnrank_lite.calibration.study.run_study` with the chapter's validated ``params`` (attributes or
    keys :data:`STUDY_PARAMETERS`); ``certificates``: a folder for the brackets' certificate files."""
    from .study import run_study

    get = params.get if isinstance(params, dict) else (lambda k: getattr(params, k))
    return run_study(model, tokenizer, info, texts, certificates=certificates,
                     **{k: get(k) for k in STUDY_PARAMETERS})


def recompute_check(heads: pd.DataFrame, threshold: float = RECOMPUTE_THRESHOLD) -> dict:
    r"""Whether every head's attention, rebuilt from its weights, is the model's own: ``error``
    (largest entry of :math:`|A_\text{rebuilt} - A_\text{model}|`), ``l1`` (largest row-l1
    distance), ``ok`` (``error < threshold``), ``message`` (the lines the chapter prints)."""
    error, l1 = float(heads["recompute_error"].max()), float(heads["recompute_l1"].max())
    message = (f"largest |A_rebuilt - A_model| entry: {error:.1e} (threshold {threshold:g})\n"
               f"largest row-l1 distance: {l1:.1e}")
    return {"error": error, "l1": l1, "ok": bool(error < threshold), "message": message}


def bracket_check(sequences: pd.DataFrame) -> dict:
    """``ok`` (every per-sequence bracket verified), ``poly_verified`` (count), ``brackets`` and
    ``message`` (the lines the chapter prints)."""
    n, poly = len(sequences), int(sequences["poly_verified"].sum())
    ok = bool(sequences["verified"].all())
    message = (f"{n} brackets, all verified: {ok}\n"
               f"polynomial certificates verified against A: {poly} of {n}")
    return {"ok": ok, "poly_verified": poly, "brackets": n, "message": message}
