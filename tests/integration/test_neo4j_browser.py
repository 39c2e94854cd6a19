"""Neo4j Browser for real: the Browser the test server serves at /browser/ (Maven Central's
org.neo4j.client:neo4j-browser, scripts/neo4j_server.py), in headless Chromium over the
DevTools protocol, doing what docs/neo4j.md tells a user to do: connect, drag
cypher/browser/graphmem.grass onto the window (style), drag each saved query onto it and
"Save to favorites", set the parameters, run a saved query from Favorites over a memory built
from examples/ (``graphmem ingest examples/data``), and look at the styled graph.

Needs genuine Neo4j with its HTTP port (``GRAPHMEM_TEST_NEO4J_BROWSER``, written to env.sh by
scripts/neo4j_server.py) and Chromium (Debian: ``apt-get install chromium``). The screenshot
is written to the test's tmp dir, and also to ``$GRAPHMEM_BROWSER_SCREENSHOT`` when set (how
docs/images/neo4j-browser.png is made).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.bolt import BOLT_URI, empty_bolt_memory

BROWSER = os.environ.get("GRAPHMEM_TEST_NEO4J_BROWSER")
REPO = Path(__file__).resolve().parents[2]
SAVED = REPO / "cypher" / "browser"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.slow,
    pytest.mark.skipif(
        not (BOLT_URI and BROWSER),
        reason="needs genuine Neo4j serving the Browser: `python scripts/neo4j_server.py start "
        "--dir .neo4j --bolt-port 0 --http-port 0` and `. .neo4j/env.sh`",
    ),
]

# The style sheet's colours (cypher/browser/graphmem.grass), as the Browser fills the circles.
FACT, ENTITY, EPISODE = "#F79767", "#4C8EDA", "#C6C9CF"


@pytest.fixture
def chromium() -> Iterator[object]:
    from tests.helpers.devtools import Chromium, find_chromium

    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium (Debian: apt-get install chromium)")
    browser = Chromium(binary, width=1600, height=1000)
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def examples_memory() -> None:
    """The examples' memory in the test server (emptied first), through the CLI as a user
    would build it."""
    from click.testing import CliRunner

    from graphmem.cli import cli

    empty_bolt_memory().close()
    assert BOLT_URI
    result = CliRunner().invoke(
        cli, ["ingest", str(REPO / "examples" / "data")], env={"GRAPHMEM_STORE": BOLT_URI}
    )
    assert result.exit_code == 0, result.output


def _connect(page: object) -> None:
    from tests.helpers.devtools import Chromium

    assert isinstance(page, Chromium) and BROWSER and BOLT_URI
    page.navigate(f"{BROWSER}?connectURL={BOLT_URI}")
    page.wait_for("!!document.querySelector('[data-testid=username]')", "the connect form")
    user = os.environ.get("GRAPHMEM_TEST_BOLT_USER", "neo4j")
    password = os.environ.get("GRAPHMEM_TEST_BOLT_PASSWORD", "")
    # React owns the inputs: set their values through the native setter, then say so.
    page.js(
        "(() => { const set = (sel, v) => { const el = document.querySelector(sel);"
        " Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, v);"
        " el.dispatchEvent(new Event('input', {bubbles: true})); };"
        f" set('[data-testid=username]', {json.dumps(user)});"
        f" set('[data-testid=password]', {json.dumps(password)});"
        " Array.from(document.querySelectorAll('button'))"
        ".find(b => b.textContent.trim() === 'Connect').click(); })()"
    )
    page.wait_for(
        "document.body.innerText.includes('You are connected as user')", "the connection"
    )


def _drop(page: object, path: Path, done: str) -> None:
    """Drops a file on the Browser until ``done`` holds (a drop the page makes while it is
    still settling after the connection is lost)."""
    from tests.helpers.devtools import Chromium, DevToolsError

    assert isinstance(page, Chromium)
    for attempt in range(5):
        page.drop_file(path)
        try:
            page.wait_for(done, f"the drop of {path.name}", timeout=5)
            return
        except DevToolsError:
            if attempt == 4:
                raise


def _run(page: object, command: str) -> None:
    """Types a command into the Browser's editor and runs it."""
    from tests.helpers.devtools import Chromium

    assert isinstance(page, Chromium)
    frames = page.js("document.querySelectorAll('[data-testid=frame]').length")
    page.js("document.querySelector('[data-testid=activeEditor] textarea').focus()")
    page.type_text(command)
    page.click("[data-testid=editor-Run]")
    page.wait_for(
        f"document.querySelectorAll('[data-testid=frame]').length > {frames}", command
    )


