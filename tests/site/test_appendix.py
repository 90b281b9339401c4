"""The generated back-matter pages (theorem index, reproducibility appendix) and the site settings.

The scanner is checked on hand-written MyST text whose boxes are known, and on the repository's
own chapters against the book's rule: every statement box opens with its source marker.
"""
from __future__ import annotations

import dataclasses
import json
import pkgutil
import re
from pathlib import Path

import pytest
import yaml

from attnrank_lite.site import appendix, site_assets
from attnrank_lite.site.chapters import all_chapters, get_chapter

REPO = Path(__file__).resolve().parents[2]

SAMPLE = """# A page

```{prf:theorem} Sphere law
:label: thm-sphere

**Claim of the paper** (abstract, sentence 3): "spherical self-attention has rank ..."
```

Some text.

````{prf:proposition} Exact cases with $\\ell_1$
:label: prop-exact
:nonumber:

**Proved here.** For row-stochastic $A$ ...

```{math}
x = 1
```
````

```{prf:proof}
Because.
```

:::{prf:lemma} No marker
:label: lem-x
Just a statement.
:::

```{prf:definition} Rank
:label: def-rank

**Definition (standard).** The rank is ...
```

```{prf:observation} Slopes
**Numerical evidence here.** Fitted slopes ...
```

```python
# a code block mentioning {prf:theorem} is not a box
```
"""


def test_scan_markdown_finds_exactly_the_boxes():
    boxes = appendix.scan_markdown(SAMPLE, page="notebooks/99_x")
    assert [(b.kind, b.label) for b in boxes] == [
        ("theorem", "thm-sphere"), ("proposition", "prop-exact"), ("lemma", "lem-x"),
        ("definition", "def-rank"), ("observation", None)]
    assert [b.marker for b in boxes] == ["Claim of the paper", "Proved here", None, None,
                                         "Numerical evidence here"]
    assert [b.has_proof for b in boxes] == [False, True, False, False, False]
    assert boxes[1].title == "Exact cases with $\\ell_1$"
    assert boxes[3].lead == "Definition (standard)."
    assert all(b.page == "notebooks/99_x" for b in boxes)


def test_theorem_index_marks_sources_and_missing_proofs():
    boxes = appendix.scan_markdown(SAMPLE, page="notebooks/99_x")
    boxes.append(appendix.StatementBox("theorem", "T", "thm-noproof", "Proved here", "Proved here.",
                                       "notebooks/99_x", has_proof=False))
    text = appendix.render_theorem_index(boxes, code={
        "prop-exact": ["attnrank_lite.engine.norms.row_l1", "attnrank_lite.engine.bracket.rank_bracket"]})
    assert "| {prf:ref}`thm-sphere` | Sphere law | **Claim of the paper** | — | — |" in text
    assert ("| {prf:ref}`prop-exact` | Exact cases with $\\ell_1$ | **Proved here** | yes | "
            '<a class="reference internal" href="api/engine.html#attnrank_lite.engine.norms.row_l1">'
            '<code class="docutils literal notranslate">engine.<wbr>norms.<wbr>row_l1</code></a><br>'
            '<a class="reference internal" href="api/engine.html#attnrank_lite.engine.bracket.rank_bracket">'
            '<code class="docutils literal notranslate">engine.<wbr>bracket.<wbr>rank_bracket</code></a> |') in text
    assert "| {prf:ref}`lem-x` | No marker | **no source marker** | — | — |" in text
    assert "| {prf:ref}`thm-noproof` | T | **Proved here** | **missing** | — |" in text
    assert "| Observation (no label) | Slopes |" in text  # an unlabelled box cannot be referenced
    assert "## {doc}`../notebooks/99_x`" in text  # no title known: the link is the heading
    titled = appendix.render_theorem_index(boxes, {"notebooks/99_x": "9. A title with $x$"})
    assert "## 9. A title with $x$\n\n{doc}`Open the page <../notebooks/99_x>`" in titled
    assert "6 boxes — 1 claims of the paper, 2 proved here, 1 numerical evidence, 1 definitions, " \
           "1 without a source marker." in text
    # the legend says what a claim box's kind means and where a proved reading lives
    assert "an empirical one (the BERT calibration) in an\n  observation box" in text
    assert "the proof belongs to the **Proved here** box it names" in text


