"""Chapter 2: spherical self-attention, Theta(min{n, (1+beta)^{(d-1)/2}}).

Its declaration (parameters, profiles, code map) is ``ch02.toml``."""
from ..memory import dense_need
from ..runtime import Cost
from ..spec import chapter_spec


def _memory(v):
    """One dense n x n attention matrix and its bracket per sweep."""
    for name in ("circle_n", "sphere_n", "config_n", "spectrum_n"):
        yield dense_need(v[name], v[name], name, "an attention matrix and its bracket")
    # d = 4, 5: streamed (A never stored): the harmonic basis, about 12 (1+beta)^{(d-1)/2} columns, and row blocks
    for name, betas, d in (("d4_n", "d4_betas", 4), ("d5_n", "d5_betas", 5)):
        if v[name] > 0:
            cols = min(v[name], 12 * (1 + max(v[betas])) ** ((d - 1) / 2))
            yield dense_need(v[name], cols + 2048, name, "streamed brackets: basis and row blocks",
                             copies=3)
    n = max(v["nsweep_ns"])
    yield dense_need(n, n, "nsweep_ns", "the largest circle of the n-sweep")


def _runtime(v):
    """The work of the costly steps: dense brackets n^2 per beta and eps (their verifying products
    dominate the SVD at these sizes), streamed ones n + n^2 (1+beta)^((d-1)/2)."""
    ne = len(v["eps_values"])
    for name in ("circle", "sphere", "config"):
        n, betas = v[f"{name}_n"], v[f"{name}_betas"]
        yield Cost(name, ne * len(betas) * n ** 2, f"{name}_n", f"{len(betas)} dense brackets of {n} points")
    for d in (4, 5):
        n, betas = v[f"d{d}_n"], v[f"d{d}_betas"]
        if n:
            yield Cost("points", n, f"d{d}_n", f"{n} well-spread points on S^{d - 1}")
            work = ne * n * n * sum((1 + b) ** ((d - 1) / 2) for b in betas)  # ~ harmonics per beta
            yield Cost("streamed", work, f"d{d}_n", f"streamed brackets of {n} points")
    yield Cost("nsweep", ne * sum(n ** 2 for n in v["nsweep_ns"]), "nsweep_ns", "the n-sweep's dense brackets")
    yield Cost("spectrum", v["spectrum_n"] ** 3, "spectrum_n", f"the spectrum of {v['spectrum_n']} points")
    yield Cost("tables", 1, "eps_values", "tables, slopes and figures")


SPEC = chapter_spec(
    __file__,
    constraints=(
        lambda v: None if max(v["nsweep_ns"]) <= 4096 else
        f"parameter 'nsweep_ns' must stay <= 4096 (dense brackets); got max {max(v['nsweep_ns'])}",
    ),
    memory=_memory,
    runtime=_runtime,
)
