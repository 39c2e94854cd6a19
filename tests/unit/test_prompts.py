"""Prompt files: versioned, declared variables, strict rendering."""

from __future__ import annotations

import importlib

import pytest

from graphmem._errors import ConfigError
from graphmem.extract.llm.prompts import load_prompt, parse_prompt

GOOD = """---
name: demo
version: 3
variables: who, what
output: some.module.Model
---
=== system
You help {{ who }}.
=== user
{{who}} asks: {{ what }}
"""

ALL = {
    "speaker": "Alice",
    "reference_time": "2024-01-01T00:00:00Z",
    "functional_predicates": "lives_in",
    "known_facts": "(none)",
    "previous": "(none)",
    "episode": "Alice lives in Paris.",
}


def test_parse_and_render() -> None:
    prompt = parse_prompt(GOOD)
    assert (prompt.name, prompt.version, prompt.ident) == ("demo", 3, "demo@v3")
    assert prompt.variables == ("who", "what")
    assert prompt.output == "some.module.Model"
    assert prompt.render(who="Bob", what="hi") == [
        {"role": "system", "content": "You help Bob."},
        {"role": "user", "content": "Bob asks: hi"},
    ]


def test_render_fails_on_missing_or_unknown_variables() -> None:
    prompt = parse_prompt(GOOD)
    with pytest.raises(ConfigError, match=r"missing variable\(s\) \['what'\]"):
        prompt.render(who="Bob")
    with pytest.raises(ConfigError, match=r"unknown variable\(s\) \['extra'\]"):
        prompt.render(who="Bob", what="x", extra="y")


def test_values_are_not_expanded_again() -> None:
    prompt = parse_prompt(GOOD)
    out = prompt.render(who="{{ what }}", what="{{ who }}")
    assert out[1]["content"] == "{{ what }} asks: {{ who }}"


def test_json_braces_in_the_template_are_text() -> None:
    source = GOOD.replace("You help {{ who }}.", 'You help {{ who }}. Reply {"a": {"b": 1}}')
    out = parse_prompt(source).render(who="Bob", what="x")
    assert out[0]["content"] == 'You help Bob. Reply {"a": {"b": 1}}'


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (GOOD.replace("variables: who, what", "variables: who"), "not declared"),
        (GOOD.replace("variables: who, what", "variables: who, what, when"), "never used"),
        (GOOD.replace("variables: who, what", "variables: who, who, what"), "declared twice"),
        (GOOD.replace("version: 3", "version: three"), "integer"),
        (GOOD.replace("version: 3\n", ""), "version"),
        (GOOD.replace("output:", "colour:"), "unknown header"),
        (GOOD.replace("=== system", "=== narrator"), "section"),
        (GOOD[4:], "header"),
        (GOOD.replace("\n---\n=== system", "\n=== system"), "not closed"),
    ],
)
def test_bad_prompt_files_fail_to_load(source: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_prompt(source)


def test_the_extraction_prompt_ships_with_the_package() -> None:
    prompt = load_prompt("extract_facts")
    assert prompt.version >= 1
    assert set(prompt.variables) == set(ALL)
    assert prompt.output == "graphmem.extract.llm.answer.Answer"
    module, _, name = prompt.output.rpartition(".")
    assert hasattr(importlib.import_module(module), name), "paired with its output model"
    messages = prompt.render(**ALL)
    system, user = messages[0]["content"], messages[1]["content"]
    for relation in ("same_as", "supersedes", "contradicts", "corrects", "negates"):
        assert relation in system
    assert user.endswith("Episode:\nAlice lives in Paris.")
    assert len(system) + len(user) < 2600, "keep it short for small local models"
    assert load_prompt("extract_facts") is prompt  # cached


def test_unknown_prompt_names() -> None:
    with pytest.raises(ConfigError, match="no prompt named"):
        load_prompt("nope")
    with pytest.raises(ConfigError, match="bad prompt name"):
        load_prompt("../etc/passwd")
