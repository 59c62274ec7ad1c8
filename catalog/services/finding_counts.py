"""The findings counts kept on each tool (`Tool.findings_count`, `Tool.error_count`): the catalog browser sorts and
filters by them and the dashboard sums them, so no page counts findings per row.

Every service that adds or removes findings calls `finding_counts_refresh` for the tools it touched, in the same
transaction (tests/catalog/test_finding_counts.py checks the kept counts against the findings after each writer).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce

from catalog.models import Finding, Tool

_CHUNK = 2000  # tool pks per UPDATE: a bounded IN list on every backend


def _counted(**only: object) -> Coalesce:
    rows = Finding.objects.filter(tool=OuterRef("pk"), **only).order_by().values("tool").annotate(n=Count("pk"))
    return Coalesce(Subquery(rows.values("n"), output_field=IntegerField()), Value(0))


def finding_counts_refresh(tool_pks: Iterable[int | None] | None = None, *, system: str | None = None) -> int:
    """Recount the findings of the given tools (None entries, catalog-wide findings, are skipped), or of every tool
    of `system`; one UPDATE per chunk of tools. Returns the number of tools recounted."""
    updates = {"findings_count": _counted(), "error_count": _counted(severity="error")}
    if tool_pks is None:
        scope = Q(system=system) if system is not None else Q()
        return Tool.objects.filter(scope).update(**updates)
    pks = sorted({pk for pk in tool_pks if pk is not None})
    done = 0
    for start in range(0, len(pks), _CHUNK):
        done += Tool.objects.filter(pk__in=pks[start : start + _CHUNK]).update(**updates)
    return done
