"""The website as a reader meets it: every page opened in headless Chromium from a local server.

Checks, on every HTML page of the site built by the ``built_site`` fixture (quick profile):

* no console errors (SEVERE browser log entries);
* MathJax finished and every math element (``.math``) holds a rendered ``mjx-container``; no
  unrendered TeX (``$...$``, ``\\(``, ``\\[``, a control word like ``\\ell``) in the text outside code;
* every ``<img>`` loaded (``naturalWidth > 0``);
* no Python warning text (``SomethingWarning:``, ``warnings.warn``) in any cell output area;
* no code cell overflows its column (``scrollWidth > clientWidth`` of a code cell's ``<pre>``),
  and no table of the prose is wider than the article;
* no request went anywhere but the local server (scripts, fonts, MathJax are all local);
* a screenshot per page under ``.test-build/screenshots/``: the first screen (1280 x 900) by
  default, the whole page with ``ATTNRANK_SCREENSHOTS=full`` (24 s more for the 23 pages, so
  not in ``make test``; use it when you change how a page looks).

A phone test opens every page at a 390 CSS-pixel viewport (a phone, emulated through the
DevTools protocol: headless Chromium's windows are at least 500 px wide) and checks that no page
scrolls sideways (document width <= viewport width); a screenshot of each first screen goes to
``.test-build/screenshots/phone__*.png``.

A further test checks that chapter 6's layer-by-head heatmaps are shown at least
``HEATMAP_MIN_WIDTH`` CSS pixels wide; with the figure's own limits (at most 8.5 inches wide,
no text below 10 pt, checked in ``tests/calibration/test_calibration.py``) that puts every label and
colour-bar tick at >= 10 CSS pixels on screen.

``ATTNRANK_SITE_HTML=/path/to/html`` runs the checks against a site built beforehand
(``python -m attnrank_lite build --profile quick -o DIR``: its ``html`` folder) instead of
building one.

A second test opens the math-bearing pages with networking disabled (every host name but the
local server unresolvable, a proxy to nowhere) and checks that the math is rendered.

Chromium and ChromeDriver come from Debian (``make browser-deps``); the tests skip, with the
reason, only where they cannot be installed.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SHOTS = REPO / ".test-build" / "screenshots"

pytestmark = [pytest.mark.book, pytest.mark.browser, pytest.mark.xdist_group("book")]

CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--hide-scrollbars")
OFFLINE_FLAGS = ("--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
                 "--proxy-server=http://127.0.0.1:9")
WIDTH, MAX_HEIGHT = 1280, 16000
#: least on-screen width (CSS px) of a chapter-6 heatmap: 8.5-inch figure, 10 pt text -> >= 10 px
HEATMAP_MIN_WIDTH = 612

# text of a page shown on screen, outside code, scripts and rendered math
_VISIBLE_TEXT_JS = r"""
// .onlyprint: the theme's print-only page header (display: none on screen)
const skip = 'pre, code, script, style, textarea, noscript, mjx-container, mjx-assistive-mml, .highlight, .onlyprint';
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const parts = [];
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  if (n.parentElement && !n.parentElement.closest(skip)) parts.push(n.nodeValue);
}
return parts.join(' ');
"""
_MATHJAX_DONE_JS = r"""
const done = arguments[arguments.length - 1];
if (!window.MathJax || !window.MathJax.startup || !window.MathJax.startup.promise) { done('absent'); return; }
window.MathJax.startup.promise.then(() => done('ok'), (e) => done('failed: ' + e));
"""
_MATH_STATE_JS = r"""
const math = [...document.querySelectorAll('.math')];
return {n_math: math.length,
        unrendered: math.filter(e => !e.querySelector('mjx-container')).map(e => e.textContent.slice(0, 80)),
        n_mjx: document.querySelectorAll('mjx-container').length,
        mj_errors: [...document.querySelectorAll('mjx-merror')].map(e => e.textContent.slice(0, 80))};
"""
_IMAGES_JS = r"""
return [...document.images].map(i => ({src: i.currentSrc || i.src, ok: i.complete && i.naturalWidth > 0}));
"""
# Python warnings shown in a cell's output (stderr streams, tracebacks, text outputs)
_OUTPUT_WARNINGS_JS = r"""
return [...document.querySelectorAll('.cell_output')]
  .map(e => e.innerText).filter(t => /\b[A-Z]\w*Warning\b:|warnings\.warn/.test(t))
  .map(t => t.slice(0, 160));
