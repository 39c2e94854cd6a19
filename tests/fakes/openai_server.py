"""A local, OpenAI-compatible HTTP server for tests (no network, no real LLM).

It lets the extraction code run end to end with the *real* ``openai`` client
(and real retry code) over real sockets on ``127.0.0.1``: the server speaks
``POST /v1/chat/completions``, ``POST /v1/embeddings`` and ``GET /v1/models``
with response bodies shaped like the real API, answers from a script, and can
inject faults (429 with ``Retry-After``, 5xx, slow answers, TCP resets, bad
JSON, refusals, ``<think>`` preambles, servers that reject ``json_schema``).

Usage as a pytest fixture (the one supported way)::

    # in a test module, or in the top-level tests/conftest.py
    pytest_plugins = ["tests.fakes.pytest_plugin"]

    def test_extract(fake_openai: FakeOpenAIServer) -> None:
        fake_openai.script("Alice", {"entities": [{"name": "Alice"}], "relations": []})
        fake_openai.inject(rate_limit(retry_after=1))          # first call gets a 429
        client = openai.OpenAI(base_url=fake_openai.base_url, api_key="test")
        ...
        assert len(fake_openai.calls("chat/completions")) == 2

``tests.fakes`` must be importable, i.e. the repository root must be on
``sys.path``: true for ``python -m pytest`` run from the root, or with
``pythonpath = ["."]`` in ``[tool.pytest.ini_options]``.

Usage as a context manager (scripts, benchmarks, other fixtures)::

    with FakeOpenAIServer(embedding_dim=64) as server:
        client = server.client(max_retries=0)
        client.chat.completions.create(model="m", messages=[...])

Scripting
    ``server.script(match, content, times=None)`` adds a rule: ``match`` is a
    substring searched in the concatenated message contents of the request (the
    empty string matches everything); the first matching rule wins; ``times=None``
    repeats forever, ``times=n`` answers ``n`` requests and then retires.
    ``content`` is a ``str`` (sent verbatim as ``message.content``), a
    ``dict``/``list`` (sent as its JSON text) or a callable taking the request
    JSON and returning one of those.  When no rule matches, ``server.default``
    (same callable type) answers; out of the box it returns ``"{}"`` when the
    request has a ``response_format`` and ``"OK"`` otherwise.

Faults
    ``server.inject(fault, times=1, match=None, path="/v1/chat/completions")``
    queues ``fault`` for the next ``times`` requests to ``path`` whose text
    contains ``match`` (``path=None``: any endpoint).  Faults are consumed in
    FIFO order, one per request, *before* scripted rules are looked at; a
    request answered with an error (429/5xx/reset) does not consume a one-shot
    rule, so the client's retry gets the scripted answer.  The faults are
    :func:`rate_limit`, :func:`server_error`, :func:`timeout`,
    ``connection_reset``, ``malformed_json``, ``truncated_json``,
    ``schema_violation``, ``refusal``, ``think_preamble`` and the *persistent*
    ``reject_json_schema`` (``inject(reject_json_schema)`` just switches
    ``server.reject_json_schema`` on; ``times``/``match`` do not apply).

Recording
    Every request is recorded as a :class:`RecordedRequest` (method, path, JSON
    body, lower-cased headers, ``received_at`` from ``time.monotonic()``, the
    fault applied and the status sent).  ``server.requests`` returns a snapshot;
    ``server.calls("chat/completions")`` filters by path.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import math
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, Self, TypeAlias

if TYPE_CHECKING:
    import openai

__all__ = [
    "CHAT_PATH",
    "EMBEDDINGS_PATH",
    "MODELS_PATH",
    "FakeOpenAIServer",
    "Fault",
    "RecordedRequest",
    "Responder",
    "ScriptContent",
    "ScriptRule",
    "connection_reset",
    "fake_embedding",
    "malformed_json",
    "rate_limit",
    "refusal",
    "reject_json_schema",
    "schema_violation",
    "server_error",
    "think_preamble",
    "timeout",
    "truncated_json",
]

CHAT_PATH: Final = "/v1/chat/completions"
EMBEDDINGS_PATH: Final = "/v1/embeddings"
MODELS_PATH: Final = "/v1/models"

JSONValue: TypeAlias = dict[str, Any] | list[Any]
Responder: TypeAlias = Callable[[dict[str, Any]], str | JSONValue]
ScriptContent: TypeAlias = str | JSONValue | Responder

FaultKind: TypeAlias = Literal[
    "rate_limit",
    "server_error",
    "timeout",
    "connection_reset",
    "malformed_json",
    "truncated_json",
    "schema_violation",
    "refusal",
    "think_preamble",
    "reject_json_schema",
]

# Faults that replace or alter a chat completion's *content*; they make no sense elsewhere.
_CONTENT_FAULTS: Final[frozenset[str]] = frozenset(
    {"malformed_json", "truncated_json", "schema_violation", "refusal", "think_preamble"}
)
_MAX_BODY_BYTES: Final = 32 * 1024 * 1024
_IDLE_CONNECTION_TIMEOUT_S: Final = 10.0
_SHUTDOWN_JOIN_S: Final = 2.0


# --------------------------------------------------------------------------------------
# Faults
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fault:
    """One kind of misbehaviour; build it with the helpers below, not directly."""

    kind: FaultKind
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    content: str | None = None


def rate_limit(retry_after: float | None = 1.0) -> Fault:
    """HTTP 429 with ``Retry-After: <retry_after>`` (omitted when ``None``) and an error body."""
    if retry_after is not None and retry_after < 0:
        raise ValueError("retry_after must be >= 0")
    return Fault(kind="rate_limit", status=429, retry_after=retry_after)


def server_error(status: int = 500) -> Fault:
    """An HTTP 5xx answer (500, 502, 503, ...) with an OpenAI-style error body."""
    if not 500 <= status <= 599:
        raise ValueError(f"server_error needs a 5xx status, got {status}")
    return Fault(kind="server_error", status=status)


def timeout(seconds: float = 5.0) -> Fault:
    """Sleep ``seconds`` before answering (pick more than the client's timeout).

    The sleep is cut short when the server stops.  If the client is still there
    when it ends, it gets the normal scripted answer.
    """
    if seconds < 0:
        raise ValueError("seconds must be >= 0")
    return Fault(kind="timeout", seconds=seconds)


connection_reset: Final = Fault(kind="connection_reset")
"""Read the request, then close the socket with ``SO_LINGER`` 0: a real TCP RST, no response."""

malformed_json: Final = Fault(kind="malformed_json", content='{"entities": [')
"""200 whose ``message.content`` is not JSON."""

truncated_json: Final = Fault(kind="truncated_json")
"""200 whose content is the scripted answer cut in half, with ``finish_reason: "length"``."""

schema_violation: Final = Fault(
    kind="schema_violation",
    content=json.dumps({"entities": "Alice", "relations": [{"unexpected": True}], "extra": 1}),
)
"""200 whose content is valid JSON of the wrong shape."""

refusal: Final = Fault(kind="refusal", content="I'm sorry, but I can't help with that request.")
"""200 with ``message.refusal`` set and ``message.content`` null (structured-outputs refusal)."""

think_preamble: Final = Fault(
    kind="think_preamble",
    content="<think>\nThe user wants entities and relations. Let me list them.\n</think>\n\n",
)
"""200 whose content is ``<think>...</think>`` followed by the scripted answer."""

reject_json_schema: Final = Fault(kind="reject_json_schema", status=400)
"""Persistent mode: ``response_format.type == "json_schema"`` gets HTTP 400; others succeed."""


# --------------------------------------------------------------------------------------
# Records and rules
# --------------------------------------------------------------------------------------


@dataclass(slots=True)
class RecordedRequest:
    """What the server saw for one HTTP request (and what it did about it)."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]
    received_at: float
    """``time.monotonic()`` when the request had been read."""
    fault: str | None = None
    """The :class:`Fault` kind applied, if any."""
    status: int | None = None
    """HTTP status sent; ``None`` when no response was sent (reset, or server stopped)."""
    responded_at: float | None = None

    @property
    def text(self) -> str:
        """The text that ``match`` arguments are searched in (see :func:`request_text`)."""
        return request_text(self.body)


@dataclass(slots=True)
class ScriptRule:
    match: str
    content: ScriptContent
    times: int | None
    """Answers left; ``None`` means unlimited."""
    used: int = 0


@dataclass(slots=True)
class _Injection:
    fault: Fault
    remaining: int
    match: str | None
    path: str | None


@dataclass(slots=True)
class _Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, Mapping) and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    return ""


