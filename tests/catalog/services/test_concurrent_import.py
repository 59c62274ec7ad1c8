"""Two imports at the same moment, on real PostgreSQL with real connections: never interleaved."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection, connections

from catalog.models import CatalogRevision, RevisionReview, Tool, ToolChange
from catalog.services.governance import GovernanceRefused
from catalog.services.imports import catalog_import
from catalog.services.signoff import SignoffResult, revision_review
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


def _decide_at_once(revision: CatalogRevision, officers: list[Any]) -> list[Any]:
    barrier = threading.Barrier(len(officers))
    outcomes: list[Any] = [None] * len(officers)

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

    threads = [threading.Thread(target=decide, args=(i,)) for i in range(len(officers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return outcomes


def test_two_officers_signing_off_at_once_decide_exactly_once(manifests: Any, make_user: Any) -> None:
    low = [manifests.mutate_tool("bookAppointment", module="appointment", policyDomain="appointment", hitlTier="low")]
    revision = catalog_import(raw=manifests.encode(manifests.condor(low, forcedFloors=[])), via="setup").revision
    assert revision.signoffs_required == 1
    officers = [make_user("olga", "safety-officer"), make_user("omar", "safety-officer")]
    outcomes = _decide_at_once(revision, officers)
    refused = [o for o in outcomes if isinstance(o, GovernanceRefused)]
    assert len(refused) == 1 and "already" in refused[0].message
    assert RevisionReview.objects.filter(revision=revision).count() == 1
    assert CatalogRevision.objects.get(pk=revision.pk).review_state == "approved"


def test_two_of_two_sign_offs_at_once_put_the_revision_in_effect_once(manifests: Any, make_user: Any) -> None:
    revision = catalog_import(raw=manifests.encode(manifests.condor()), via="setup").revision  # tier high
    assert revision.signoffs_required == 2
    officers = [make_user(name, "safety-officer") for name in ("olga", "omar", "oona")]
    outcomes = _decide_at_once(revision, officers)
    counted = sorted(o.approvals for o in outcomes if isinstance(o, SignoffResult))
    refused = [o for o in outcomes if isinstance(o, GovernanceRefused)]
    # Serialised on the system's row: the first counts 1, the second 2 and applies, the third finds it approved.
    assert counted == [1, 2] and len(refused) == 1 and "approved already" in refused[0].message
    assert [o.applied for o in outcomes if isinstance(o, SignoffResult) and o.in_effect] == [2]
    assert CatalogRevision.objects.get(pk=revision.pk).review_state == "approved"
    assert not Tool.objects.filter(awaiting_signoff=True).exists()


def test_an_import_racing_a_sign_off_is_never_signed_off_unseen(manifests: Any, make_user: Any) -> None:
    """An import landing while officers approve: either the approval covered it (it came first), or the import's
    weakening change waits for its own sign-off; never is a declaration nobody reviewed put in effect."""
    first = catalog_import(raw=manifests.encode(manifests.condor()), via="setup").revision
    officer = make_user("olga", "safety-officer")
    revision_review(
        revision_id=first.pk, reviewer=make_user("omar", "safety-officer"), decision="approved", comment="1"
    )
    lowered = manifests.encode(
        manifests.condor(
            [
                manifests.mutate_tool("prescribeMedication", hitlTier="low"),
                manifests.condor_tool("listActiveMedications"),
            ]
        )
    )
    barrier = threading.Barrier(2)
    results: list[Any] = [None, None]

    def run(i: int) -> None:
        try:
            barrier.wait()
            if i == 0:
                results[0] = revision_review(revision_id=first.pk, reviewer=officer, decision="approved", comment="2")
            else:
                results[1] = catalog_import(raw=lowered, via="racing import")
        except Exception as exc:  # reported below
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    tool = Tool.objects.get(declared_id="prescribeMedication")
    assert tool.hitl_tier == "low" and tool.awaiting_signoff, results
    # Approval first: r1 is in effect (high). Import first: r2 is newer, the approval of r1 is refused, nothing is.
    assert tool.in_effect is None or tool.in_effect["hitl_tier"] == "high", results
