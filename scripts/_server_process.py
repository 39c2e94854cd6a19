"""Process handling shared by the throw-away test servers (scripts/bolt_server.py for ArcadeDB,
scripts/neo4j_server.py for genuine Neo4j): free ports, the detached launch, the PID and
``server.json`` files in the server's dir, telling our server from a recycled PID, stopping it,
``env.sh``, and the ``start``/``stop``/``status`` command line.

Each script keeps what is its own (how to find and run its server, when it is ready, its
``ServerInfo``) and imports this module by name: ``scripts/`` is on ``sys.path`` both when a
script is run as ``python scripts/x.py`` and when a test or bench imports it from there.

Only the standard library is used.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

HOST = "127.0.0.1"
# sh -c SCRIPT sh LOG CMD...: runs CMD in the background with its output appended to LOG,
# prints its PID and exits, so CMD is re-parented away from us.
_LAUNCH_SH = 'log=$1; shift; "$@" </dev/null >>"$log" 2>&1 & echo $!'


class ServerError(RuntimeError):
    """The test server could not be resolved, started, stopped or reached."""


class Endpoints:
    """The addresses of a server info dataclass that has ``bolt_port``, ``http_port``, ``user``,
    ``password`` and ``database`` fields (a mixin: it declares no fields of its own)."""

    bolt_port: int
    http_port: int
    user: str
    password: str
    database: str

    @property
    def bolt_uri(self) -> str:
        return f"bolt://{HOST}:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://{HOST}:{self.http_port}"

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    def bolt_env(self) -> dict[str, str]:
        """The GRAPHMEM_TEST_BOLT_* variables every Bolt test server sets."""
        return {
            "GRAPHMEM_TEST_BOLT_URI": self.bolt_uri,
            "GRAPHMEM_TEST_BOLT_USER": self.user,
            "GRAPHMEM_TEST_BOLT_PASSWORD": self.password,
            "GRAPHMEM_TEST_BOLT_HTTP": self.http_url,
            "GRAPHMEM_TEST_BOLT_DATABASE": self.database,
        }


class _HasEnv(Protocol):
    @property
    def dir(self) -> Path: ...

    def env(self) -> dict[str, str]: ...


class _Started(_HasEnv, Protocol):
    """A started server's info: a dataclass (so that ``dataclasses.replace`` takes it)."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def pid(self) -> int: ...


_Info = TypeVar("_Info", bound=_Started)


# --------------------------------------------------------------------------- ports and files


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(0.5)
        return s.connect_ex((HOST, port)) == 0


def choose_ports(
    prev: dict[str, Any],
    bolt_port: int | None,
    http_port: int | None,
    *,
    default_bolt: int,
    default_http: int,
) -> tuple[int, int]:
    """The Bolt and HTTP ports to start on: None = the previous run's (``prev``, its
    ``server.json``), else the default; 0 = a free port. Raises ServerError if one is taken."""
    if bolt_port is None:
        bolt_port = int(prev.get("bolt_port", default_bolt))
    if http_port is None:
        http_port = int(prev.get("http_port", 0 if bolt_port == 0 else default_http))
    if bolt_port == 0:
        bolt_port = free_port()
    if http_port == 0:
        http_port = free_port()
        while http_port == bolt_port:
            http_port = free_port()
    for name, port in (("bolt", bolt_port), ("http", http_port)):
        if port_in_use(port):
            raise ServerError(
                f"{name} port {port} on {HOST} is already in use (try --{name}-port 0)"
            )
    return bolt_port, http_port


def read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n")


def read_pid(d: Path) -> int | None:
    try:
        return int((d / "server.pid").read_text().strip())
    except (OSError, ValueError):
        return None


def log_tail(d: Path | str, lines: int = 40) -> str:
    try:
        text = (Path(d) / "server.log").read_text(errors="replace")
    except OSError:
        return "(no server.log)"
    return "\n".join(text.splitlines()[-lines:])


def write_env_sh(info: _HasEnv, script: str) -> None:
    """``env.sh`` in the server's dir: its GRAPHMEM_TEST_BOLT_* variables, to be sourced."""
    where = shlex.quote(str(info.dir / "env.sh"))
    body = f"# generated by scripts/{script}; source it: . {where}\n"
    for k, v in info.env().items():
        body += f"export {k}={shlex.quote(v)}\n"
    (info.dir / "env.sh").write_text(body)


# --------------------------------------------------------------------------- processes


def runs_with_args(pid: int, required: Iterable[str]) -> bool:
    """True if pid is alive (not a zombie) and every one of ``required`` is one of its
    command-line arguments: how a script tells its own server from a stale or recycled PID."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    if stat.rsplit(")", 1)[-1].split()[0] in ("Z", "X"):
        return False
    args = [a.decode(errors="replace") for a in cmdline]
    return all(r in args for r in required)


def reap(pid: int) -> None:
    """Collect the exit status if the server is our own child (started in this process)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def exited(pid: int) -> bool:
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


def claim_dir(d: Path, server_status: Callable[[Path], Any], server: str) -> None:
    """Create ``d`` for a start; raise ServerError if ``server`` (e.g. "a Neo4j server") is
    already running on it."""
    d.mkdir(parents=True, exist_ok=True)
    running = server_status(d)
    if running is not None:
        raise ServerError(
            f"{server} is already running on {d} (pid {running.pid}, {running.bolt_uri}); "
            "stop it first"
        )


def append_log_header(log_path: Path, header: str) -> int:
    """Append a ``==== header ====`` line to ``server.log``; the offset after it (where this
    start's output begins)."""
    with open(log_path, "ab") as log:
        log.write(f"\n==== {header} ====\n".encode())
        return log.tell()


