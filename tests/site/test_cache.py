"""The cache of executed chapters: a change to any input re-executes exactly the chapters it
affects, and an entry is whole or absent (issue 16).

A tiny fake chapter set stands in for the book: three specs with one-cell notebooks, and a
stand-in for the chapter process that writes a run folder and logs its runs, so the tests
exercise the build's real route through :func:`attnrank_lite.site.schedule.execute_chapters`
and :class:`attnrank_lite.site.cache.ChapterCache` in seconds.
"""
import hashlib
import shutil
import sys
import types
from pathlib import Path

import nbformat
import pytest

from attnrank_lite.site import cache as cache_mod
from attnrank_lite.site import schedule
from attnrank_lite.site.cache import ChapterCache, chapter_key, environment, package_digest
from attnrank_lite.site.spec import ChapterSpec, Param

REPO = Path(__file__).resolve().parents[2]


def _spec(i: int) -> ChapterSpec:
    return ChapterSpec(key=f"ch9{i}", notebook=f"9{i}_fake.ipynb", title=f"fake {i}",
                       params=(Param("n", 10, "int", "size", low=1, high=1000),))


#: a stand-in for ``python -m attnrank_lite run KEY ... -o OUT``: the run folder of a one-cell chapter
FAKE_RUN = """
import json, shutil, sys
from pathlib import Path
log, key, out = sys.argv[1], sys.argv[3], Path(sys.argv[sys.argv.index("-o") + 1])
nb = f"{key[2:]}_fake.ipynb"
(out / key / "results" / key).mkdir(parents=True)
shutil.copy(Path(NBDIR) / nb, out / key / nb)
(out / key / "results" / key / "t.csv").write_text("a,b\\n1,2\\n")
with open(log, "a") as f:
    f.write(key + "\\n")
rec = {"chapter": key, "notebook": nb, "seconds": 1.0, "finished": f"run {len(open(log).read().split()) - 1}"}
(out / key / f"{key[2:]}_fake.run.json").write_text(json.dumps(rec))
"""


@pytest.fixture
def fake_book(tmp_path, monkeypatch):
    """Three fake chapters, a fake package folder and a logging stand-in for the chapter process."""
    nbdir = tmp_path / "notebooks"
    nbdir.mkdir()
    specs = [_spec(i) for i in range(3)]
    for s in specs:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"x = '{s.key}'")])
        nbformat.write(nb, nbdir / s.notebook)
    pkg = tmp_path / "pkg"
    (pkg / "engine").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "bracket.py").write_text("RANK = 1\n")
    monkeypatch.setattr(schedule, "NOTEBOOK_DIR", nbdir)
    monkeypatch.setattr(cache_mod, "PACKAGE_DIR", pkg)
    script, log = tmp_path / "fake_run.py", tmp_path / "ran.log"
    script.write_text(FAKE_RUN.replace("NBDIR", repr(str(nbdir))))
    monkeypatch.setattr(schedule, "CHILD", (sys.executable, str(script), str(log)))
    ran = []
    book = {"specs": specs, "values": {s.key: {"n": 10} for s in specs}, "ran": ran, "pkg": pkg,
            "nbdir": nbdir, "cache": ChapterCache(tmp_path / "cache"), "tmp": tmp_path, "builds": 0}

    def build():
        book["builds"] += 1
        log.write_text("")
        items = [(s, book["values"][s.key]) for s in specs]
        out = tmp_path / f"runs{book['builds']}"
        recs = schedule.execute_chapters(items, "quick", out, jobs=1, cache=book["cache"], log=lambda *_: None)
        ran[:] = log.read_text().split()
        for s in specs:  # every chapter has its complete run folder, however it got there
            assert (out / s.key / s.notebook).is_file() and (out / s.key / "results" / s.key / "t.csv").is_file()
        return sorted(ran), recs

    book["build"] = build
    return book


ALL = ["ch90", "ch91", "ch92"]


def test_second_build_reuses_every_chapter(fake_book):
    assert fake_book["build"]()[0] == ALL
    ran, recs = fake_book["build"]()
    assert ran == []
    assert [r["cache"] for r in recs] == ["reused"] * 3
    assert [r["finished"] for r in recs] == ["run 0", "run 1", "run 2"]  # the records of the first build