def test_browser_shows_the_styled_graph_of_a_saved_query(
    chromium: object, examples_memory: None, tmp_path: Path
) -> None:
    from tests.helpers.devtools import Chromium

    page = chromium
    assert isinstance(page, Chromium)
    _connect(page)

    # Style: the style sheet dropped on the window (the Browser then shows :style).
    _drop(
        page,
        SAVED / "graphmem.grass",
        f"(localStorage.getItem('neo4j.grass') || '').includes('{FACT}')",
    )
    grass = page.js("localStorage.getItem('neo4j.grass')")
    assert FACT in grass and ENTITY in grass and "SUPERSEDES" in grass

    # Saved queries: each file dropped on the window, then "Save to favorites".
    saved = sorted(SAVED.glob("*.cypher"))
    for path in saved:
        _drop(page, path, "!!document.querySelector('.filedrop-save-to-favorites')")
        page.click(".filedrop-save-to-favorites")
        page.wait_for(
            "!document.querySelector('.filedrop-save-to-favorites')", f"saving {path.name}"
        )
    # Favorites lists each by its first comment line.
    titles = [p.read_text(encoding="utf-8").splitlines()[0].removeprefix("// ") for p in saved]
    page.click("[data-testid=navigationFavorites]")
    listed = page.wait_for(
        "(() => { const t = Array.from(document.querySelectorAll("
        "'[data-testid=savedScriptListItem]')).map(e => e.innerText.trim())"
        ".filter(t => t.startsWith('graphmem:'));"
        f" return t.length >= {len(saved)} ? t : null; }})()",
        "the saved queries under Favorites",
    )
    assert sorted(listed) == sorted(titles)

    # Run a saved query from Favorites: Maya's facts, SUPERSEDES links and source episodes.
    _run(page, ":params {group_id: 'default', name: 'Maya'}")
    title = "graphmem: an entity's history"
    page.wait_for(f"document.body.innerText.includes({json.dumps(title)})", "the favorite")
    frames = page.js("document.querySelectorAll('[data-testid=frame]').length")
    page.js(
        "Array.from(document.querySelectorAll('[data-testid=savedScriptListItem]'))"
        f".find(e => e.innerText.trim().startsWith({json.dumps(title)}))"
        ".querySelector('[data-testid=savedScriptsButton-Run]').click()"
    )
    page.wait_for(
        f"document.querySelectorAll('[data-testid=frame]').length > {frames}", "the query frame"
    )
    page.click("[data-testid=navigationFavorites]")  # close the drawer: more room for the graph

    # The graph, drawn with graphmem's style: facts orange, entities blue, episodes grey,
    # SUPERSEDES arrows between facts.
    fills = page.wait_for(
        "(() => { const f = Array.from(document.querySelectorAll("
        "'[data-testid=frame]')).shift(); if (!f) return null;"
        " const c = Array.from(f.querySelectorAll('g.node circle.b-outline'))"
        ".map(e => (e.getAttribute('fill') || '').toUpperCase());"
        " return c.length > 5 ? c : null; })()",
        "the graph",
        timeout=90,
    )
    assert {FACT, ENTITY, EPISODE} <= set(fills)
    frame = "Array.from(document.querySelectorAll('[data-testid=frame]')).shift()"
    labels = page.js(f"{frame}.querySelector('g.node').ownerSVGElement.textContent")
    assert "lives_in" in labels  # fact captions: predicate - statement
    # the relationship types the frame's overview lists (captions on arrows may be cut short)
    assert "SUPERSEDES" in page.js(f"{frame}.innerText")
    page.js("new Promise(r => setTimeout(r, 3000))")  # let the layout settle
    box = page.js(
        f"(() => {{ const r = {frame}.getBoundingClientRect();"
        " return {x: r.x, y: r.y, width: r.width, height: r.height}; })()"
    )
    shot = tmp_path / "neo4j-browser.png"
    page.screenshot(shot, clip=box)
    assert shot.stat().st_size > 20_000
    target = os.environ.get("GRAPHMEM_BROWSER_SCREENSHOT")
    if target:
        shutil.copyfile(shot, target)
