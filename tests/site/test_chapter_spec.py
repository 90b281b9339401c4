"""The chapter declarations in ``site/chapters/chNN.toml`` read by ``spec.chapter_spec``."""
import textwrap

import pytest

from attnrank_lite.site.chapters import all_chapters
from attnrank_lite.site.spec import ParameterError, chapter_spec

HEAD = 'key = "ch99"\nnotebook = "99_x.ipynb"\ntitle = "X"\n'


def _spec(tmp_path, body, **functions):
    (tmp_path / "ch99.toml").write_text(HEAD + textwrap.dedent(body))
    return chapter_spec(str(tmp_path / "ch99.py"), **functions)


def test_fields_none_and_profiles(tmp_path):
    spec = _spec(tmp_path, """
        [params.n]
        default = 8
        kind = "int"
        help = "Points."
        low = 2
        [params.corpus]
        kind = "str"
        help = "A file, or None."
        nullable = true
        [params.mode]
        default = "a"
        kind = "str"
        help = "Mode."
        choices = ["a", "b"]
        [profiles.paper]
        n = 64
        corpus = "None"
        [code]
        "thm-x" = ["engine.attention.softmax_attention"]
        """)
    assert spec.defaults() == {"n": 8, "corpus": None, "mode": "a"}
    assert spec.profile("paper") == {"n": 64, "corpus": None, "mode": "a"}
    assert spec.param("mode").choices == ("a", "b")
    assert spec.code == {"thm-x": ["attnrank_lite.engine.attention.softmax_attention"]}
    with pytest.raises(ParameterError, match="'n' must be an integer >= 2"):
        spec.validate({"n": 1})


@pytest.mark.parametrize("body, message", [
    ('[params.n]\ndefault = 8\nkind = "int"\nhelp = "x"\nhihg = 3\n', "ch99.toml: .*hihg"),
    ('[params.n]\ndefault = 8\nkind = "integer"\nhelp = "x"\n', "ch99.toml: unknown parameter kind"),
    ('[params.n]\ndefault = 1\nkind = "int"\nhelp = "x"\nlow = 2\n', "ch99.toml: parameter 'n' must be"),
    ('[params.n]\nkind = "int"\nhelp = "no default, not nullable"\n', "ch99.toml: parameter 'n' .*got None"),
    ('[params.n]\ndefault = 8\nkind = "int"\nhelp = "x"\n[profiles.fast]\nn = 2\n', "unknown profile 'fast'"),
])
def test_a_wrong_declaration_names_its_file(tmp_path, body, message):
    with pytest.raises(ValueError, match=message):
        _spec(tmp_path, body)


def test_every_chapter_declares_its_notebook_and_functions():
    specs = all_chapters()
    assert [s.key for s in specs] == [f"ch0{i}" for i in range(1, 8)]
    for s in specs:
        assert s.notebook.startswith(s.key[2:] + "_") and s.runtime is not None and s.memory is not None
