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

Only the standard library is used, plus the ``neo4j`` driver for the readiness poll.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
HOST = "127.0.0.1"
READY_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 60.0
_MAIN_CLASS = "GraphmemNeo4jServer"
_READY = "NEO4J_READY"
# sh -c SCRIPT sh LOG CMD...: runs CMD in the background with its output appended to LOG,
# prints its PID and exits, so CMD is re-parented away from us.
_LAUNCH_SH = 'log=$1; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOLS = REPO_ROOT / "tools" / "neo4j-server"

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


# No replanning when the statistics change (start --stable-plans): a plan is made again only
# after this long.
_STABLE_PLANS_CONF = "dbms.cypher.min_replan_interval=1000h"


class ServerError(RuntimeError):
    """The test server could not be resolved, started, stopped or reached."""


@dataclasses.dataclass(frozen=True)
class ServerInfo:
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
    def bolt_uri(self) -> str:
        return f"bolt://{HOST}:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://{HOST}:{self.http_port}"

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"

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
    """True if pid is alive (not a zombie) and is our Neo4j launcher with home d."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
        return False
    args = [a.decode(errors="replace") for a in cmdline]
    return _MAIN_CLASS in args and str(d) in args


def _exited(pid: int) -> bool:
    """True once pid and all its threads are gone (reaping it if it is our own child)."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == pid
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
    body = f"# generated by scripts/neo4j_server.py; source it: . {where}\n"
    for k, v in info.env().items():
        body += f"export {k}={shlex.quote(v)}\n"
    (info.dir / "env.sh").write_text(body)


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
        if _exited(info.pid):
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
        version=str(meta.get("version", DEFAULT_VERSION)),
    )


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
    d.mkdir(parents=True, exist_ok=True)
    running = server_status(d)
    if running is not None:
        raise ServerError(
            f"a Neo4j server is already running on {d} (pid {running.pid}, "
            f"{running.bolt_uri}); stop it first"
        )
    prev = _read_json(d / "server.json")
    version = version or str(prev.get("version", DEFAULT_VERSION))
    if bolt_port is None:
        bolt_port = int(prev.get("bolt_port", DEFAULT_BOLT_PORT))
    if http_port is None:
        http_port = int(prev.get("http_port", 0 if bolt_port == 0 else DEFAULT_HTTP_PORT))
    if password is None:
        password = str(prev.get("password", DEFAULT_PASSWORD))
    if len(password) < 8:
        raise ServerError("Neo4j requires a password of at least 8 characters")
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

    resolved = resolve_server(version, java=java)  # minutes the first time: not timed
    t0 = time.monotonic()
    flags = [f"-Xms{heap}", f"-Xmx{heap}", *_JVM_FLAGS]
    if resolved["java_feature"] >= 25:
        # Lucene's vector code checks the Java version it was tested with
        flags.append("-Dorg.neo4j.shaded.lucene9.vectorization.upperJavaFeatureVersion=25")
    cp = f"{resolved['lib']}/*{os.pathsep}{resolved['classes']}"
    cmd = [resolved["java"], *flags, "-cp", cp, _MAIN_CLASS, str(d), str(bolt_port), str(http_port)]
    (d / "server.json").write_text(
        json.dumps(
            {
                "version": version,
                "bolt_port": bolt_port,
                "http_port": http_port,
                "password": password,
            },
            indent=2,
        )
        + "\n"
    )
    log_path = d / "server.log"
    with open(log_path, "ab") as log:
        log.write(
            f"\n==== neo4j_server.py start {time.strftime('%Y-%m-%dT%H:%M:%S')} "
            f"Neo4j {version} on Java {resolved['java_feature']} ====\n".encode()
        )
        offset = log.tell()
    env = dict(os.environ, NEO4J_PASSWORD=password, NEO4J_PAGECACHE=pagecache)
    if stable_plans:
        extra = [env.get("NEO4J_EXTRA_CONF", ""), _STABLE_PLANS_CONF]
        env["NEO4J_EXTRA_CONF"] = ";".join(line for line in extra if line)
    launcher = subprocess.run(
        ["/bin/sh", "-c", _LAUNCH_SH, "sh", str(log_path), *cmd],
        cwd=d,
        env=env,
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
            f"could not launch Neo4j (sh rc {launcher.returncode}): {launcher.stderr.strip()}"
        ) from None
    (d / "server.pid").write_text(f"{pid}\n")
    info = ServerInfo(
        dir=d,
        pid=pid,
        bolt_port=bolt_port,
        http_port=http_port,
        password=password,
        version=version,
    )
    try:
        _wait_ready(info, timeout, t0, offset)
    except BaseException:
        if not _exited(pid):
            os.kill(pid, signal.SIGKILL)
            deadline = time.monotonic() + 30
            while not _exited(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
        (d / "server.pid").unlink(missing_ok=True)
        if prev:
            (d / "server.json").write_text(json.dumps(prev, indent=2) + "\n")
        raise
    _write_env_sh(info)
    return dataclasses.replace(info, startup_seconds=round(time.monotonic() - t0, 2))


def stop_server(
    dir: Path | str | None = None, *, kill: bool = False, timeout: float = STOP_TIMEOUT_S
) -> bool:
    """Stop the server started on dir and wait until it is gone (and its ports are free).

    SIGTERM (a clean shutdown), then SIGKILL after ``timeout`` seconds; ``kill=True`` sends
    SIGKILL straight away, like a crash. Returns False if nothing of ours was running. Only a
    process whose command line is our launcher with home dir is signalled.
    """
    d = Path(dir or default_dir()).resolve()
    pid = _read_pid(d)
    if pid is None or not _is_our_server(pid, d):
        (d / "server.pid").unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
    deadline = time.monotonic() + timeout
    escalated = kill
    while not _exited(pid):
        if time.monotonic() > deadline:
            if escalated:
                raise ServerError(f"Neo4j pid {pid} survived SIGKILL")
            os.kill(pid, signal.SIGKILL)
            escalated = True
            deadline = time.monotonic() + 10
        time.sleep(0.1)
    (d / "server.pid").unlink(missing_ok=True)
    meta = _read_json(d / "server.json")
    ports = [int(meta[k]) for k in ("bolt_port", "http_port") if k in meta]
    deadline = time.monotonic() + 10
    while any(_port_in_use(p) for p in ports) and time.monotonic() < deadline:
        time.sleep(0.1)
    return True


# --------------------------------------------------------------------------- CLI


def _main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("start", "stop", "status", "fetch"):
        sp = sub.add_parser(name)
        if name != "fetch":
            sp.add_argument(
                "--dir", type=Path, default=default_dir(), help="data dir (default: .neo4j/)"
            )
        if name in ("start", "fetch"):
            sp.add_argument(
                "--version", default=None, help=f"Neo4j version (default {DEFAULT_VERSION})"
            )
            sp.add_argument("--java", default=None, help="java binary (default: found)")
        if name == "start":
            sp.add_argument("--bolt-port", type=int, default=None, help="0 = a free port")
            sp.add_argument("--http-port", type=int, default=None, help="0 = a free port")
            sp.add_argument(
                "--password", default=None, help=f"neo4j's password (default {DEFAULT_PASSWORD!r})"
            )
            sp.add_argument("--heap", default="1g", help="JVM heap (default 1g)")
            sp.add_argument("--pagecache", default="256m", help="page cache (default 256m)")
            sp.add_argument("--timeout", type=float, default=READY_TIMEOUT_S)
            sp.add_argument(
                "--stable-plans",
                action="store_true",
                help="keep each query plan for the server's life (test suites; not benchmarks)",
            )
        if name == "stop":
            sp.add_argument("--kill", action="store_true", help="SIGKILL, not a clean shutdown")
    a = p.parse_args(argv)
    try:
        if a.cmd == "fetch":
            found = resolve_server(a.version or DEFAULT_VERSION, java=a.java)
            print(json.dumps({k: str(v) for k, v in found.items()}, indent=2))
            return 0
        if a.cmd == "start":
            info = start_server(
                a.dir,
                bolt_port=a.bolt_port,
                http_port=a.http_port,
                password=a.password,
                version=a.version,
                heap=a.heap,
                pagecache=a.pagecache,
                java=a.java,
                timeout=a.timeout,
                stable_plans=a.stable_plans,
            )
            print(
                f"Neo4j {info.version} ready in {info.startup_seconds:.1f}s: pid {info.pid}, "
                f"{info.bolt_uri} (user {info.user}; Browser {info.browser_url})"
            )
            print(f"source {info.dir / 'env.sh'} for the GRAPHMEM_TEST_BOLT_* variables")
            return 0
        if a.cmd == "stop":
            stopped = stop_server(a.dir, kill=a.kill)
            print("stopped" if stopped else f"no server running on {a.dir.resolve()}")
            return 0
        running = server_status(a.dir)
        if running is None:
            print(json.dumps({"running": False, "dir": str(a.dir.resolve())}))
            return 1
        status = {"running": True, "pid": running.pid, "dir": str(running.dir), **running.env()}
        print(json.dumps(status, indent=2))
        return 0
    except ServerError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(_main())