"""
# code cells whose lines run past the column
_CODE_OVERFLOW_JS = r"""
return [...document.querySelectorAll('.cell_input pre')]
  .filter(p => p.scrollWidth > p.clientWidth + 1)
  .map(p => ({over: p.scrollWidth - p.clientWidth,
              line: p.innerText.split('\n').reduce((a, b) => b.length > a.length ? b : a, '')}));
"""
# tables of the prose (not cell outputs, which scroll in their own area) wider than the article
_TABLE_OVERFLOW_JS = r"""
const art = document.querySelector('article') || document.body;
const right = art.getBoundingClientRect().right;
return [...art.querySelectorAll('table')]
  .filter(t => !t.closest('.cell_output'))
  .filter(t => t.getBoundingClientRect().right > right + 1
               || (t.parentElement && t.parentElement.scrollWidth > t.parentElement.clientWidth + 1))
  .map(t => (t.innerText || '').slice(0, 80));
"""
# images in the outputs of cells whose code calls the given function
_CELL_IMAGES_JS = r"""
const needle = arguments[0];
return [...document.querySelectorAll('.cell')]
  .filter(c => c.querySelector('.cell_input') && c.querySelector('.cell_input').innerText.includes(needle))
  .flatMap(c => [...c.querySelectorAll('.cell_output img')])
  .map(i => ({src: i.currentSrc || i.src, shown: i.getBoundingClientRect().width,
              natural: i.naturalWidth}));
"""
# TeX left as text: $...$, $$, \( \) \[ \], or a control word such as \ell or \begin
_RAW_TEX = re.compile(r"\$[^$\s][^$\n]{0,200}?\$|\$\$|\\[()\[\]]|\\[a-zA-Z]{2,}")


def _find_chromium():
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return chrome, driver


def _chromium_or_skip():
    """Chromium and ChromeDriver paths; install them from Debian if missing, else skip with why."""
    chrome, driver = _find_chromium()
    if chrome and driver:
        return chrome, driver
    why = "chromium/chromedriver not on PATH"
    if shutil.which("apt-get"):
        proc = subprocess.run("apt-get update -qq && apt-get install -y -qq chromium chromium-driver",
                              shell=True, capture_output=True, text=True, check=False)
        chrome, driver = _find_chromium()
        if chrome and driver:
            return chrome, driver
        why += f"; apt-get install chromium chromium-driver failed: {(proc.stderr or proc.stdout).strip()[-300:]}"
    else:
        why += "; no apt-get to install Debian's chromium and chromium-driver"
    pytest.skip(f"browser test needs Chromium: {why}")


def _driver(offline: bool = False):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chrome, driver = _chromium_or_skip()
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    profile = tempfile.mkdtemp(prefix="attnrank-chromium-")
    for flag in CHROME_FLAGS + (OFFLINE_FLAGS if offline else ()):
        opts.add_argument(flag)
    opts.add_argument(f"--user-data-dir={profile}")
    opts.add_argument(f"--window-size={WIDTH},900")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    drv = webdriver.Chrome(service=Service(executable_path=driver), options=opts)
    drv.set_page_load_timeout(60)
    drv.set_script_timeout(60)
    drv._attnrank_profile = profile
    return drv


def _quit(drv):
    drv.quit()
    shutil.rmtree(drv._attnrank_profile, ignore_errors=True)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output readable
        pass


@pytest.fixture(scope="module")
def site_url(site_html):
    """Serve the built site on 127.0.0.1 for the tests of this module."""
    handler = functools.partial(_QuietHandler, directory=str(site_html))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def site_pages(html: Path) -> list[str]:
    """Every HTML page of the site (relative paths), theme templates and copied sources excluded."""
    skip = ("_static/", "_sources/", "mathjax/", "_images/")
    return sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html")
                  if not p.relative_to(html).as_posix().startswith(skip))


def _open(drv, url: str) -> str:
    drv.get(url)
    deadline = time.time() + 30
    while drv.execute_script("return document.readyState") != "complete" and time.time() < deadline:
        time.sleep(0.1)
    return drv.execute_async_script(_MATHJAX_DONE_JS)


def _wait_images(drv, timeout: float = 15.0) -> list[dict]:
    deadline = time.time() + timeout
    while True:
        imgs = drv.execute_script(_IMAGES_JS)
        if all(i["ok"] for i in imgs) or time.time() > deadline:
            return imgs
        time.sleep(0.2)


def _screenshot(drv, page: str) -> Path:
    """The first screen of ``page``; the whole page (up to MAX_HEIGHT) with ATTNRANK_SCREENSHOTS=full."""
    full = os.environ.get("ATTNRANK_SCREENSHOTS") == "full"
    if full:
        height = drv.execute_script("return Math.max(document.body.scrollHeight, "
                                    "document.documentElement.scrollHeight)")
        drv.set_window_size(WIDTH, min(max(int(height), 900), MAX_HEIGHT))
        time.sleep(0.3)
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / (page.replace("/", "__").removesuffix(".html") + ".png")
    drv.save_screenshot(str(path))
    if full:
        drv.set_window_size(WIDTH, 900)
    return path


def _requests(drv) -> list[str]:
    urls = []
    for entry in drv.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


@pytest.fixture(scope="module")
def site_html(request) -> Path:
    """The site's ``html`` folder: ``ATTNRANK_SITE_HTML`` when set, else the ``built_site`` build."""
    given = os.environ.get("ATTNRANK_SITE_HTML")
    if given:
        html = Path(given).expanduser().resolve()
        assert (html / "index.html").is_file(), f"ATTNRANK_SITE_HTML={given}: no index.html there"
        return html
    return request.getfixturevalue("built_site")


