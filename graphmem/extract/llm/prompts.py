"""Prompt files: loaded by name from the top-level ``prompts/``, versioned, rendered strictly.

A prompt file is a small header followed by one section per chat message::

    ---
    name: extract_facts
    version: 1
    variables: speaker, episode
    output: graphmem.extract.llm.answer.Answer
    ---
    === system
    You extract facts ...
    === user
    Speaker: {{ speaker }}
    {{ episode }}

``{{ name }}`` is a placeholder. Loading fails when a placeholder is not declared in
``variables`` or a declared variable is never used; rendering fails on a missing or an unknown
variable. Substitution is one pass, so a value that contains ``{{ x }}`` is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ..._errors import ConfigError
from ..._resources import data_dir

__all__ = ["Prompt", "load_prompt", "parse_prompt"]

_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_SECTION = re.compile(r"^===\s*(system|user|assistant)\s*$", re.MULTILINE)
_HEADER_KEYS = frozenset({"name", "version", "variables", "output", "description"})


@dataclass(frozen=True)
class Prompt:
    """A parsed prompt file: its name, version, declared variables and message templates."""

    name: str
    version: int
    variables: tuple[str, ...]
    sections: tuple[tuple[str, str], ...]  # (role, template)
    output: str | None = None
    description: str = ""

    @property
    def ident(self) -> str:
        """``name@version``, recorded with every extraction that used the prompt."""
        return f"{self.name}@v{self.version}"

    def render(self, **values: object) -> list[dict[str, str]]:
        """Chat messages (``role``/``content``) with every placeholder filled.

        Raises ``ConfigError`` when a declared variable is missing or an unknown one is given.
        """
        declared = set(self.variables)
        missing = sorted(declared - set(values))
        unknown = sorted(set(values) - declared)
        if missing or unknown:
            parts = []
            if missing:
                parts.append(f"missing variable(s) {missing}")
            if unknown:
                parts.append(f"unknown variable(s) {unknown}")
            raise ConfigError(f"prompt {self.ident}: {'; '.join(parts)}")
        text = {key: str(value) for key, value in values.items()}
        return [
            {"role": role, "content": _PLACEHOLDER.sub(lambda m: text[m.group(1)], template)}
            for role, template in self.sections
        ]


def parse_prompt(source: str, *, origin: str = "<string>") -> Prompt:
    """Parse and check a prompt file's text (see the module docstring for the format)."""
    if not source.startswith("---\n"):
        raise ConfigError(f"{origin}: a prompt file starts with a '---' header")
    end = source.find("\n---\n", 4)
    if end < 0:
        raise ConfigError(f"{origin}: the header is not closed with '---'")
    header: dict[str, str] = {}
    for line in source[4:end].splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, value = line.partition(":")
        key = key.strip()
        if not sep or key not in _HEADER_KEYS:
            raise ConfigError(f"{origin}: unknown header line {line!r}")
        header[key] = value.strip()
    for required in ("name", "version", "variables"):
        if required not in header:
            raise ConfigError(f"{origin}: the header needs '{required}:'")
    try:
        version = int(header["version"])
    except ValueError:
        raise ConfigError(f"{origin}: version must be an integer") from None
    variables = tuple(v.strip() for v in header["variables"].split(",") if v.strip())
    if len(set(variables)) != len(variables):
        raise ConfigError(f"{origin}: a variable is declared twice")
    body = source[end + 5 :]
    matches = list(_SECTION.finditer(body))
    if not matches or body[: matches[0].start()].strip():
        raise ConfigError(f"{origin}: the body must start with a '=== system|user' section")
    sections: list[tuple[str, str]] = []
    for index, match in enumerate(matches):
        stop = matches[index + 1].start() if index + 1 < len(matches) else len(body)
        sections.append((match.group(1), body[match.end() : stop].strip("\n")))
    used = {m.group(1) for _, template in sections for m in _PLACEHOLDER.finditer(template)}
    undeclared = sorted(used - set(variables))
    unused = sorted(set(variables) - used)
    if undeclared:
        raise ConfigError(f"{origin}: placeholder(s) {undeclared} are not declared")
    if unused:
        raise ConfigError(f"{origin}: declared variable(s) {unused} are never used")
    return Prompt(
        name=header["name"],
        version=version,
        variables=variables,
        sections=tuple(sections),
        output=header.get("output") or None,
        description=header.get("description", ""),
    )


@lru_cache(maxsize=32)
def load_prompt(name: str) -> Prompt:
    """The prompt ``prompts/<name>.prompt`` (``graphmem/prompts/`` in a wheel), parsed and
    checked (cached)."""
    if not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise ConfigError(f"bad prompt name {name!r}")
    resource = data_dir("prompts").joinpath(f"{name}.prompt")
    if not resource.is_file():
        raise ConfigError(f"no prompt named {name!r} in prompts/")
    prompt = parse_prompt(resource.read_text(encoding="utf-8"), origin=f"{name}.prompt")
    if prompt.name != name:
        raise ConfigError(f"{name}.prompt declares name {prompt.name!r}")
    return prompt
