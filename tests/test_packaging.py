"""Packaging: the metadata declares what the package needs, and the lock file covers it.

``test_fresh_venv_install_runs_the_readme_example`` is the check a new user makes: a virtual
environment *without* the system's packages, ``pip install`` of the package from its own
metadata (the dependencies resolved by pip from ``pyproject.toml``), then the README's example
and an import of every module that needs no extra. A dependency missing from ``pyproject.toml``
fails it with ModuleNotFoundError; a data file missing from the wheel fails the corpus check.
"""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from attnrank_lite.site.paths import LOCK_FILE, REPO, lock_record

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
#: top-level modules that only the extras provide (book build, BERT chapter)
EXTRA_ONLY = {"torch", "transformers", "safetensors", "tokenizers", "huggingface_hub", "sphinx", "docutils",
              "myst_nb", "myst_parser", "sphinx_proof", "sphinx_exercise", "jupyter_book",
              "papermill", "nbformat", "nbclient", "jupyter_client", "ipykernel", "IPython", "yaml",
              "filelock", "markdown_it", "mdit_py_plugins"}
#: what a plain install must bring (the mathematics, verify and sweep), and what it must not
CORE_MODULES = ("numpy", "scipy", "pandas", "matplotlib", "tqdm", "threadpoolctl", "psutil")
BOOK_ONLY = ("papermill", "nbformat", "nbclient", "jupyter_client", "ipykernel")


def _locked() -> dict:
    pins = re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+) \\$", (REPO / LOCK_FILE).read_text(), re.M)
    return {canonicalize_name(name): version for name, version in pins}


def _declared() -> list[Requirement]:
    project = PYPROJECT["project"]
    reqs = list(project["dependencies"])
    for extra in ("book", "bert", "dask", "test"):
        reqs += project["optional-dependencies"][extra]
    return [Requirement(r) for r in reqs]


def test_lock_file_pins_every_declared_dependency_within_its_range():
    locked = _locked()
    assert len(locked) > 100  # the whole environment, not only the direct dependencies
    for req in _declared():
        name = canonicalize_name(req.name)
        assert name in locked, f"{req} is declared in pyproject.toml but not in {LOCK_FILE}: run make lock"
        assert req.specifier.contains(locked[name], prereleases=True), \
            f"{LOCK_FILE} pins {name}=={locked[name]}, outside {req}: run make lock"


def test_every_locked_package_has_a_hash():
    text = (REPO / LOCK_FILE).read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 2)[2])
    assert blocks and all("--hash=sha256:" in b for b in blocks if "==" in b)


def test_lock_record_names_the_file_and_its_sha256(tmp_path):
    (tmp_path / LOCK_FILE).write_bytes(b"abc")
    # the SHA-256 test vector of "abc" (FIPS 180-2, appendix B.1)
    assert lock_record(tmp_path) == {
        "file": LOCK_FILE, "sha256": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}
    assert lock_record(tmp_path / "elsewhere") == {"file": None, "sha256": None}


def test_runtime_dependencies_cover_the_imports_of_the_package():
    """Every third-party module imported anywhere in attnrank_lite is declared (runtime or extra)."""
    declared = {canonicalize_name(r.name) for r in _declared()}
    module_to_dist = {"PIL": "pillow", "yaml": "pyyaml", "IPython": "ipython", "filelock": "filelock",
                      "markdown_it": "markdown-it-py"}
    stdlib = set(sys.stdlib_module_names)
    seen = set()
    for path in (REPO / "attnrank_lite").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):  # real import statements, not prose
            if isinstance(node, ast.Import):
                tops = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                tops = [node.module.split(".")[0]]
            else:
                continue
            seen |= {t for t in tops if t not in stdlib and t not in ("attnrank_lite", "__future__")}
    assert {"numpy", "scipy", "psutil"} <= seen
    for top in sorted(seen):
        dist = canonicalize_name(module_to_dist.get(top, top))
        assert dist in declared, f"attnrank_lite imports {top}, which pyproject.toml does not declare"