def code_map_problems(specs=None, root: Path = REPO) -> list[str]:
    """What is wrong with the chapters' ``code`` maps: a label that is not a statement box of the
    chapter's page, a labelled box without code, a path that does not import a function or class.
    Empty when all is well."""
    problems = []
    for spec in all_chapters() if specs is None else specs:
        page = f"notebooks/{spec.stem}"
        path = appendix._resolve(root, page)
        boxes = appendix.scan_markdown(appendix._page_markdown(path), page) if path else []
        labels = {b.label for b in boxes if b.label}
        for label, paths in spec.code.items():
            if label not in labels:
                problems.append(f"{spec.key}: label {label!r} of the code map is not a statement box of {page}")
            if not paths:
                problems.append(f"{spec.key}: label {label!r} maps to no code")
            for dotted in paths:
                try:
                    if not callable(pkgutil.resolve_name(dotted)):
                        problems.append(f"{spec.key}: {label}: {dotted!r} is not a function or class")
                except (ImportError, AttributeError, ValueError) as exc:
                    problems.append(f"{spec.key}: {label}: {dotted!r} does not import ({exc})")
        problems += [f"{spec.key}: statement {label!r} of {page} has no entry in the code map"
                     for label in sorted(labels - set(spec.code))]
    return problems



def test_code_maps_name_real_labels_and_importable_functions():
    """Every chapter's ``code`` map: each label is a statement box of its page, each labelled box of
    the page has an entry, each dotted path imports a function or class."""
    assert code_map_problems() == []
    assert all(callable(pkgutil.resolve_name(p)) for paths in appendix.code_maps().values() for p in paths)


def test_code_map_check_can_fail():
    spec = dataclasses.replace(get_chapter("ch01"), code={
        **get_chapter("ch01").code,
        "prop-no-such-statement": ["attnrank_lite.engine.norms.row_l1"],
        "prop-bounded-outputs": ["attnrank_lite.engine.norms.no_such_function", "attnrank_lite.engine.norms"],
    })
    del spec.code["prop-exact-cases"]
    problems = "\n".join(code_map_problems([spec]))
    assert "'prop-no-such-statement' of the code map is not a statement box" in problems
    assert "'attnrank_lite.engine.norms.no_such_function' does not import" in problems
    assert "'attnrank_lite.engine.norms' is not a function or class" in problems
    assert "statement 'prop-exact-cases' of notebooks/01_approximation_rank has no entry" in problems


def test_every_statement_box_of_the_book_has_label_and_source_marker():
    """The book's rule, on the chapters in _toc.yml: label + Claim/Proved/Numerical marker."""
    boxes = appendix.scan_toc(REPO)
    assert boxes, "no statement boxes found in the table of contents"
    bad = [f"{b.page}: {b.kind} {b.label or b.title!r}" for b in boxes
           if b.label is None or (b.marker is None and b.kind != "definition")]
    assert not bad, "boxes without a label or source marker: " + "; ".join(bad)
    assert not [b for b in boxes if b.marker == "Proved here" and not b.has_proof], \
        "a 'Proved here' box without a {prf:proof} after it"


def test_empirical_claim_sits_in_an_observation_box():
    """The abstract's BERT sentence ("we observe ...") is an empirical claim: not a theorem box."""
    boxes = {b.label: b for b in appendix.scan_toc(REPO)}
    bert = boxes["claim-bert-calibration"]
    assert bert.kind == "observation" and bert.marker == "Claim of the paper"
    assert not bert.has_proof


def test_toc_lists_the_using_and_back_matter_pages():
    files = appendix.toc_files(REPO / "_toc.yml")
    for page in ("book/rerun", "book/course", "book/theorems", "book/reproducibility", "book/bibliography"):
        assert page in files
        assert (REPO / f"{page}.md").is_file()