def request_text(body: Any) -> str:
    """Concatenated message contents (chat) or inputs (embeddings) of a request body."""
    if not isinstance(body, Mapping):
        return ""
    messages = body.get("messages")
    if isinstance(messages, list):
        return "\n".join(
            _content_text(m.get("content")) for m in messages if isinstance(m, Mapping)
        )
    inputs = body.get("input")
    if isinstance(inputs, str):
        return inputs
    if isinstance(inputs, list):
        return "\n".join(x for x in inputs if isinstance(x, str))
    return ""


def _approx_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _error_body(message: str, type_: str, code: str | None, param: str | None = None) -> Any:
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


# --------------------------------------------------------------------------------------
# Embeddings
# --------------------------------------------------------------------------------------

_WORD_RE: Final = re.compile(r"\w+", re.UNICODE)


def _f32(x: float) -> float:
    result: float = struct.unpack("<f", struct.pack("<f", x))[0]
    return result


def fake_embedding(text: str, dim: int) -> list[float]:
    """Deterministic unit vector for ``text`` (feature hashing of its lower-cased words).

    Texts that share words get a positive cosine similarity, so retrieval tests
    behave sensibly; the values are float32-representable, so the ``float`` and
    ``base64`` encodings decode to exactly the same numbers.
    """
    if dim <= 0:
        raise ValueError("dim must be positive")
    tokens = _WORD_RE.findall(text.lower()) or [text]
    acc = [0.0] * dim
    for token in tokens:
        digest = hashlib.shake_128(token.encode("utf-8")).digest(dim)
        for i, byte in enumerate(digest):
            acc[i] += (byte - 127.5) / 127.5
    norm = math.sqrt(sum(v * v for v in acc)) or 1.0
    return [_f32(v / norm) for v in acc]


