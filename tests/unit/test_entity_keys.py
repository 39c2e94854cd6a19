"""Entity keys stay short enough for every store's index, and long names still differ."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from graphmem._ids import entity_key


def test_a_short_name_keeps_its_plain_key() -> None:
    assert entity_key("The Lisbon Office") == "lisbon office"


def test_a_long_name_is_bounded_and_keeps_its_start() -> None:
    key = entity_key("x" * 100_000)
    assert len(key) == 512
    assert key.startswith("x" * 400)


@given(st.text(min_size=600, max_size=2000), st.text(min_size=1, max_size=5))
def test_long_names_that_differ_anywhere_keep_different_keys(name: str, tail: str) -> None:
    key, other = entity_key(name), entity_key(name + " " + tail + "z")
    assert len(key) <= 512 and len(other) <= 512
    assert key != other