def _summary():
    rec = {"chapter": "ch01", "title": "t", "notebook": "01_approximation_rank.ipynb", "profile": "quick",
           "parameters": get_chapter("ch01").profile("quick"), "seconds": 12.34,
           "finished": "2026-01-01T00:00:00+00:00", "machine": "x86_64, 2 CPUs",
           "results": ["results/ch01/exact_cases.csv", "results/ch01/missing.csv"]}
    return {"profile": "quick", "versions": {"python": "3.11.7", "numpy": "2.4.6"}, "chapters": [rec],
            "execution_seconds": 12.5}


def test_reproducibility_page_from_run_records(tmp_path):
    extra = tmp_path / "_extra"
    (extra / "notebooks" / "results" / "ch01").mkdir(parents=True)
    (extra / "notebooks" / "results" / "ch01" / "exact_cases.csv").write_text("a\n1\n")
    text = appendix.render_reproducibility(
        _summary(), {"01_approximation_rank.ipynb": "notebooks/01_approximation_rank"}, extra_root=extra,
        git_state="`abc`")
    quick, book = get_chapter("ch01").profile("quick"), get_chapter("ch01").defaults()
    changed = [k for k in book if quick[k] != book[k]]
    assert changed  # the quick profile changes something, so the table must show it
    for k in changed:
        assert f"| `{k}` | `{quick[k]!r}` (changed) | `{book[k]!r}` |" in text
    assert "| numpy | 2.4.6 |" in text
    assert "**12.3 s**" in text
    assert '<a href="../notebooks/results/ch01/exact_cases.csv">exact_cases.csv</a>' in text
    assert "missing.csv" not in text  # only tables that exist in the site are linked
    assert "python -m attnrank_lite run ch01 --profile quick -o runs" in text
    assert "### ch01: {doc}`../notebooks/01_approximation_rank`" in text
    assert appendix.page_title("intro\n# 1. The max-row-$\\ell_1$ rank\n## sub") == "1. The max-row-$\\ell_1$ rank"