def test_site_has_no_external_scripts_styles_or_fonts(site_html):
    """Static check of the built HTML: every script and stylesheet is served by the site itself."""
    ext = re.compile(r"<(?:script|link)\b[^>]*(?:src|href)=\"(https?:)?//[^\"]+\"[^>]*>", re.IGNORECASE)
    offenders = {}
    for page in site_pages(site_html):
        found = [m.group(0) for m in ext.finditer((site_html / page).read_text())
                 if 'rel="canonical"' not in m.group(0)]
        if found:
            offenders[page] = found[:3]
    assert not offenders, f"pages loading remote scripts/styles: {offenders}"
    assert (site_html / "mathjax" / "tex-mml-chtml.js").is_file(), "MathJax is not served with the site"
    assert (site_html / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir(), "MathJax fonts missing"


def test_every_page_in_chromium(site_html, site_url):
    pages = site_pages(site_html)
    assert "book/intro.html" in pages and len(pages) >= 5, pages
    drv = _driver()
    problems: dict[str, list[str]] = {}
    foreign: set[str] = set()
    shots = []
    n_math_pages = 0
    try:
        for page in pages:
            bad = problems.setdefault(page, [])
            mj = _open(drv, f"{site_url}/{page}")
            state = drv.execute_script(_MATH_STATE_JS)
            if state["n_math"]:
                n_math_pages += 1
                if mj != "ok":
                    bad.append(f"MathJax did not finish: {mj}")
            if state["unrendered"]:
                bad.append(f"math not typeset: {state['unrendered'][:3]}")
            if state["mj_errors"]:
                bad.append(f"MathJax errors: {state['mj_errors'][:3]}")
            raw = sorted(set(_RAW_TEX.findall(drv.execute_script(_VISIBLE_TEXT_JS))))
            if raw:
                bad.append(f"unrendered TeX in the text: {raw[:5]}")
            warned = drv.execute_script(_OUTPUT_WARNINGS_JS)
            if warned:
                bad.append(f"Python warnings in cell outputs: {warned[:3]}")
            wide = drv.execute_script(_CODE_OVERFLOW_JS)
            if wide:
                bad.append(f"code cells overflow their column: {wide[:3]}")
            wide_tables = drv.execute_script(_TABLE_OVERFLOW_JS)
            if wide_tables:
                bad.append(f"tables overflow the page column: {wide_tables[:3]}")
            shots.append(_screenshot(drv, page))
            imgs = _wait_images(drv)
            broken = [i["src"] for i in imgs if not i["ok"]]
            if broken:
                bad.append(f"images not loaded: {broken}")
            severe = [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]
            if severe:
                bad.append(f"console errors: {severe[:5]}")
            # network requests only (chrome:// pages are the browser's own new-tab page)
            foreign.update(u for u in _requests(drv)
                           if u.startswith(("http:", "https:", "ws:", "wss:")) and not u.startswith(site_url))
            if not bad:
                del problems[page]
    finally:
        _quit(drv)
    assert not problems, "pages with problems:\n" + "\n".join(f"  {p}: {v}" for p, v in problems.items())
    assert not foreign, f"requests that left the local server: {sorted(foreign)[:10]}"
    assert n_math_pages >= 2, "expected math on the intro and on every chapter"
    assert all(p.is_file() and p.stat().st_size > 10_000 for p in shots)


#: a phone's viewport (CSS pixels), as in the issue that found pages scrolling sideways
PHONE_WIDTH, PHONE_HEIGHT = 390, 844
# the document's width against the viewport, and the widest elements of the article that poke out
_PAGE_WIDTH_JS = r"""
const vw = document.documentElement.clientWidth;
const sw = Math.max(document.documentElement.scrollWidth, document.body.scrollWidth);
const out = [...document.querySelectorAll('.bd-article *')]
  .filter(e => e.getBoundingClientRect().right > vw + 1 && e.getBoundingClientRect().left < vw)
  .slice(0, 3).map(e => e.tagName.toLowerCase() + '.' + e.getAttribute('class') + ': '
                      + Array.from(e.innerText || '').slice(0, 60).join(''));  // whole code points
return {viewport: vw, document: sw, out: out};
"""


def _phone(drv) -> None:
    drv.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                        {"width": PHONE_WIDTH, "height": PHONE_HEIGHT, "deviceScaleFactor": 2, "mobile": True})