def launch(cmd: list[str], d: Path, what: str, env: dict[str, str] | None = None) -> int:
    """Start ``cmd`` in ``d`` with its output appended to ``d/server.log``; its PID, also
    written to ``d/server.pid``.

    Detached like ``setsid nohup cmd &``: a new session (no SIGHUP from our terminal) and not
    our child (the shell exits at once), so the server outlives this process and no zombie or
    Popen object is left behind in a long-lived caller such as pytest.
    """
    launcher = subprocess.run(
        ["/bin/sh", "-c", _LAUNCH_SH, "sh", str(d / "server.log"), *cmd],
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
            f"could not launch {what} (sh rc {launcher.returncode}): {launcher.stderr.strip()}"
        ) from None
    (d / "server.pid").write_text(f"{pid}\n")
    return pid


def abandon_start(d: Path, pid: int, prev: dict[str, Any]) -> None:
    """Undo a start that failed: kill the process just launched (it may not have exec'd java
    yet), forget its PID, and put back what the last good start recorded in ``server.json``,
    so that a plain restart still works."""
    if not exited(pid):
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while not exited(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
    (d / "server.pid").unlink(missing_ok=True)
    if prev:
        write_json(d / "server.json", prev)


def finish_start(
    info: _Info,
    prev: dict[str, Any],
    t0: float,
    wait_ready: Callable[[], None],
    write_env: Callable[[_Info], None],
) -> _Info:
    """Wait until the server just launched is ready (else kill it, see abandon_start, and
    re-raise), write its ``env.sh``, and return its info with ``startup_seconds`` since t0."""
    try:
        wait_ready()
    except BaseException:
        abandon_start(info.dir, info.pid, prev)
        raise
    write_env(info)
    return dataclasses.replace(info, startup_seconds=round(time.monotonic() - t0, 2))


def running_fields(
    d: Path, is_ours: Callable[[int, Path], bool], recorded: dict[str, Any]
) -> dict[str, Any] | None:
    """``dir``, ``pid`` and the ``recorded`` fields of our server running on d (each from its
    ``server.json``, else the given default, as the default's type), or None if none is."""
    pid = read_pid(d)
    if pid is None or not is_ours(pid, d):
        return None
    meta = read_json(d / "server.json")
    return {"dir": d, "pid": pid} | {k: type(v)(meta.get(k, v)) for k, v in recorded.items()}


def stop_process(
    d: Path,
    is_ours: Callable[[int, Path], bool],
    what: str,
    *,
    kill: bool,
    timeout: float,
    reap_stale: bool = False,
) -> bool:
    """Stop the server started on ``d`` and wait until it is gone and its ports are free.

    SIGTERM, then SIGKILL after ``timeout`` seconds; ``kill=True`` sends SIGKILL straight away,
    like a crash. Returns False if nothing of ours was running. Only a process ``is_ours``
    accepts is signalled, so a stale or recycled PID is never hit; ``reap_stale`` collects the
    exit status of a PID that is not (a server started as our child by an older script).
    """
    pid = read_pid(d)
    if pid is None or not is_ours(pid, d):
        if pid is not None and reap_stale:
            reap(pid)
        (d / "server.pid").unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
    deadline = time.monotonic() + timeout
    escalated = kill
    while not exited(pid):
        if time.monotonic() > deadline:
            if escalated:
                raise ServerError(f"{what} pid {pid} survived SIGKILL")
            os.kill(pid, signal.SIGKILL)
            escalated = True
            deadline = time.monotonic() + 10
        time.sleep(0.1)
    (d / "server.pid").unlink(missing_ok=True)
    # and until its listeners are closed, so that a restart can bind the same ports
    meta = read_json(d / "server.json")
    ports = [int(meta[k]) for k in ("bolt_port", "http_port") if k in meta]
    deadline = time.monotonic() + 10
    while any(port_in_use(p) for p in ports) and time.monotonic() < deadline:
        time.sleep(0.1)
    return True


# --------------------------------------------------------------------------- CLI


def cli_parser(
    description: str, default_dir: Path, *, dir_help: str, kill_help: str
) -> tuple[argparse.ArgumentParser, Any, dict[str, argparse.ArgumentParser]]:
    """The parser with ``start``, ``stop`` (``--kill``) and ``status``, each with ``--dir``;
    also its subparsers action (for a script's own commands) and the three subparsers (for the
    script's ``start`` options)."""
    p = argparse.ArgumentParser(description=description)
    sub = p.add_subparsers(dest="cmd", required=True)
    commands: dict[str, argparse.ArgumentParser] = {}
    for name in ("start", "stop", "status"):
        sp = sub.add_parser(name)
        sp.add_argument("--dir", type=Path, default=default_dir, help=dir_help)
        commands[name] = sp
    commands["stop"].add_argument("--kill", action="store_true", help=kill_help)
    return p, sub, commands


def run_cli(
    a: argparse.Namespace,
    start_server: Callable[..., Any],
    stop_server: Callable[..., bool],
    server_status: Callable[[Path], Any],
    *,
    ready: Callable[[Any], str],
    commands: dict[str, Callable[[argparse.Namespace], int]] | None = None,
) -> int:
    """Run the parsed command: ``start`` (every option but ``--dir`` is passed to
    ``start_server`` by its name; ``ready`` says what came up), ``stop`` and ``status`` here, a
    script's own by ``commands``. A ServerError is printed as ``error: ...`` with exit status 2;
    ``status`` exits 1 when no server is running."""
    try:
        if commands and a.cmd in commands:
            return commands[a.cmd](a)
        if a.cmd == "start":
            options = {k: v for k, v in vars(a).items() if k not in ("cmd", "dir")}
            info = start_server(a.dir, **options)
            print(ready(info))
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