def test_write_generated_pages_into_a_stage(tmp_path):
    stage = tmp_path / "stage"
    (stage / "book").mkdir(parents=True)
    (stage / "notebooks").mkdir()
    (stage / "_toc.yml").write_text(yaml.safe_dump({
        "format": "jb-book", "root": "book/intro",
        "parts": [{"caption": "C", "chapters": [{"file": "notebooks/99_x"}, {"file": "book/theorems"}]}]}))
    (stage / "book" / "intro.md").write_text("# Intro\n")
    nb = {"cells": [{"id": "prose", "cell_type": "markdown", "metadata": {}, "source": SAMPLE.splitlines(True)},
                    {"id": "code", "cell_type": "code", "metadata": {}, "source": ["x = 1"], "outputs": [],
                     "execution_count": None}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (stage / "notebooks" / "99_x.ipynb").write_text(json.dumps(nb))
    notes = []
    out = appendix.write_generated_pages(stage, _summary(), log=notes.append)
    assert "{prf:ref}`thm-sphere`" in out["theorems"].read_text()
    assert "## A page\n\n{doc}`Open the page <../notebooks/99_x>`" in out["theorems"].read_text()
    assert "# Reproducibility" in out["reproducibility"].read_text()
    assert any("lem-x" in n for n in notes)  # the unmarked lemma is reported in the build log


def test_launch_buttons_need_the_repository_url(tmp_path):
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert config["launch_buttons"]["binderhub_url"] and config["launch_buttons"]["colab_url"]
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    config["repository"]["url"] = ""
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    notes = []
    staged = site_assets.prepare_stage_config(tmp_path, log=notes.append)
    assert staged["launch_buttons"]["binderhub_url"] == "" and staged["launch_buttons"]["colab_url"] == ""
    assert yaml.safe_load((tmp_path / "_config.yml").read_text())["launch_buttons"]["colab_url"] == ""
    assert notes and "repository.url" in notes[0]
    config["repository"]["url"] = "https://github.com/someone/attnrank"
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    staged = site_assets.prepare_stage_config(tmp_path, log=notes.append)
    assert staged["launch_buttons"]["binderhub_url"] == "https://mybinder.org"


def test_mathjax_is_local_and_pinned(tmp_path):
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    path = config["sphinx"]["config"]["mathjax_path"]
    assert "://" not in path and path.endswith(site_assets.MATHJAX_ENTRY)
    es5 = site_assets.ensure_mathjax()
    pkg = json.loads((es5.parent / "package.json").read_text())
    assert pkg["version"] == site_assets.MATHJAX_VERSION
    staged = site_assets.stage_mathjax(tmp_path, es5)
    # the page loads _static/<path>: it must land on the staged copy (published from _extra/)
    assert (tmp_path / "_extra" / "mathjax" / site_assets.MATHJAX_ENTRY).is_file()
    assert staged == tmp_path / "_extra" / "mathjax"
    assert (staged / "output" / "chtml" / "fonts" / "woff-v2").is_dir()
    assert "Apache License" in (staged / "LICENSE").read_text()  # MathJax's licence travels with it
    assert path == "../mathjax/" + site_assets.MATHJAX_ENTRY


def test_mathjax_comes_from_the_python_package_without_npm(monkeypatch):
    es5 = site_assets.ensure_mathjax()
    assert "site-packages" in str(es5) and (es5 / site_assets.MATHJAX_ENTRY).is_file()
    assert json.loads((es5.parent / "package.json").read_text())["version"] == site_assets.MATHJAX_VERSION
    monkeypatch.setattr(site_assets, "MATHJAX_VERSION", "3.2.3")  # the installed package is not that release
    with pytest.raises(RuntimeError, match="MathJax 3.2.3 .* missing: pip install django-static-mathjax==3.2.2.1"):
        site_assets.ensure_mathjax()


def test_every_code_path_of_the_theorem_index_links_to_a_documented_module():
    """Finding 13 of issue 22: ``attnrank_lite.point_bracket`` (a re-export) had no link. Every
    path of every chapter's code map gets an API address, in a module its API page documents."""
    paths = {p for ps in appendix.code_maps().values() for p in ps}
    assert "attnrank_lite.point_bracket" in paths
    for p in sorted(paths):
        href = appendix.api_href(p)
        assert href is not None, p
        group, anchor = re.fullmatch(r"api/(\w+)\.html#([\w.]+)", href).groups()
        module = anchor.rsplit(".", 1)[0]
        page = (REPO / "book" / "api" / f"{group}.md").read_text()
        assert f".. automodule:: {module}\n" in page, (p, module)
    cell = appendix._code_cell(["attnrank_lite.point_bracket"])
    assert 'href="api/engine.html#attnrank_lite.engine.streaming.point_bracket"' in cell


def test_reproducibility_page_links_certificate_bundles(tmp_path):
    extra = tmp_path / "_extra"
    (extra / "notebooks" / "results" / "ch01").mkdir(parents=True)
    (extra / "notebooks" / "results" / "ch01" / "eps_sweep_certificates.zip").write_bytes(b"PK")
    summary = _summary()
    summary["chapters"][0].update(
        certificates=["results/ch01/eps_sweep_certificates.zip", "results/ch01/gone_certificates.zip"],
        certificates_omitted=["big: 4 files, 8.2 MB, over this table's budget of 3.3 MB"])
    text = appendix.render_reproducibility(
        summary, {"01_approximation_rank.ipynb": "notebooks/01_approximation_rank"}, extra_root=extra,
        git_state="`abc`")
    assert '<a href="../notebooks/results/ch01/eps_sweep_certificates.zip">eps_sweep_certificates.zip</a>' in text
    assert "gone_certificates" not in text
    assert "Not published: big: 4 files, 8.2 MB" in text
    assert "verify --independent" in text


def test_a_record_of_a_chapter_that_no_longer_exists_shows_its_values_only(monkeypatch):
    summary = _summary()
    summary["chapters"][0].update(chapter="ch99", parameters={"eps": 0.5})
    text = appendix.render_reproducibility(summary, {})
    assert "| `eps` | `0.5` | `'?'` |" in text and "### ch99: t" in text
    monkeypatch.setattr(appendix, "get_chapter", lambda key: {}[key])  # any other error is not hidden
    with pytest.raises(KeyError):
        appendix.render_reproducibility(summary, {})
