"""The fake OpenAI server speaks well enough to the real ``openai`` client, faults included."""

from __future__ import annotations

import json
import math
import socket
import threading
import time
from typing import Any

import openai
import pydantic
import pytest

from tests.fakes.openai_server import (
    CHAT_PATH,
    EMBEDDINGS_PATH,
    FakeOpenAIServer,
    connection_reset,
    fake_embedding,
    malformed_json,
    rate_limit,
    refusal,
    reject_json_schema,
    schema_violation,
    server_error,
    think_preamble,
    timeout,
    truncated_json,
)

pytest_plugins = ["tests.fakes.pytest_plugin"]

MODEL = "gpt-4o-mini"
GRAPH = {"entities": [{"name": "Alice", "type": "person"}], "relations": []}


class Entity(pydantic.BaseModel):
    name: str
    type: str


class Graph(pydantic.BaseModel):
    entities: list[Entity]
    relations: list[dict[str, Any]]


def chat(client: openai.OpenAI, text: str, **kwargs: Any) -> Any:
    return client.chat.completions.create(
        model=MODEL,
        messages=[
            {"role": "system", "content": "Extract a knowledge graph as JSON."},
            {"role": "user", "content": text},
        ],
        **kwargs,
    )


# ---- shape and scripting ---------------------------------------------------------------


