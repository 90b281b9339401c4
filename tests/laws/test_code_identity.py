"""The stored sweep's code identity (laws/code_identity.py): code changes move it; docstrings,
comments and modules a row's computation never imports do not."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from attnrank_lite.laws import code_identity as ci

PKG = Path(ci.__file__).resolve().parents[1]


@pytest.fixture()
def copy_root(tmp_path):
    """A copy of the package sources (no caches) whose files a test may edit."""
    shutil.copytree(PKG, tmp_path / "attnrank_lite", ignore=shutil.ignore_patterns("__pycache__", "data"))
    return tmp_path


def _edit(root, rel, old, new):
    p = root / "attnrank_lite" / rel
    text = p.read_text()
    assert old in text, f"{old!r} not in {rel}"
    p.write_text(text.replace(old, new, 1))


def test_every_module_a_row_loads_is_in_the_closure():
    """Oracle: the modules Python actually loads while computing a row, read off sys.modules."""
    code = ("import sys\nfrom attnrank_lite.laws.scale import sweep_task\n"
            "sweep_task(3, 60, 2.0, 0.25, 'well-spread', 0)\n"
            "print('\\n'.join(m for m in sys.modules if m.startswith('attnrank_lite')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=PKG.parent).stdout.split()
    loaded = {m for m in out if (PKG.parent / m.replace(".", "/")).with_suffix(".py").exists()
              or (PKG.parent / m.replace(".", "/") / "__init__.py").exists()}
    assert loaded, out
    missing = loaded - set(ci.import_closure())
    assert not missing, f"loaded while computing a row but not hashed: {sorted(missing)}"


def test_docstring_comment_and_unrelated_edits_keep_the_identity(copy_root):
    before = ci.code_identity(root=copy_root)
    _edit(copy_root, "engine/harmonic.py", '"""', '"""A docstring edited by a test. ')
    _edit(copy_root, "laws/scale.py", "def sweep_task(", "# a comment added by a test\ndef sweep_task(")
    _edit(copy_root, "basics/plots.py", "def ", "def _added_by_a_test():\n    return 1\n\n\ndef ")
    (copy_root / "attnrank_lite" / "laws" / "report.py").write_text("x = 1\n")
    assert ci.code_identity(root=copy_root) == before


@pytest.mark.parametrize("rel, old, new", [
    ("engine/harmonic.py", "import numpy as np", "import numpy as np\n_CHANGED = 2"),
    ("laws/scale.py", "def sweep_task(", "def _new_helper():\n    return 0\n\n\ndef sweep_task("),
    ("laws/geometry.py", "\ndef ", "\ndef _added_by_a_test():\n    return 0\n\n\ndef "),
])
def test_a_code_edit_in_the_closure_changes_the_identity(copy_root, rel, old, new):
    before = ci.code_identity(root=copy_root)
    _edit(copy_root, rel, old, new)
    assert ci.code_identity(root=copy_root) != before


def test_the_store_uses_the_identity():
    from attnrank_lite.laws import law_store
    assert law_store.code_hash() == ci.code_identity()


def test_an_unknown_entry_is_refused():
    with pytest.raises(ValueError, match="entry"):
        ci.code_identity("attnrank_lite.laws.no_such_module")