def test_every_page_fits_a_phone_screen(site_html, site_url):
    """Issue 25: on a 390 px phone the API pages were 698-776 px wide, rerun.html 400, prf-prf.html 445."""
    pages = site_pages(site_html)
    assert any(p.startswith("book/api/") for p in pages) and "prf-prf.html" in pages, pages
    drv = _driver()
    wide = {}
    try:
        _phone(drv)
        SHOTS.mkdir(parents=True, exist_ok=True)
        for page in pages:
            _open(drv, f"{site_url}/{page}")
            state = drv.execute_script(_PAGE_WIDTH_JS)
            assert state["viewport"] == PHONE_WIDTH, state  # the emulation holds
            if state["document"] > state["viewport"]:
                wide[page] = state
            drv.save_screenshot(str(SHOTS / ("phone__" + page.replace("/", "__").removesuffix(".html") + ".png")))
    finally:
        _quit(drv)
    assert not wide, "pages wider than a phone's 390 px:\n" + "\n".join(
        f"  {p}: {v['document']} px; {v['out']}" for p, v in wide.items())


_IMG_TAG = re.compile(r"<img\b[^>]*>")


def _shown_width(tag: str) -> float | None:
    m = re.search(r'\bwidth="(\d+(?:\.\d+)?)(?:px)?"', tag) or re.search(r"width:\s*(\d+(?:\.\d+)?)px", tag)
    return float(m.group(1)) if m else None


def test_chapter_figures_are_saved_at_twice_their_shown_size(site_html):
    """Issue 25: figures at 2x resolution. Each PNG figure of a chapter page has twice the pixels of
    the width it is shown at (the page gives that width from the output's metadata)."""
    import struct

    checked, low = 0, []
    for page in sorted((site_html / "notebooks").glob("*.html")):
        for tag in _IMG_TAG.findall(page.read_text()):
            src = re.search(r'src="([^"]+\.png)"', tag)
            if src is None or "_images/" not in src.group(1):
                continue
            png = (page.parent / src.group(1)).read_bytes()
            pixels = struct.unpack(">I", png[16:20])[0]
            shown = _shown_width(tag)
            checked += 1
            if shown is None or pixels < 1.9 * shown:
                low.append(f"{page.name}: {src.group(1)} {pixels} px shown at {shown}")
    assert checked >= 10, checked
    assert not low, "figures below 2x resolution:\n" + "\n".join(low)


