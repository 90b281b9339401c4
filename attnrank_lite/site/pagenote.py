"""The note the build appends to each staged chapter page from its run record: profile, run time,
machine, certificates, cache reuse and the quick rerun command."""
from __future__ import annotations

import os
from pathlib import Path

import nbformat

__all__ = ["machine_text", "rerun_command", "certificates_text", "run_note", "add_run_note", "NOTE_TAG"]

#: tag of the appended markdown cell (tests find it by this tag)
NOTE_TAG = "attnrank-run-note"


def machine_text(rec: dict) -> str:
    """``x86_64, 2 CPUs (AMD EPYC 7B13)`` from a run record."""
    machine = rec.get("machine", "an unknown machine")
    return f"{machine} ({rec['cpu']})" if rec.get("cpu") else machine


def rerun_command(key: str) -> str:
    """The command that reruns one chapter with the fastest profile."""
    return f"python -m attnrank_lite run {key} --profile quick"


def certificates_text(rec: dict) -> str:
    """The note's sentence on the page's certificate bundles (empty when the page has none)."""
    bundles, omitted = rec.get("certificates", []), rec.get("certificates_omitted", [])
    links = ", ".join(f'<a href="{b}" download>{Path(b).name}</a>' for b in bundles)
    text = (f"The certificates of its bracket tables, one file per instance: {links} (unzip and "
            "recheck with `python -m attnrank_lite verify --independent *.npz`; "
            "see {doc}`/book/certify`)." if bundles else "")
    if omitted:
        text += " Certificates not published (size budget): " + "; ".join(omitted) + "."
    return text.strip()


def run_note(rec: dict) -> str:
    """MyST markdown of the note for one run record."""
    when = rec.get("finished", "?")
    how = ("reused from the build's cache: the notebook, parameters, package sources and installed "
           f"versions are those of the run finished {when}") if rec.get("cache") == "reused" else f"finished {when}"
    certs = certificates_text(rec)
    return "\n".join([
        "````{admonition} How this page was produced",
        ":class: note",
        f"This page is the `{rec.get('profile', '?')}` profile run of `{rec['notebook']}`: it executed in "
        f"**{rec['seconds']:.1f} s** on {machine_text(rec)}, {how}. "
        "Its parameters and tables are listed on {doc}`/book/reproducibility`. "
        + (certs + " " if certs else "") + "To rerun it with the quick profile:",
        "",
        "```bash",
        rerun_command(rec["chapter"]),
        "```",
        "````",
    ])


def add_run_note(path: str | os.PathLike, rec: dict) -> None:
    """Append the note as the last cell of the executed notebook at ``path`` (replacing an earlier note)."""
    nb = nbformat.read(path, as_version=4)
    nb.cells = [c for c in nb.cells if NOTE_TAG not in c.get("metadata", {}).get("tags", [])]
    cell = nbformat.v4.new_markdown_cell(run_note(rec))
    cell.metadata["tags"] = [NOTE_TAG]
    nb.cells.append(cell)
    nbformat.write(nb, path)
