"""Two imports at the same moment, on real PostgreSQL with real connections: never interleaved."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections

from catalog.models import CatalogRevision, Tool, ToolChange
from catalog.services.imports import catalog_import
from tests.conftest import requires_postgres

pytestmark = [requires_postgres, pytest.mark.django_db(transaction=True)]


def run_concurrently(payloads: list[bytes]) -> list[Any]:
    barrier = threading.Barrier(len(payloads))
    results: list[Any] = [None] * len(payloads)

    def worker(i: int, raw: bytes) -> None:
        try:
            barrier.wait()
            results[i] = catalog_import(raw=raw, via=f"thread {i}")
        except Exception as exc:  # reported by the assertion below
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, raw)) for i, raw in enumerate(payloads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return results


def test_two_different_manifests_at_once_apply_one_after_the_other(manifests: Any) -> None:
    assert connection.vendor == "postgresql"
    catalog_import(raw=manifests.encode(manifests.condor()), via="setup")
    first = manifests.condor()
    first["tools"][0]["hitlTier"] = "low"
    second = manifests.condor()
    second["tools"].append(manifests.condor_tool("listAllergies", module="allergy"))
    results = run_concurrently([manifests.encode(first), manifests.encode(second)])
    assert not any(isinstance(r, Exception) for r in results), results
    numbers = sorted(r.revision.number for r in results)
    assert numbers == [2, 3]
    # Whichever ran second diffed against what the first wrote: the final state is exactly its manifest.
    last = max(results, key=lambda r: r.revision.number)
    final_tools = set(Tool.objects.live().values_list("declared_id", flat=True))
    if "listAllergies" in last.added:
        assert final_tools == {"prescribeMedication", "listActiveMedications", "listAllergies"}
        assert Tool.objects.get(declared_id="prescribeMedication").hitl_tier == "high"
        assert last.changed == ["prescribeMedication"]  # tier back from low to high
    else:
        assert final_tools == {"prescribeMedication", "listActiveMedications"}
        assert last.removed == ["listAllergies"]
    assert ToolChange.objects.filter(revision__number=3).count() >= 1


def test_the_same_manifest_submitted_twice_at_once_records_one_revision(manifests: Any) -> None:
    raw = manifests.encode(manifests.condor())
    results = run_concurrently([raw, raw, raw])
    assert not any(isinstance(r, Exception) for r in results), results
    assert CatalogRevision.objects.count() == 1
    assert sorted(r.unchanged for r in results) == [False, True, True]
    assert Tool.objects.count() == 2


def test_two_officers_signing_off_at_once_decide_exactly_once(manifests: Any, make_user: Any) -> None:
    from catalog.models import RevisionReview
    from catalog.services.governance import GovernanceRefused, revision_review

    revision = catalog_import(raw=manifests.encode(manifests.condor()), via="setup").revision
    officers = [make_user("olga", "safety-officer"), make_user("omar", "safety-officer")]
    barrier = threading.Barrier(2)
    outcomes: list[Any] = [None, None]

    def decide(i: int) -> None:
        try:
            barrier.wait()
            outcomes[i] = revision_review(
                revision_id=revision.pk, reviewer=officers[i], decision="approved", comment=f"ok from {i}"
            )
        except GovernanceRefused as exc:
            outcomes[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=decide, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    refused = [o for o in outcomes if isinstance(o, GovernanceRefused)]
    assert len(refused) == 1 and "already" in refused[0].message
    assert RevisionReview.objects.filter(revision=revision).count() == 1
    assert CatalogRevision.objects.get(pk=revision.pk).review_state == "approved"
