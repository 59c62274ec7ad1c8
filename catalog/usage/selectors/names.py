"""The hallucinated-names board: the names the runtime called that are no catalog tool (and the UI actions the
frontend dropped), each with the closest real tool by the owner lookup's matching and who owns that tool.

A page costs a fixed number of queries whatever its size or the catalog's: the count, the page of names (with the
tool a name was marked an alias of and its owner), the catalog version and the closest tools."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.paginator import Page, Paginator
from django.db.models import Count, Q, QuerySet

from catalog.models import Tool, UnknownToolName
from catalog.selectors.owners import closest_tools

PAGE_SIZE = 50
# What a board or API filter shows: the open names, those marked an alias, those ignored, or all of them.
VERDICT_FILTERS: dict[str, Q] = {
    "open": Q(verdict=UnknownToolName.Verdict.OPEN),
    "alias": Q(verdict=UnknownToolName.Verdict.ALIAS),
    "ignore": Q(verdict=UnknownToolName.Verdict.IGNORE),
    "all": Q(),
}


@dataclass(frozen=True)
class BoardRow:
    name: UnknownToolName
    closest: Tool | None  # the closest live tool by the owner lookup, None when nothing comes close
    score: float | None  # its similarity, 0..100 (100: an exact spelling, e.g. after a later import)

    @property
    def verdict(self) -> str:
        """`open`, `alias` or `ignore` (the API's and the filter's spelling)."""
        return self.name.verdict or "open"


def unknown_names(verdict: str = "open") -> QuerySet[UnknownToolName]:
    """The names of one filter (VERDICT_FILTERS), the most recently called first."""
    return (
        UnknownToolName.objects.filter(VERDICT_FILTERS[verdict])
        .select_related("alias_of", "alias_of__owner", "verdict_by")
        .order_by("-last_seen", "pk")
    )


def board_rows(names: list[UnknownToolName]) -> list[BoardRow]:
    """Each name with its closest live tool: two queries for the whole list."""
    closest = closest_tools(n.name for n in names)
    return [BoardRow(n, *closest.get(n.name, (None, None))) for n in names]


def verdict_counts() -> dict[str, int]:
    """How many names each filter shows: one query."""
    counts = UnknownToolName.objects.aggregate(
        open=Count("pk", filter=VERDICT_FILTERS["open"]),
        alias=Count("pk", filter=VERDICT_FILTERS["alias"]),
        ignore=Count("pk", filter=VERDICT_FILTERS["ignore"]),
        all=Count("pk"),
    )
    return {k: int(v or 0) for k, v in counts.items()}


@dataclass(frozen=True)
class Board:
    verdict: str
    page: Page[UnknownToolName]
    rows: list[BoardRow]
    counts: dict[str, int]


def unknown_names_board(verdict: str = "open", page: int | str = 1) -> Board:
    """One page (PAGE_SIZE names) of the board under one filter; a page past the end shows the last one."""
    counts = verdict_counts()
    paginator = Paginator(unknown_names(verdict), PAGE_SIZE, allow_empty_first_page=True)
    paginator.count = counts[verdict]  # known already: no second COUNT query
    shown = paginator.get_page(page)
    return Board(verdict=verdict, page=shown, rows=board_rows(list(shown.object_list)), counts=counts)


def unknown_names_slice(verdict: str, *, limit: int, offset: int) -> tuple[int, list[BoardRow]]:
    """(how many names the filter holds, the rows from `offset`), for the API."""
    qs = unknown_names(verdict)
    return qs.count(), board_rows(list(qs[offset : offset + limit]))