def test_package_source_change_reexecutes_every_chapter(fake_book):
    fake_book["build"]()
    (fake_book["pkg"] / "engine" / "bracket.py").write_text("RANK = 2\n")
    assert fake_book["build"]()[0] == ALL
    assert fake_book["build"]()[0] == []


def test_new_package_file_reexecutes_every_chapter(fake_book):
    fake_book["build"]()
    (fake_book["pkg"] / "engine" / "extra_data.json").write_text("{}")
    assert fake_book["build"]()[0] == ALL


def test_one_parameter_reexecutes_only_that_chapter(fake_book):
    fake_book["build"]()
    fake_book["values"]["ch91"] = {"n": 11}
    assert fake_book["build"]()[0] == ["ch91"]
    fake_book["values"]["ch91"] = {"n": 10}  # back to the first value: its entry is still there
    assert fake_book["build"]()[0] == []


def test_notebook_change_reexecutes_only_that_chapter(fake_book):
    fake_book["build"]()
    path = fake_book["nbdir"] / "92_fake.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("one more sentence"))
    nbformat.write(nb, path)
    assert fake_book["build"]()[0] == ["ch92"]


@pytest.mark.parametrize("change", ["the lock file", "an installed version"])
def test_environment_change_reexecutes_every_chapter(fake_book, monkeypatch, change):
    fake_book["build"]()
    if change == "the lock file":
        monkeypatch.setattr(cache_mod, "lock_record", lambda: {"file": "requirements.txt", "sha256": "0" * 64})
    else:
        real = list(cache_mod.distributions())
        monkeypatch.setattr(cache_mod, "distributions", lambda: [
            types.SimpleNamespace(metadata=d.metadata, version=d.version + ".post1")
            if d.metadata["Name"].lower() == "numpy" else d for d in real])
    assert fake_book["build"]()[0] == ALL
    assert fake_book["build"]()[0] == []


def test_a_store_that_fails_midway_leaves_no_entry(fake_book, monkeypatch):
    """An entry is copied to a hidden folder and renamed into place: a store that fails (a full
    disk) leaves neither an entry nor its hidden folder, and the next build executes again."""
    real = shutil.copytree

    def copy_then_fail(src, dst, *args, **kw):  # the whole copy, then a failure before the rename
        real(src, dst, *args, **kw)
        if Path(dst).parent.name.startswith(".tmp-"):
            raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache_mod.shutil, "copytree", copy_then_fail)
    ran, recs = fake_book["build"]()
    assert ran == ALL and all("cache" not in r for r in recs)
    assert list(fake_book["cache"].root.iterdir()) == []
    monkeypatch.setattr(cache_mod.shutil, "copytree", real)
    assert fake_book["build"]()[0] == ALL
    assert fake_book["build"]()[0] == []


def test_package_digest_covers_every_file_of_the_package(tmp_path):
    """The real package: a copy (with its pyproject.toml) has the same digest, and a change deep
    inside changes it."""
    src = Path(cache_mod.__file__).resolve().parents[1]
    copy = _checkout_copy(tmp_path)
    assert package_digest(copy) == package_digest(src)
    deep = sorted(copy.rglob("*.py"), key=lambda p: (-len(p.parts), str(p)))[0]
    deep.write_text(deep.read_text() + "\n# changed\n")
    assert package_digest(copy) != package_digest(src)


def test_environment_names_the_lock_file_and_every_locked_package():
    env = environment()
    lock = (REPO / "requirements.txt").read_bytes()
    assert env["lock"] == hashlib.sha256(lock).hexdigest()
    installed = {name.lower().replace("_", "-").replace(".", "-") for name, _ in
                 (entry.split("==") for entry in env["installed"])}
    for line in lock.decode().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):  # skip the lock file's --hash lines
            assert line.split("==")[0].lower().replace("_", "-").replace(".", "-") in installed, line


def test_key_depends_on_profile_and_values(tmp_path):
    nb = tmp_path / "a.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), nb)
    args = dict(package="p", env={"numpy": "1"})
    k = chapter_key(nb, "ch01", "quick", {"n": 1}, **args)
    assert k == chapter_key(nb, "ch01", "quick", {"n": 1}, **args)
    assert k != chapter_key(nb, "ch01", "book", {"n": 1}, **args)
    assert k != chapter_key(nb, "ch01", "quick", {"n": 2}, **args)
    assert k != chapter_key(nb, "ch01", "quick", {"n": 1}, package="q", env={"numpy": "1"})
    assert k != chapter_key(nb, "ch01", "quick", {"n": 1}, package="p", env={"numpy": "2"})