README_EXAMPLE = re.search(r"## Using the package\n\n```python\n(.*?)```", (REPO / "README.md").read_text(),
                           re.S).group(1)

CHECK_IMPORTS = f"""
import importlib, pkgutil, warnings, attnrank_lite
assert attnrank_lite.__file__.startswith({{venv!r}}), attnrank_lite.__file__  # the installed copy
warnings.simplefilter("ignore", DeprecationWarning)
extra_only = {sorted(EXTRA_ONLY)!r}
for m in pkgutil.walk_packages(attnrank_lite.__path__, "attnrank_lite."):
    if m.name.endswith("__main__"):
        continue  # runs the command line
    try:
        importlib.import_module(m.name)
    except ModuleNotFoundError as exc:
        if exc.name.split(".")[0] not in extra_only:
            raise
from attnrank_lite.calibration.corpus import load_corpus
print("corpus passages:", len(load_corpus()))
from attnrank_lite.laws import law_store
from attnrank_lite.site.paths import REPO
from attnrank_lite.site.chapters import get_chapter
store = REPO / get_chapter("ch07").defaults()["store"]
assert len(law_store.read_store(store)) > 0, store  # chapter 7's stored sweep ships with the package
"""


SAVE_BRACKET = """
import numpy as np
from attnrank_lite import rank_bracket, softmax_attention
Q = np.random.default_rng(0).standard_normal((60, 4))
A = softmax_attention(Q, Q, 2.0)
rank_bracket(A, 0.25).save("b.npz", Q=Q, K=Q, beta=2.0)
"""


@pytest.mark.slow
def test_fresh_venv_install_runs_the_readme_example(tmp_path):
    src = tmp_path / "src"  # the files a build uses, copied so that the build leaves the checkout clean
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(REPO / name, src / name)
    shutil.copytree(REPO / "attnrank_lite", src / "attnrank_lite", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)  # no system site packages
    py = str(venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["MPLBACKEND"] = "Agg"
    res = subprocess.run([py, "-m", "pip", "install", "--quiet", "--no-compile", "--only-binary", ":all:", str(src)],
                         capture_output=True, text=True, env=env, timeout=1500)
    assert res.returncode == 0, res.stderr[-3000:]
    res = subprocess.run([py, "-c", README_EXAMPLE], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    lower, upper, ok = res.stdout.split()
    assert 1 <= int(lower) <= int(upper) and ok == "True"
    res = subprocess.run([py, "-c", CHECK_IMPORTS.format(venv=str(venv))], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert res.returncode == 0, res.stderr[-3000:]
    assert int(res.stdout.split(":")[1]) > 0
    freeze = subprocess.run([py, "-m", "pip", "list", "--format=freeze"], capture_output=True, text=True,
                            env=env).stdout
    assert "torch==" not in freeze  # the BERT stack is an extra, not forced on every reader
    installed = {canonicalize_name(line.split("==")[0]) for line in freeze.split()}
    assert not {canonicalize_name(b) for b in BOOK_ONLY} & installed  # the notebook stack is the book extra
    # verify and sweep work from a plain install; run names the extra it needs, in one line
    saved = subprocess.run([py, "-c", SAVE_BRACKET], capture_output=True, text=True, env=env, cwd=tmp_path,
                           timeout=600)
    assert saved.returncode == 0, saved.stderr[-3000:]
    res = subprocess.run([py, "-m", "attnrank_lite", "verify", "b.npz"], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=600)
    assert res.returncode == 0 and "verified:" in res.stdout, res.stdout + res.stderr[-3000:]
    res = subprocess.run([py, "-m", "attnrank_lite", "run", "ch01", "--profile", "quick", "-o", "runs"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert res.returncode == 13 and 'pip install "attnrank-lite[book]"' in res.stderr, res.stderr[-3000:]
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "runs").exists()
