"""The unknown-names board: each name with the closest real tool by the owner lookup's matching, a page at a time,
in a fixed number of queries."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from catalog.models import Tool, UnknownToolName
from catalog.selectors.owners import closest_tools
from catalog.usage.selectors.names import PAGE_SIZE, unknown_names_board, unknown_names_slice
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import


@pytest.fixture
def catalog(db: Any) -> None:
    tools = [
        mutate_tool("prescribeMedication"),
        condor_tool("listActiveMedications"),
        condor_tool("listAllergies", module="allergy", aliases=["allergy.list"]),
    ]
    signed_import(encode(condor_manifest(tools)))


def name(text: str, *, minutes_ago: int = 0, **fields: Any) -> UnknownToolName:
    when = timezone.now() - timedelta(minutes=minutes_ago)
    return UnknownToolName.objects.create(
        name=text, key=text.lower(), calls=fields.pop("calls", 1), first_seen=when, last_seen=when, **fields
    )


def test_closest_tools_finds_each_names_nearest_live_tool(catalog: None, django_assert_max_num_queries):
    closest_tools(["warm"])  # the index is built once per catalog version, as in a running server
    with django_assert_max_num_queries(2):
        found = closest_tools(["list_active_medication", "get_allergies_list", "allergy-list", "zzqx", ""])
    tool, score = found["list_active_medication"]
    assert tool.declared_id == "listActiveMedications" and 60 <= score < 100
    assert tool.owner.slug == "meds" and tool.owner.oncall == "@meds-oncall"  # no query: fetched with the tool
    assert found["allergy-list"][0].declared_id == "listAllergies" and found["allergy-list"][1] == 100.0  # an alias
    assert "zzqx" not in found and "" not in found
    assert closest_tools([]) == {}


def test_the_board_shows_open_names_newest_first_with_their_closest_tool(catalog: None):
    name("list_active_medication", minutes_ago=5, calls=37, services=["assistant"], agents=["clinical"])
    name("prescribe_medicine", minutes_ago=1, calls=2)
    name("open_panel", minutes_ago=0, source="ui", verdict="ignore")
    aliased = name(
        "allergies_list", minutes_ago=3, verdict="alias", alias_of=Tool.objects.get(declared_id="listAllergies")
    )

    board = unknown_names_board("open")
    assert [r.name.name for r in board.rows] == ["prescribe_medicine", "list_active_medication"]
    assert board.rows[1].closest.declared_id == "listActiveMedications" and board.rows[1].verdict == "open"
    assert board.counts == {"open": 2, "alias": 1, "ignore": 1, "all": 4}
    decided = unknown_names_board("alias")
    assert [r.name for r in decided.rows] == [aliased] and decided.rows[0].verdict == "alias"
    assert [r.name.name for r in unknown_names_board("all").rows][0] == "open_panel"
    count, rows = unknown_names_slice("all", limit=2, offset=1)
    assert count == 4 and [r.name.name for r in rows] == ["prescribe_medicine", "allergies_list"]


@pytest.mark.parametrize("names", [3, 120])
def test_a_page_of_the_board_is_a_fixed_number_of_queries(catalog: None, names: int, django_assert_max_num_queries):
    for i in range(names):
        name(f"list_active_medication_{i}", minutes_ago=i)
    unknown_names_board("open")  # warm the owner-lookup index
    with django_assert_max_num_queries(4):  # counts, the page, the catalog version, the closest tools
        board = unknown_names_board("open", 2 if names > PAGE_SIZE else 1)
        assert all(r.closest is not None and r.closest.owner is not None for r in board.rows)
    assert len(board.rows) == (PAGE_SIZE if names > PAGE_SIZE else names)
    if names > PAGE_SIZE:
        assert board.page.number == 2 and board.page.paginator.num_pages == 3
        assert board.rows[0].name.name == f"list_active_medication_{PAGE_SIZE}"
        assert unknown_names_board("open", 99).page.number == 3  # past the end: the last page