def test_a_cache_that_cannot_be_written_does_not_fail_the_build(fake_book):
    fake_book["cache"].root.parent.mkdir(parents=True, exist_ok=True)
    fake_book["cache"].root.write_text("a file where the cache folder should be")
    ran, recs = fake_book["build"]()
    assert ran == ALL and all("cache" not in r for r in recs)


def _checkout_copy(tmp_path) -> Path:
    """The package and its pyproject.toml copied as a checkout holds them (bytecode left out)."""
    src = Path(cache_mod.__file__).resolve().parents[1]
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    copy = tmp_path / "attnrank_lite"
    shutil.copytree(src, copy, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copy


def test_a_stray_file_in_the_package_does_not_change_the_key_but_its_data_does(tmp_path):
    """Issue 24 item 1: an untracked note or bytecode in a checkout's package left every chapter
    stale-keyed (all seven re-executed); the package data (the stored sweep) and any module must
    still change the key."""
    copy = _checkout_copy(tmp_path)
    before = package_digest(copy)
    (copy / "foo.txt").write_text("a note\n")
    (copy / "laws" / "scale.py.orig").write_text("an editor's backup\n")
    (copy / "laws" / "__pycache__").mkdir()
    (copy / "laws" / "__pycache__" / "scale.cpython-311.pyc").write_bytes(b"\0" * 16)
    assert package_digest(copy) == before
    store = copy / "laws" / "data" / "laws_paper.sqlite"
    data = store.read_bytes()
    store.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert package_digest(copy) != before
    store.write_bytes(data)
    assert package_digest(copy) == before
    (copy / "laws" / "new_module.py").write_text("X = 1\n")
    assert package_digest(copy) != before


def test_every_tracked_file_of_the_package_enters_the_key():
    """A file the repository tracks in the package (a module, package data a chapter reads) must
    be in the key: a data file outside ``[tool.setuptools.package-data]`` would be missed."""
    import subprocess

    r = subprocess.run(["git", "ls-files", "-z", "attnrank_lite"], cwd=REPO, capture_output=True)
    if r.returncode != 0 or not r.stdout:
        pytest.skip("not a git checkout")
    tracked = {p for p in r.stdout.decode().split("\0") if p and (REPO / p).is_file()}
    keyed = {p.relative_to(REPO).as_posix() for p in cache_mod.package_files(REPO / "attnrank_lite")}
    assert tracked <= keyed, sorted(tracked - keyed)


def test_chapter_7s_key_follows_the_bytes_of_its_store(tmp_path):
    """The real chapter 7 with its ``store`` outside the package: editing the store (a
    recomputed sweep) gives a new key, so the page is not reused with the old table."""
    from attnrank_lite.site.chapters.ch07 import SPEC

    store = tmp_path / "laws.sqlite"
    shutil.copy(REPO / SPEC.profile("book")["store"], store)
    values = SPEC.validate({**SPEC.profile("quick"), "store": str(store)})

    def key():
        return chapter_key(REPO / "notebooks" / SPEC.notebook, "ch07", "quick", values, "p", {},
                           SPEC.inputs(values))

    first = key()
    data = store.read_bytes()
    store.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert key() != first
    store.write_bytes(data)
    assert key() == first


def test_an_input_file_change_reexecutes_only_its_chapter(fake_book):
    """A chapter whose spec names a file it reads (``inputs``): editing or removing the file
    re-executes that chapter and no other."""
    import dataclasses

    data = fake_book["tmp"] / "input.csv"
    data.write_text("a\n1\n")
    fake_book["specs"][1] = dataclasses.replace(fake_book["specs"][1], inputs=lambda v: [data])
    assert fake_book["build"]()[0] == ALL
    data.write_text("a\n2\n")
    assert fake_book["build"]()[0] == ["ch91"]
    data.unlink()
    assert fake_book["build"]()[0] == ["ch91"]