def test_chapter6_heatmaps_are_legible(site_html, site_url):
    """The layer x head heatmaps are shown wide enough for their 10 pt text to be >= 10 px."""
    page = "notebooks/06_bert_calibration.html"
    assert (site_html / page).is_file(), f"{page} not in the site"
    drv = _driver()
    try:
        _open(drv, f"{site_url}/{page}")
        _wait_images(drv)
        imgs = drv.execute_script(_CELL_IMAGES_JS, "heatmaps(")
        drv.execute_script("document.querySelector('.cell_output img').scrollIntoView()")
        SHOTS.mkdir(parents=True, exist_ok=True)
        drv.save_screenshot(str(SHOTS / "ch06__heatmaps.png"))
    finally:
        _quit(drv)
    assert imgs, "no heatmap image found in chapter 6"
    small = [i for i in imgs if i["shown"] < HEATMAP_MIN_WIDTH]
    assert not small, f"heatmaps shown narrower than {HEATMAP_MIN_WIDTH} px: {small}"
    # not blown up past the pixels the figure has (blurry text)
    assert all(i["natural"] >= 0.9 * i["shown"] for i in imgs), imgs


def _search(drv, site_url: str, query: str) -> list[dict]:
    drv.get(f"{site_url}/search.html?q={query}")
    deadline, hits = time.time() + 30, []
    while time.time() < deadline and not hits:
        time.sleep(0.3)
        hits = drv.execute_script(
            "return [...document.querySelectorAll('#search-results li')].map(li => "
            "({href: li.querySelector('a').getAttribute('href'), text: li.querySelector('a').innerText}))")
    return hits


def test_search_finds_pages(site_html, site_url):
    """The site's own full-text search (searchindex.js, no server) returns chapter pages; for "rank"
    the chapters come before API objects whose names contain the word, and no result title shows
    raw TeX (issue 25: "the \\((d-1)/2\\) law")."""
    drv = _driver()
    try:
        hits = _search(drv, site_url, "certificate")
        ranked = _search(drv, site_url, "rank")
        severe = [e["message"] for e in drv.get_log("browser") if e["level"] == "SEVERE"]
    finally:
        _quit(drv)
    assert not severe, severe
    assert any("notebooks/01_approximation_rank" in h["href"] for h in hits), hits
    first_api = next((k for k, h in enumerate(ranked) if "book/api/" in h["href"]), len(ranked))
    chapters = [k for k, h in enumerate(ranked) if h["href"].startswith("notebooks/")]
    assert chapters and max(chapters) < first_api, [h["href"] for h in ranked[:15]]
    assert not [h["text"] for h in hits + ranked if _RAW_TEX.search(h["text"])]


def test_math_renders_with_networking_disabled(site_html, site_url):
    """With every host name unresolvable but the local server, math pages still typeset: the first
    math page of each folder (each relative path to the site's own MathJax; every page's requests
    are checked to stay on the local server by test_every_page_in_chromium)."""
    math_pages = [p for p in site_pages(site_html) if 'class="math' in (site_html / p).read_text()]
    pages = sorted({"book/intro.html", *{p.rpartition("/")[0]: p for p in reversed(math_pages)}.values()})
    assert "book/intro.html" in math_pages and len(pages) >= 2, math_pages
    from selenium.common.exceptions import WebDriverException

    drv = _driver(offline=True)
    try:
        # networking really is off: a public host cannot be reached
        drv.set_page_load_timeout(20)
        try:
            drv.get("https://cdn.jsdelivr.net/npm/mathjax@3/es5/tex-mml-chtml.js")
            reached = (not drv.execute_script("return location.href").startswith("chrome-error")
                       and "MathJax" in drv.execute_script("return document.documentElement.innerText"))
        except WebDriverException:  # includes the page-load timeout
            reached = False
        assert not reached, "the offline browser reached the internet"
        drv.set_page_load_timeout(60)
        rendered = {}
        for page in pages:
            mj = _open(drv, f"{site_url}/{page}")
            state = drv.execute_script(_MATH_STATE_JS)
            rendered[page] = (mj, state["n_math"], len(state["unrendered"]), state["n_mjx"])
            if page == "book/intro.html":
                SHOTS.mkdir(parents=True, exist_ok=True)
                drv.save_screenshot(str(SHOTS / "offline__book__intro.png"))
    finally:
        _quit(drv)
    bad = {p: v for p, v in rendered.items() if v[0] != "ok" or v[2] or v[3] == 0}
    assert not bad, f"math not rendered offline (MathJax state, math, unrendered, mjx): {bad}"
