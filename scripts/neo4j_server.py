#!/usr/bin/env python3
"""Run a throw-away genuine Neo4j Community server, for graphmem's Neo4j store tests.

The server's jars come from Maven Central (``tools/neo4j-server/pom.xml``, resolved with
``mvn``; Maven keeps its own cache in ``~/.m2``) into a cache dir outside the repository
(``~/.cache/graphmem/neo4j/<version>/``, or ``$GRAPHMEM_NEO4J_CACHE``). A ~70-line launcher
(``tools/neo4j-server/GraphmemNeo4jServer.java``, compiled once into the cache) runs the DBMS,
its Bolt server and its web server (which serves the Neo4j Browser at ``/browser/``) in one
JVM, on 127.0.0.1 only, with user ``neo4j`` and the given password. Neo4j Community and the
Browser are GPL-3.0: they are run here, never committed. See docs/dev/bolt-test-server.md.

Versions: 5.26.x LTS (the default) runs on Java 17 or later; 2025.01 and later need Java 21 or
later, which is looked for under /usr/lib/jvm (or give ``--java``).

Command line (the same shape as scripts/bolt_server.py)::

    python scripts/neo4j_server.py start  --dir .neo4j [--bolt-port 7687] [--http-port 7474] \
                                          [--password PW] [--version 5.26.30]
    python scripts/neo4j_server.py status --dir .neo4j
    python scripts/neo4j_server.py stop   --dir .neo4j [--kill]
    python scripts/neo4j_server.py fetch  [--version V]     # resolve the jars only
    . .neo4j/env.sh   # exports GRAPHMEM_TEST_BOLT_* for the integration tests

``--bolt-port 0`` (or ``--http-port 0``) picks a free port. Restarting on the same ``--dir``
keeps the data, and reuses the previous ports, password and version unless given again.

As a module (e.g. from a pytest fixture)::

    from neo4j_server import start_server, stop_server
    info = start_server(tmp_path / "neo4j", bolt_port=0)
    stop_server(info.dir, kill=True)       # simulate a crash
    info = start_server(info.dir)          # same ports, same password, same data

Files written to DIR: ``server.pid``, ``server.log`` (the JVM's output, appended to across
restarts), ``server.json`` (version, ports and password), ``env.sh``; Neo4j's ``neo4j.conf``,
``data/`` and ``logs/`` live under DIR as well.

Only the standard library is used, plus the ``neo4j`` driver for the readiness poll. What is
not Neo4j's own (ports, PID file, launch, stop, ``env.sh``, the command line) comes from
``scripts/_server_process.py``, as for scripts/bolt_server.py.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import _server_process as proc
from _server_process import Endpoints, ServerError, log_tail

__all__ = [
    "DEFAULT_VERSION",
    "ServerError",
    "ServerInfo",
    "default_dir",
    "find_java",
    "resolve_server",
    "server_status",
    "start_server",
    "stop_server",
]

DEFAULT_VERSION = "5.26.30"  # the 5.26 LTS line: what CI runs
DEFAULT_BOLT_PORT = 7687
DEFAULT_HTTP_PORT = 7474
DEFAULT_PASSWORD = "graphmem-test"  # loopback-only test server; Neo4j wants >= 8 chars
DATABASE = "neo4j"
USER = "neo4j"
READY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 60.0
_MAIN_CLASS = "GraphmemNeo4jServer"
_READY = "NEO4J_READY"

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOLS = REPO_ROOT / "tools" / "neo4j-server"

# No replanning when the statistics change (start --stable-plans): a plan is made again only
# after this long.
_STABLE_PLANS_CONF = "dbms.cypher.min_replan_interval=1000h"

# What the `neo4j` launcher adds to the JVM (its default server.jvm.additional): without the
# java.nio opening, vector index population stalls.
_JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockDiagnosticVMOptions",
    "-XX:+DebugNonSafepoints",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dlog4j2.disable.jmx=true",
    "-Djava.awt.headless=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
]


@dataclasses.dataclass(frozen=True)
class ServerInfo(Endpoints):
    dir: Path
    pid: int
    bolt_port: int
    http_port: int
    password: str
    version: str = DEFAULT_VERSION
    user: str = USER
    database: str = DATABASE
    startup_seconds: float | None = None

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"

    def env(self) -> dict[str, str]:
        """The GRAPHMEM_TEST_BOLT_* variables the integration tests read."""
        return self.bolt_env() | {
            "GRAPHMEM_TEST_BOLT_SERVER": f"neo4j-{self.version}",
            "GRAPHMEM_TEST_NEO4J_BROWSER": self.browser_url,
        }


def default_dir() -> Path:
    """``.neo4j/`` under the repository root (git-ignored)."""
    return REPO_ROOT / ".neo4j"


def _major(version: str) -> int:
    found = re.match(r"(\d+)\.", version)
    if not found:
        raise ServerError(f"not a Neo4j version: {version!r} (e.g. 5.26.30 or 2026.08.1)")
    return int(found.group(1))


# --------------------------------------------------------------------------- resolving


def cache_root() -> Path:
    override = os.environ.get("GRAPHMEM_NEO4J_CACHE")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphmem" / "neo4j"


def _java_feature(java: str) -> int:
    """The Java feature version of a ``java`` binary (17, 21, 25...), 0 if it does not run."""
    try:
        out = subprocess.run(
            [java, "-XshowSettings:properties", "-version"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        ).stderr
    except OSError:
        return 0
    found = re.search(r"java\.specification\.version = (\d+)", out)
    return int(found.group(1)) if found else 0


def find_java(version: str, java: str | None = None) -> tuple[str, int]:
    """A ``java`` that runs this Neo4j version, and its feature version: ``java`` if given, else
    ``$GRAPHMEM_NEO4J_JAVA``, else ``java`` on PATH (``$JAVA_HOME``) when new enough, else the
    newest JDK under /usr/lib/jvm."""
    need = 17 if _major(version) < 2025 else 21
    candidates: list[str] = []
    for given in (java, os.environ.get("GRAPHMEM_NEO4J_JAVA")):
        if given:
            candidates.append(given)
    if not candidates:
        home = os.environ.get("JAVA_HOME")
        if home:
            candidates.append(str(Path(home) / "bin" / "java"))
        on_path = shutil.which("java")
        if on_path:
            candidates.append(on_path)
        jvm = Path("/usr/lib/jvm")
        if jvm.is_dir():
            candidates += [str(p / "bin" / "java") for p in sorted(jvm.iterdir(), reverse=True)]
    for candidate in candidates:
        feature = _java_feature(candidate)
        if feature >= need:
            return candidate, feature
    raise ServerError(
        f"Neo4j {version} needs Java {need} or later; none found "
        f"(tried {', '.join(candidates) or 'nothing'}); pass --java /path/to/bin/java"
    )


def _javac_for(java: str) -> str:
    javac = Path(java).resolve().parent / "javac"
    if javac.exists():
        return str(javac)
    found = shutil.which("javac")
    if found:
        return found
    raise ServerError(f"no javac next to {java} or on PATH (a JDK is needed, not a JRE)")


def resolve_server(version: str = DEFAULT_VERSION, *, java: str | None = None) -> dict[str, Any]:
    """Jars of Neo4j ``version`` (from Maven Central, once) and the launcher compiled for the
    chosen Java (once per launcher source): ``{"lib", "classes", "java", "java_feature"}``."""
    _major(version)
    root = cache_root() / version
    lib = root / "lib"
    marker = lib / ".complete"
    if not marker.exists():
        mvn = shutil.which("mvn")
        if mvn is None:
            raise ServerError(
                "mvn (Apache Maven) is needed to resolve Neo4j from Maven Central: "
                "apt-get install -y maven"
            )
        shutil.rmtree(lib, ignore_errors=True)
        lib.parent.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            [
                mvn,
                "-B",
                "-q",
                "-f",
                str(TOOLS / "pom.xml"),
                f"-Dneo4j.version={version}",
                f"-Dlib.dir={lib}",
                "dependency:copy-dependencies",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        jars = list(lib.glob(f"neo4j-bolt-{version}.jar")) + list(
            lib.glob(f"neo4j-server-{version}.jar")
        )
        if done.returncode != 0 or len(jars) != 2:
            raise ServerError(
                f"mvn could not resolve Neo4j {version} (rc {done.returncode}):\n"
                + (done.stdout + done.stderr)[-3000:]
            )
        marker.write_text(f"{version}\n")
    java_bin, feature = find_java(version, java)
    source = TOOLS / f"{_MAIN_CLASS}.java"
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:12]
    classes = root / f"classes-{digest}-java{feature}"
    if not (classes / f"{_MAIN_CLASS}.class").exists():
        tmp = classes.with_name(classes.name + f".tmp{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        built = subprocess.run(
            [_javac_for(java_bin), "-nowarn", "-cp", f"{lib}/*", "-d", str(tmp), str(source)],
            capture_output=True,
            text=True,
            check=False,
        )
        if built.returncode != 0:
            raise ServerError(f"javac failed on {source}:\n{built.stdout}{built.stderr}")
        with contextlib.suppress(OSError):
            tmp.rename(classes)
        shutil.rmtree(tmp, ignore_errors=True)
    return {"lib": lib, "classes": classes, "java": java_bin, "java_feature": feature}


# --------------------------------------------------------------------------- processes


def _is_our_server(pid: int, d: Path) -> bool:
    """True if pid is alive (not a zombie) and is our Neo4j launcher with home d."""
    return proc.runs_with_args(pid, (_MAIN_CLASS, str(d)))


def _write_env_sh(info: ServerInfo) -> None:
    proc.write_env_sh(info, "neo4j_server.py")


def _ready_in_log(log: Path, offset: int) -> bool:
    try:
        with open(log, "rb") as f:
            f.seek(offset)
            return _READY.encode() in f.read()
    except OSError:
        return False


def _wait_ready(info: ServerInfo, timeout: float, t0: float, log_offset: int) -> None:
    """Until the launcher has set the password (its READY line) and Bolt answers RETURN 1."""
    try:
        import neo4j
    except ImportError as e:  # pragma: no cover - the venv has it
        raise ServerError("the readiness poll needs the 'neo4j' driver (pip install neo4j)") from e

    log = info.dir / "server.log"
    last: BaseException | None = None
    deadline = t0 + timeout
    while time.monotonic() < deadline:
        if proc.exited(info.pid):
            raise ServerError(
                f"Neo4j (pid {info.pid}) exited during startup; tail of {log}:\n"
                + log_tail(info.dir)
            )
        if not _ready_in_log(log, log_offset):
            time.sleep(0.25)
            continue
        try:
            with (
                neo4j.GraphDatabase.driver(
                    info.bolt_uri, auth=info.auth, connection_timeout=2.0
                ) as driver,
                driver.session(database=info.database) as session,
            ):
                record = session.run("RETURN 1 AS x").single()
            if record is not None and record["x"] == 1:
                return
        except Exception as e:  # ServiceUnavailable while the connector opens...
            last = e
        time.sleep(0.25)
    raise ServerError(
        f"Neo4j did not answer RETURN 1 on {info.bolt_uri} within {timeout:g}s; last error: "
        f"{last!r}; tail of {log}:\n" + log_tail(info.dir)
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
            "version": DEFAULT_VERSION,
        },
    )
    return None if fields is None else ServerInfo(**fields)


def start_server(
    dir: Path | str | None = None,
    *,
    bolt_port: int | None = None,
    http_port: int | None = None,
    password: str | None = None,
    version: str | None = None,
    heap: str = "1g",
    pagecache: str = "256m",
    java: str | None = None,
    timeout: float = READY_TIMEOUT_S,
    stable_plans: bool = False,
) -> ServerInfo:
    """Start Neo4j with Bolt (and HTTP) on 127.0.0.1 and wait until ``RETURN 1`` works.

    A port, password or version left as None is taken from the previous run on the same dir,
    else the default (7687, 7474, "graphmem-test", DEFAULT_VERSION). Port 0 picks a free port.
    The server runs in its own session, so it outlives the caller; stop it with
    stop_server(dir). Raises ServerError if it is already running, cannot be resolved, or does
    not come up within ``timeout`` seconds.

    ``stable_plans`` keeps each query's plan for the server's life. Neo4j plans a query again
    once the statistics it was planned with have moved (after 10 s by default), and a test
    suite that empties and refills a small database moves them all the time: on the 2-core
    machine that replanning was most of the server's work in the unit suite. Plans stay
    correct, only possibly slower on data much larger than they were made for, so benchmarks
    leave it off.
    """
    d = Path(dir or default_dir()).resolve()
    proc.claim_dir(d, server_status, "a Neo4j server")
    prev = proc.read_json(d / "server.json")
    version = version or str(prev.get("version", DEFAULT_VERSION))
    if password is None:
        password = str(prev.get("password", DEFAULT_PASSWORD))
    if len(password) < 8:
        raise ServerError("Neo4j requires a password of at least 8 characters")
    bolt_port, http_port = proc.choose_ports(
        prev, bolt_port, http_port, default_bolt=DEFAULT_BOLT_PORT, default_http=DEFAULT_HTTP_PORT
    )

    resolved = resolve_server(version, java=java)  # minutes the first time: not timed
    t0 = time.monotonic()
    flags = [f"-Xms{heap}", f"-Xmx{heap}", *_JVM_FLAGS]
    if resolved["java_feature"] >= 25:
        # Lucene's vector code checks the Java version it was tested with
        flags.append("-Dorg.neo4j.shaded.lucene9.vectorization.upperJavaFeatureVersion=25")
    cp = f"{resolved['lib']}/*{os.pathsep}{resolved['classes']}"
    cmd = [resolved["java"], *flags, "-cp", cp, _MAIN_CLASS, str(d), str(bolt_port), str(http_port)]
    proc.write_json(
        d / "server.json",
        {"version": version, "bolt_port": bolt_port, "http_port": http_port, "password": password},
    )
    offset = proc.append_log_header(
        d / "server.log",
        f"neo4j_server.py start {time.strftime('%Y-%m-%dT%H:%M:%S')} "
        f"Neo4j {version} on Java {resolved['java_feature']}",
    )
    env = dict(os.environ, NEO4J_PASSWORD=password, NEO4J_PAGECACHE=pagecache)
    if stable_plans:
        extra = [env.get("NEO4J_EXTRA_CONF", ""), _STABLE_PLANS_CONF]
        env["NEO4J_EXTRA_CONF"] = ";".join(line for line in extra if line)
    pid = proc.launch(cmd, d, "Neo4j", env)
    info = ServerInfo(
        dir=d,
        pid=pid,
        bolt_port=bolt_port,
        http_port=http_port,
        password=password,
        version=version,
    )
    return proc.finish_start(
        info, prev, t0, lambda: _wait_ready(info, timeout, t0, offset), _write_env_sh
    )


def stop_server(
    dir: Path | str | None = None, *, kill: bool = False, timeout: float = STOP_TIMEOUT_S
) -> bool:
    """Stop the server started on dir and wait until it is gone (and its ports are free).

    SIGTERM (a clean shutdown), then SIGKILL after ``timeout`` seconds; ``kill=True`` sends
    SIGKILL straight away, like a crash. Returns False if nothing of ours was running. Only a
    process whose command line is our launcher with home dir is signalled.
    """
    return proc.stop_process(
        Path(dir or default_dir()).resolve(), _is_our_server, "Neo4j", kill=kill, timeout=timeout
    )


# --------------------------------------------------------------------------- CLI


def _main(argv: list[str] | None = None) -> int:
    p, sub, commands = proc.cli_parser(
        (__doc__ or "").split("\n\n")[0],
        default_dir(),
        dir_help="data dir (default: .neo4j/)",
        kill_help="SIGKILL, not a clean shutdown",
    )
    fetch = sub.add_parser("fetch")
    for sp in (commands["start"], fetch):
        sp.add_argument(
            "--version", default=None, help=f"Neo4j version (default {DEFAULT_VERSION})"
        )
        sp.add_argument("--java", default=None, help="java binary (default: found)")
    start = commands["start"]
    start.add_argument("--bolt-port", type=int, default=None, help="0 = a free port")
    start.add_argument("--http-port", type=int, default=None, help="0 = a free port")
    start.add_argument(
        "--password", default=None, help=f"neo4j's password (default {DEFAULT_PASSWORD!r})"
    )
    start.add_argument("--heap", default="1g", help="JVM heap (default 1g)")
    start.add_argument("--pagecache", default="256m", help="page cache (default 256m)")
    start.add_argument("--timeout", type=float, default=READY_TIMEOUT_S)
    start.add_argument(
        "--stable-plans",
        action="store_true",
        help="keep each query plan for the server's life (test suites; not benchmarks)",
    )
    args = p.parse_args(argv)
    return proc.run_cli(
        args,
        start_server,
        stop_server,
        server_status,
        ready=_ready,
        commands={"fetch": _fetch_command},
    )


def _ready(info: ServerInfo) -> str:
    return (
        f"Neo4j {info.version} ready in {info.startup_seconds:.1f}s: pid {info.pid}, "
        f"{info.bolt_uri} (user {info.user}; Browser {info.browser_url})"
    )


def _fetch_command(a: argparse.Namespace) -> int:
    found = resolve_server(a.version or DEFAULT_VERSION, java=a.java)
    print(json.dumps({k: str(v) for k, v in found.items()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(_main())