# --------------------------------------------------------------------------------------
# HTTP handler
# --------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like the real API
    timeout = _IDLE_CONNECTION_TIMEOUT_S  # bounds idle keep-alive reads
    server_version = "graphmem-fake-openai/1.0"
    sys_version = ""
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, threading.current_thread(), add=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._track(self.connection, threading.current_thread(), add=False)

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        path = self.path.split("?", 1)[0]
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = self._read_chunked()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY_BYTES:
                self.close_connection = True
                self._send(
                    _Reply(413, _error_body("Request too large", "invalid_request_error", None))
                )
                return
            raw = self.rfile.read(length) if length > 0 else b""
        body: Any = None
        parse_error: str | None = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError as exc:
                parse_error = str(exc)
        record = RecordedRequest(
            method=method,
            path=path,
            body=body,
            headers={k.lower(): v for k, v in self.headers.items()},
            received_at=time.monotonic(),
        )
        owner = self.server.owner
        owner._record(record)
        if parse_error is not None:
            reply: _Reply | None = _Reply(
                400,
                _error_body(
                    f"We could not parse the JSON body of your request. ({parse_error})",
                    "invalid_request_error",
                    None,
                ),
            )
        else:
            reply = owner._handle(record, self.connection)
        if reply is None:  # connection reset, or the server stopped while sleeping
            self.close_connection = True
            return
        # Record before writing: once the bytes are out, the client may already be
        # asserting on this record.
        record.status = reply.status
        record.responded_at = time.monotonic()
        self._send(reply)

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        total = 0
        while True:
            size_line = self.rfile.readline(1024)
            size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(chunks)
            total += size
            if total > _MAX_BODY_BYTES:
                raise ValueError("chunked body too large")
            chunks.append(self.rfile.read(size))
            self.rfile.readline(1024)

    def _send(self, reply: _Reply) -> None:
        payload = b"" if reply.body is None else json.dumps(reply.body).encode("utf-8")
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except OSError:  # client went away (e.g. it timed out first)
            self.close_connection = True


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, owner: FakeOpenAIServer) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", 0), _Handler)


