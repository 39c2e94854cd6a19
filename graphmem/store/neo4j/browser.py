"""What ``graphmem browser`` prints: the Neo4j Browser URL, the ``:style`` step and the saved
queries (the one copy is ``cypher/browser/``, packaged as ``graphmem/cypher/browser/``;
``docker/compose.yml`` mounts it into the Neo4j container)."""

from __future__ import annotations

from urllib.parse import quote, urlparse

from ..._resources import data_dir
from .cypher import statements

__all__ = ["BROWSER_QUERIES", "browser_instructions", "browser_url", "grass_path"]

# name -> (title, parameters to set with :param)
BROWSER_QUERIES: dict[str, tuple[str, dict[str, str]]] = {
    "current_facts": (
        "Current facts about an entity",
        {"group_id": "'default'", "name": "'Alice'"},
    ),
    "supersession_chain": (
        "Supersession chain of a fact",
        {"fact_id": "'fact_…'"},
    ),
    "open_contradictions": ("Open contradictions", {"group_id": "'default'"}),
    "episode_provenance": ("Provenance of an episode", {"episode_id": "'ep_…'"}),
    "entity_history": (
        "An entity's history (facts, SUPERSEDES, episodes)",
        {"group_id": "'default'", "name": "'Alice'"},
    ),
}


def browser_url(url: str) -> str:
    """The Browser for a store URL: the server's own on port 7474 (Aura: the hosted Browser)."""
    parsed = urlparse(url)
    host = parsed.hostname or "localhost"
    bolt = f"{parsed.scheme}://{host}" + (f":{parsed.port}" if parsed.port else "")
    connect = quote(bolt, safe=":/")
    if parsed.scheme.endswith("+s") or parsed.scheme.endswith("+ssc"):
        return f"https://browser.neo4j.io/?connectURL={connect}"
    shown = host if ":" not in host else f"[{host}]"
    return f"http://{shown}:7474/browser/?connectURL={connect}"


def grass_path() -> str:
    """Where this install's style sheet lives (``cypher/browser/graphmem.grass``)."""
    return str(data_dir("cypher").joinpath("browser", "graphmem.grass"))


def saved_queries_dir() -> str:
    """Where this install's saved queries live (``cypher/browser/``)."""
    return str(data_dir("cypher").joinpath("browser"))


def browser_instructions(url: str) -> str:
    """Text for ``graphmem browser``: open the Browser, load the style, run the saved queries."""
    lines = [
        "graphmem in Neo4j Browser",
        "",
        f"1. Open {browser_url(url)}",
        "   and log in (NEO4J_USERNAME / NEO4J_PASSWORD).",
        "2. Style: drag this file onto the Browser window (it shows the style with :style;",
        "   or run `:style` followed by the file's text)",
        f"   (cypher/browser/graphmem.grass in the repository): {grass_path()}",
        "   Entities blue, facts orange (predicate - statement), episodes grey;",
        "   SUPERSEDES thick grey, CONTRADICTS thicker red.",
        f"3. Saved queries ({saved_queries_dir()}): drag each .cypher file onto the window",
        "   and press 'Save to favorites' (or paste them below into the editor). Set the",
        "   parameters with :param first, then run a favorite:",
    ]
    for name, (title, params) in BROWSER_QUERIES.items():
        (text,) = statements(f"browser/{name}")
        body = "\n".join(line for line in text.splitlines() if not line.startswith("//"))
        lines += ["", f"-- {title} (cypher/browser/{name}.cypher)"]
        lines += [f":param {key} => {value}" for key, value in params.items()]
        lines += [body.strip()]
    return "\n".join(lines) + "\n"