def test_chat_completion_is_parsed_by_the_real_client(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("Alice", GRAPH)
    client = fake_openai.client(max_retries=0)

    resp = chat(client, "Alice met Bob in Paris.")

    assert isinstance(resp, openai.types.chat.ChatCompletion)
    assert resp.object == "chat.completion"
    assert resp.id.startswith("chatcmpl-")
    assert resp.model == MODEL
    assert isinstance(resp.created, int)
    choice = resp.choices[0]
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert choice.message.refusal is None
    assert json.loads(choice.message.content or "") == GRAPH
    assert resp.usage is not None
    assert resp.usage.prompt_tokens > 0
    assert resp.usage.completion_tokens > 0
    assert resp.usage.total_tokens == resp.usage.prompt_tokens + resp.usage.completion_tokens

    [call] = fake_openai.calls("chat/completions")
    assert call.method == "POST"
    assert call.path == CHAT_PATH
    assert call.body["model"] == MODEL
    assert call.body["messages"][1]["content"] == "Alice met Bob in Paris."
    assert call.headers["authorization"] == "Bearer test"
    assert call.fault is None
    assert call.status == 200


def test_first_matching_rule_wins_one_shot_rules_retire_and_default_answers(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.script("Paris", "first", times=1)
    fake_openai.script("Paris", "second")
    fake_openai.script("", "catch-all", times=1)
    fake_openai.default = lambda req: {"echo": req["messages"][-1]["content"]}
    client = fake_openai.client(max_retries=0)

    contents = [chat(client, t).choices[0].message.content for t in ["Paris", "Paris", "Rome"]]
    assert contents == ["first", "second", "catch-all"]
    # catch-all retired; "Paris" keeps answering; anything else falls to the default
    assert chat(client, "Paris again").choices[0].message.content == "second"
    assert json.loads(chat(client, "Oslo").choices[0].message.content or "") == {"echo": "Oslo"}

    # match looks at every message, list-of-parts contents included
    fake_openai.script("PARTS", "from parts", times=1)
    resp = client.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": [{"type": "text", "text": "some PARTS here"}]}],
    )
    assert resp.choices[0].message.content == "from parts"


def test_out_of_the_box_default(fake_openai: FakeOpenAIServer) -> None:
    client = fake_openai.client(max_retries=0)
    assert chat(client, "hi").choices[0].message.content == "OK"
    resp = chat(client, "hi", response_format={"type": "json_object"})
    assert resp.choices[0].message.content == "{}"


# ---- faults ------------------------------------------------------------------------------


def test_rate_limit_retry_after_is_honoured_by_the_client_retry(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.script("Alice", GRAPH, times=1)  # a 429 must not consume a one-shot rule
    fake_openai.inject(rate_limit(retry_after=1))
    client = fake_openai.client(max_retries=1)

    resp = chat(client, "Alice")

    assert json.loads(resp.choices[0].message.content or "") == GRAPH
    first, second = fake_openai.calls(CHAT_PATH)
    assert (first.fault, first.status) == ("rate_limit", 429)
    assert (second.fault, second.status) == (None, 200)
    assert first.responded_at is not None
    assert second.received_at - first.responded_at >= 0.95
    assert second.headers["x-stainless-retry-count"] == "1"


def test_rate_limit_without_retries_raises_rate_limit_error(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.inject(rate_limit(retry_after=7))
    client = fake_openai.client(max_retries=0)

    with pytest.raises(openai.RateLimitError) as info:
        chat(client, "x")

    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "7"
    assert info.value.code == "rate_limit_exceeded"
    assert fake_openai.pending_faults() == []


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_surfaces_as_internal_server_error(
    fake_openai: FakeOpenAIServer, status: int
) -> None:
    fake_openai.inject(server_error(status))
    client = fake_openai.client(max_retries=0)

    with pytest.raises(openai.InternalServerError) as info:
        chat(client, "x")

    assert info.value.status_code == status
    assert info.value.type == "server_error"
    # the fault was one-shot: the next call succeeds
    assert chat(client, "x").choices[0].message.content == "OK"
    assert [c.status for c in fake_openai.calls(CHAT_PATH)] == [status, 200]


def test_timeout_surfaces_as_api_timeout_error_and_shutdown_is_prompt() -> None:
    server = FakeOpenAIServer().start()
    try:
        server.inject(timeout(30))
        client = server.client(max_retries=0, timeout=0.3)
        t0 = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            chat(client, "x")
        assert time.monotonic() - t0 < 2
        assert server.calls(CHAT_PATH)[0].fault == "timeout"
    finally:
        t0 = time.monotonic()
        server.stop()  # the handler is still sleeping: stop must wake it
        assert time.monotonic() - t0 < 1.5
    assert not server.running


def test_timeout_shorter_than_client_timeout_still_answers(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("", "late but fine")
    fake_openai.inject(timeout(0.2))
    client = fake_openai.client(max_retries=0, timeout=5)
    t0 = time.monotonic()
    assert chat(client, "x").choices[0].message.content == "late but fine"
    assert time.monotonic() - t0 >= 0.2


def test_connection_reset_surfaces_as_api_connection_error(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.inject(connection_reset)
    client = fake_openai.client(max_retries=0)

    with pytest.raises(openai.APIConnectionError) as info:
        chat(client, "x")

    assert not isinstance(info.value, openai.APITimeoutError)
    [call] = fake_openai.calls(CHAT_PATH)
    assert (call.fault, call.status) == ("connection_reset", None)
    # and the client recovers on the next request (new connection)
    assert chat(client, "x").choices[0].message.content == "OK"


def test_connection_reset_is_a_real_tcp_rst(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.inject(connection_reset)
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "x"}]})
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n{body}"
    ).encode()
    with socket.create_connection(("127.0.0.1", fake_openai.port), timeout=2) as sock:
        sock.sendall(request)
        with pytest.raises(ConnectionResetError):
            data = sock.recv(65536)
            # a FIN would read as b""; make that fail loudly rather than pass
            raise AssertionError(f"expected RST, got {data!r}")


def test_malformed_json(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("", GRAPH)
    fake_openai.inject(malformed_json)
    client = fake_openai.client(max_retries=0)

    content = chat(client, "x").choices[0].message.content or ""

    assert content == '{"entities": ['
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)
    assert json.loads(chat(client, "x").choices[0].message.content or "") == GRAPH


def test_truncated_json_has_finish_reason_length(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("", GRAPH)
    fake_openai.inject(truncated_json, times=2)
    client = fake_openai.client(max_retries=0)

    resp = chat(client, "x")

    content = resp.choices[0].message.content or ""
    assert resp.choices[0].finish_reason == "length"
    assert json.dumps(GRAPH).startswith(content)
    assert 0 < len(content) < len(json.dumps(GRAPH))
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)
    # the SDK's structured-output helper reacts to it as to the real API
    with pytest.raises(openai.LengthFinishReasonError):
        client.chat.completions.parse(
            model=MODEL, messages=[{"role": "user", "content": "x"}], response_format=Graph
        )


def test_schema_violation_is_valid_json_of_the_wrong_shape(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("", GRAPH)
    fake_openai.inject(schema_violation)
    client = fake_openai.client(max_retries=0)

    content = chat(client, "x").choices[0].message.content or ""

    payload = json.loads(content)
    assert isinstance(payload, dict)
    with pytest.raises(pydantic.ValidationError):
        Graph.model_validate(payload)


def test_refusal_sets_message_refusal_and_null_content(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.inject(refusal, times=2)
    client = fake_openai.client(max_retries=0)

    message = chat(client, "x").choices[0].message

    assert message.content is None
    assert message.refusal and "can't help" in message.refusal
    parsed = client.chat.completions.parse(
        model=MODEL, messages=[{"role": "user", "content": "x"}], response_format=Graph
    )
    assert parsed.choices[0].message.parsed is None
    assert parsed.choices[0].message.refusal is not None


def test_think_preamble_precedes_the_scripted_json(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("", GRAPH)
    fake_openai.inject(think_preamble)
    client = fake_openai.client(max_retries=0)

    content = chat(client, "x").choices[0].message.content or ""

    assert content.startswith("<think>")
    head, _, tail = content.partition("</think>")
    assert head
    assert json.loads(tail) == GRAPH


def test_reject_json_schema_is_persistent_and_spares_json_object(
    fake_openai: FakeOpenAIServer,
) -> None:
    fake_openai.script("", GRAPH)
    fake_openai.inject(reject_json_schema)
    client = fake_openai.client(max_retries=2)  # a 400 is not retried
    schema_format: Any = {
        "type": "json_schema",
        "json_schema": {"name": "graph", "schema": Graph.model_json_schema(), "strict": False},
    }

    for _ in range(2):
        with pytest.raises(openai.BadRequestError) as info:
            chat(client, "x", response_format=schema_format)
        assert info.value.type == "invalid_request_error"
        assert info.value.param == "response_format"
        assert "json_schema" in info.value.message

    resp = chat(client, "x", response_format={"type": "json_object"})
    assert json.loads(resp.choices[0].message.content or "") == GRAPH
    assert [(c.fault, c.status) for c in fake_openai.calls(CHAT_PATH)] == [
        ("reject_json_schema", 400),
        ("reject_json_schema", 400),
        (None, 200),
    ]


def test_faults_respect_match_times_and_path(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.inject(server_error(500), times=2, match="boom")
    client = fake_openai.client(max_retries=0)

    assert chat(client, "calm").choices[0].message.content == "OK"
    client.embeddings.create(model="text-embedding-3-small", input="boom")  # other path
    for _ in range(2):
        with pytest.raises(openai.InternalServerError):
            chat(client, "boom")
    assert chat(client, "boom").choices[0].message.content == "OK"

    fake_openai.inject(rate_limit(retry_after=0), path=EMBEDDINGS_PATH)
    with pytest.raises(openai.RateLimitError):
        client.embeddings.create(model="text-embedding-3-small", input="x")
    with pytest.raises(ValueError, match="only applies"):
        fake_openai.inject(refusal, path=EMBEDDINGS_PATH)


# ---- embeddings and models -----------------------------------------------------------------


def test_embeddings_are_deterministic_and_honour_dimensions(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.embedding_dim = 32
    client = fake_openai.client(max_retries=0)
    texts = ["Alice works at Acme", "Alice lives in Paris", "quantum chromodynamics"]

    # default SDK call asks for base64; explicit float is plain JSON: both must agree
    as_b64 = client.embeddings.create(model="text-embedding-3-small", input=texts)
    as_float = client.embeddings.create(
        model="text-embedding-3-small", input=texts, encoding_format="float"
    )
    sized = client.embeddings.create(model="text-embedding-3-small", input="Alice", dimensions=8)

    assert as_b64.object == "list"
    assert as_b64.model == "text-embedding-3-small"
    assert [d.index for d in as_b64.data] == [0, 1, 2]
    assert as_b64.usage.prompt_tokens > 0
    assert as_b64.usage.total_tokens == as_b64.usage.prompt_tokens
    for text, b64, flt in zip(texts, as_b64.data, as_float.data, strict=True):
        assert b64.embedding == flt.embedding == fake_embedding(text, 32)
        assert math.isclose(sum(v * v for v in flt.embedding), 1.0, rel_tol=1e-5)
    assert len(sized.data[0].embedding) == 8
    assert fake_openai.calls(EMBEDDINGS_PATH)[0].body["encoding_format"] == "base64"

    def cos(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    v0, v1, v2 = (d.embedding for d in as_float.data)
    assert cos(v0, v1) > cos(v0, v2)  # shared words → closer


def test_models_endpoint(fake_openai: FakeOpenAIServer) -> None:
    client = fake_openai.client(max_retries=0)
    assert [m.id for m in client.models.list()] == list(fake_openai.models)
    assert client.models.retrieve(MODEL).id == MODEL
    with pytest.raises(openai.NotFoundError):
        client.models.retrieve("nope")


# ---- concurrency and lifecycle ---------------------------------------------------------------


def test_concurrent_requests_are_all_recorded(fake_openai: FakeOpenAIServer) -> None:
    fake_openai.script("", "ok")
    client = fake_openai.client(max_retries=0)
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            chat(client, f"request {i}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert errors == []
    texts = sorted(c.body["messages"][1]["content"] for c in fake_openai.calls(CHAT_PATH))
    assert texts == sorted(f"request {i}" for i in range(8))


def test_context_manager_stops_cleanly_leaving_no_threads() -> None:
    before = set(threading.enumerate())
    with FakeOpenAIServer(embedding_dim=4) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        client = server.client(max_retries=0)
        chat(client, "x")  # leaves a keep-alive connection open
        client.embeddings.create(model="e", input="x")
    assert not server.running
    leftover = [t for t in set(threading.enumerate()) - before if t.is_alive()]
    assert leftover == []
    with pytest.raises(RuntimeError):
        _ = server.base_url