# --------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------


def _default_responder(request: dict[str, Any]) -> str | JSONValue:
    return "{}" if request.get("response_format") else "OK"


class FakeOpenAIServer:
    """OpenAI-compatible test server on ``127.0.0.1:<ephemeral port>`` (see module docs)."""

    def __init__(
        self,
        *,
        embedding_dim: int = 1536,
        models: tuple[str, ...] = ("gpt-4o-mini", "text-embedding-3-small"),
    ) -> None:
        self.embedding_dim = embedding_dim
        self.models = models
        self.default: Responder = _default_responder
        self.reject_json_schema = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._rules: list[ScriptRule] = []
        self._injections: list[_Injection] = []
        self._requests: list[RecordedRequest] = []
        self._connections: set[socket.socket] = set()
        self._handler_threads: set[threading.Thread] = set()
        self._counter = 0
        self._clients: list[openai.OpenAI] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> Self:
        if self._httpd is not None:
            raise RuntimeError("server already started")
        self._stop.clear()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fake-openai-{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake sleeping handlers, drop open connections; bounded in time."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stop.set()
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            with contextlib.suppress(Exception):
                client.close()
        httpd.shutdown()
        with self._lock:
            connections = list(self._connections)
            handlers = list(self._handler_threads)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        httpd.server_close()
        deadline = time.monotonic() + _SHUTDOWN_JOIN_S
        for t in [*handlers, *([thread] if thread else [])]:
            t.join(max(0.0, deadline - time.monotonic()))
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` — pass it as ``openai.OpenAI(base_url=...)``."""
        return f"http://127.0.0.1:{self.port}/v1"

    def client(self, **kwargs: Any) -> openai.OpenAI:
        """A real ``openai.OpenAI`` client pointed at this server (``kwargs`` pass through).

        Clients made here are closed by :meth:`stop`.
        """
        import openai

        kwargs.setdefault("api_key", "test")
        kwargs.setdefault("base_url", self.base_url)
        client = openai.OpenAI(**kwargs)
        with self._lock:
            self._clients.append(client)
        return client

    # ---- configuration ----------------------------------------------------------------

    def script(self, match: str, content: ScriptContent, *, times: int | None = None) -> ScriptRule:
        """Answer requests whose text contains ``match`` with ``content`` (first rule wins).

        ``times=None`` repeats forever; ``times=n`` retires the rule after ``n`` answers.
        """
        if times is not None and times < 1:
            raise ValueError("times must be >= 1 or None")
        rule = ScriptRule(match=match, content=content, times=times)
        with self._lock:
            self._rules.append(rule)
        return rule

    def inject(
        self,
        fault: Fault,
        *,
        times: int = 1,
        match: str | None = None,
        path: str | None = CHAT_PATH,
    ) -> None:
        """Queue ``fault`` for the next ``times`` requests to ``path`` containing ``match``."""
        if fault.kind == "reject_json_schema":
            self.reject_json_schema = True
            return
        if times < 1:
            raise ValueError("times must be >= 1")
        path = None if path is None else self._normalise_path(path)
        if fault.kind in _CONTENT_FAULTS and path != CHAT_PATH:
            raise ValueError(f"{fault.kind} only applies to {CHAT_PATH}")
        with self._lock:
            self._injections.append(_Injection(fault, times, match, path))

    def pending_faults(self) -> list[tuple[str, int]]:
        """``(kind, remaining)`` of the queued faults not consumed yet."""
        with self._lock:
            return [(i.fault.kind, i.remaining) for i in self._injections]

    def reset(self) -> None:
        """Forget rules, queued faults, modes and recorded requests."""
        with self._lock:
            self._rules.clear()
            self._injections.clear()
            self._requests.clear()
        self.reject_json_schema = False
        self.default = _default_responder

    # ---- inspection -------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of every request received so far, in arrival order."""
        with self._lock:
            return list(self._requests)

    def calls(self, path: str) -> list[RecordedRequest]:
        """Recorded requests for ``path`` (``"/v1/chat/completions"`` or ``"chat/completions"``)."""
        wanted = self._normalise_path(path)
        return [r for r in self.requests if r.path == wanted]

    # ---- internals (called from handler threads) ---------------------------------------

    @staticmethod
    def _normalise_path(path: str) -> str:
        path = path.split("?", 1)[0].rstrip("/")
        if path.startswith("/v1/") or path == "/v1":
            return path
        return "/v1/" + path.lstrip("/")

    def _track(self, conn: socket.socket, thread: threading.Thread, *, add: bool) -> None:
        with self._lock:
            if add:
                self._connections.add(conn)
                self._handler_threads.add(thread)
            else:
                self._connections.discard(conn)
                self._handler_threads.discard(thread)

    def _record(self, record: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(record)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            n = self._counter
        return f"{prefix}-fake{n:08d}"

    def _take_fault(self, record: RecordedRequest) -> Fault | None:
        text = record.text
        with self._lock:
            for inj in self._injections:
                if inj.path is not None and inj.path != record.path:
                    continue
                if inj.match is not None and inj.match not in text:
                    continue
                inj.remaining -= 1
                if inj.remaining <= 0:
                    self._injections.remove(inj)
                return inj.fault
        return None

    def _resolve_content(self, body: dict[str, Any], text: str) -> str:
        chosen: ScriptContent | None = None
        with self._lock:
            for rule in self._rules:
                if rule.match in text:
                    rule.used += 1
                    if rule.times is not None:
                        rule.times -= 1
                        if rule.times <= 0:
                            self._rules.remove(rule)
                    chosen = rule.content
                    break
        if chosen is None:
            chosen = self.default
        value = chosen(body) if callable(chosen) else chosen
        return value if isinstance(value, str) else json.dumps(value)

    def _handle(self, record: RecordedRequest, conn: socket.socket) -> _Reply | None:
        path, method = record.path, record.method
        if method == "GET":
            return self._models(path)
        if path not in (CHAT_PATH, EMBEDDINGS_PATH):
            return _Reply(
                404, _error_body(f"Invalid URL (POST {path})", "invalid_request_error", None)
            )
        body = record.body
        if not isinstance(body, dict):
            return _Reply(
                400,
                _error_body("Request body must be a JSON object", "invalid_request_error", None),
            )

        if path == CHAT_PATH and self.reject_json_schema:
            fmt = body.get("response_format")
            if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
                record.fault = "reject_json_schema"
                return _Reply(
                    400,
                    _error_body(
                        "response_format.type 'json_schema' is not supported by this server; "
                        "use 'json_object' or 'text'",
                        "invalid_request_error",
                        "unsupported_response_format",
                        param="response_format",
                    ),
                )

        fault = self._take_fault(record)
        if fault is not None:
            record.fault = fault.kind
            if fault.kind == "rate_limit":
                headers: dict[str, str] = {}
                if fault.retry_after is not None:
                    ra = fault.retry_after
                    headers["Retry-After"] = str(int(ra)) if float(ra).is_integer() else str(ra)
                return _Reply(
                    429,
                    _error_body(
                        "Rate limit reached for requests (fake server). Please try again later.",
                        "requests",
                        "rate_limit_exceeded",
                    ),
                    headers,
                )
            if fault.kind == "server_error":
                message = (
                    "The server is overloaded or not ready yet."
                    if fault.status == 503
                    else "The server had an error while processing your request. Sorry about that!"
                )
                return _Reply(fault.status, _error_body(message, "server_error", None))
            if fault.kind == "connection_reset":
                self._reset(conn)
                return None
            if fault.kind == "timeout" and self._stop.wait(fault.seconds):
                return None  # server stopping: drop the request

        if path == EMBEDDINGS_PATH:
            return self._embeddings(body)
        return self._chat(body, record.text, fault)

    def _reset(self, conn: socket.socket) -> None:
        """Abort the TCP connection: SO_LINGER 0 + close sends RST instead of FIN."""
        with contextlib.suppress(OSError):
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        # The handler's rfile holds a reference to the socket; a plain close() would
        # be deferred, and socketserver would send FIN first.  Close the real fd now.
        try:
            fd = conn.detach()
        except OSError:
            return
        socket.socket(fileno=fd).close()

    def _models(self, path: str) -> _Reply:
        now = int(time.time())

        def model(mid: str) -> dict[str, Any]:
            return {"id": mid, "object": "model", "created": now, "owned_by": "graphmem-fake"}

        if path == MODELS_PATH:
            return _Reply(200, {"object": "list", "data": [model(m) for m in self.models]})
        if path.startswith(MODELS_PATH + "/"):
            mid = path[len(MODELS_PATH) + 1 :]
            if mid in self.models:
                return _Reply(200, model(mid))
            return _Reply(
                404,
                _error_body(
                    f"The model '{mid}' does not exist", "invalid_request_error", "model_not_found"
                ),
            )
        return _Reply(404, _error_body(f"Invalid URL (GET {path})", "invalid_request_error", None))

    def _chat(self, body: dict[str, Any], text: str, fault: Fault | None) -> _Reply:
        if body.get("stream"):
            return _Reply(
                400,
                _error_body(
                    "stream=true is not supported by the fake server", "invalid_request_error", None
                ),
            )
        kind = fault.kind if fault is not None else None
        finish_reason = "stop"
        refusal_text: str | None = None
        content: str | None
        if kind in ("malformed_json", "schema_violation"):
            assert fault is not None and fault.content is not None
            content = fault.content
        elif kind == "refusal":
            assert fault is not None
            content, refusal_text = None, fault.content
        else:
            content = self._resolve_content(body, text)
            if kind == "truncated_json":
                content = content[: max(1, len(content) // 2)] if len(content) > 1 else '{"'
                finish_reason = "length"
            elif kind == "think_preamble":
                assert fault is not None
                content = (fault.content or "") + content

        n = body.get("n")
        n_choices = n if isinstance(n, int) and 1 <= n <= 16 else 1
        message: dict[str, Any] = {
            "role": "assistant",
            "content": content,
            "refusal": refusal_text,
            "annotations": [],
        }
        completion_tokens = _approx_tokens(content or refusal_text or "") * n_choices
        prompt_tokens = _approx_tokens(text)
        return _Reply(
            200,
            {
                "id": self._next_id("chatcmpl"),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": str(body.get("model", "fake-model")),
                "choices": [
                    {
                        "index": i,
                        "message": dict(message),
                        "logprobs": None,
                        "finish_reason": finish_reason,
                    }
                    for i in range(n_choices)
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": completion_tokens,
                    "total_tokens": prompt_tokens + completion_tokens,
                },
                "service_tier": "default",
                "system_fingerprint": "fp_graphmem_fake",
            },
            {"x-request-id": self._next_id("req")},
        )

    def _embeddings(self, body: dict[str, Any]) -> _Reply:
        raw = body.get("input")
        inputs: list[str]
        if isinstance(raw, str):
            inputs = [raw]
        elif isinstance(raw, list) and raw and all(isinstance(x, int) for x in raw):
            inputs = [" ".join(map(str, raw))]  # one pre-tokenised input
        elif isinstance(raw, list) and raw:
            inputs = [x if isinstance(x, str) else " ".join(map(str, x)) for x in raw]
        else:
            return _Reply(
                400,
                _error_body(
                    "'input' must be a non-empty string or array",
                    "invalid_request_error",
                    None,
                    param="input",
                ),
            )
        dims = body.get("dimensions")
        dim = dims if isinstance(dims, int) and dims > 0 else self.embedding_dim
        as_base64 = body.get("encoding_format") == "base64"
        data: list[dict[str, Any]] = []
        for i, text in enumerate(inputs):
            vector = fake_embedding(text, dim)
            encoded: list[float] | str = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode("ascii")
                if as_base64
                else vector
            )
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(_approx_tokens(t) for t in inputs)
        return _Reply(
            200,
            {
                "object": "list",
                "data": data,
                "model": str(body.get("model", "text-embedding-3-small")),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
            {"x-request-id": self._next_id("req")},
        )


def serve(**kwargs: Any) -> Iterator[FakeOpenAIServer]:
    """Generator form for ``pytest`` fixtures: start, yield, always stop."""
    server = FakeOpenAIServer(**kwargs).start()
    try:
        yield server
    finally:
        server.stop()
