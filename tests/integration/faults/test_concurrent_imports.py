"""Different manifests of one system imported at the same moment, by real concurrent clients on PostgreSQL.

tests/catalog/services/test_concurrent_import.py shows two such imports both land (revisions 2 and 3) and the final
state is the later one's. This proves the rest of "never interleaved", for several rounds of four at once and
for two first imports racing: the revisions are numbered 1..n with no gap, each revision is one of the
manifests, its ToolChange rows are exactly that manifest's diff against the revision before it (a stale
predecessor would show), its audit event says the same, the final state is the last manifest's, and the
audit chain verifies.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from django.db import connections

from catalog.core.audit import audit_verify
from catalog.domain.diff import field_changes
from catalog.domain.manifest import load_manifest, manifest_sha256
from catalog.models import AuditEvent, CatalogRevision, OwnershipRule, Tool, ToolChange
from catalog.services.imports import ImportResult, catalog_import
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool

from .conftest import requires_services

pytestmark = [*requires_services, pytest.mark.django_db(transaction=True)]


def base() -> dict[str, Any]:
    tools = [mutate_tool("prescribeMedication"), condor_tool("listActiveMedications")]
    tools += [condor_tool(f"readChart{i}", module=f"chart{i % 4}") for i in range(30)]
    return condor_manifest(tools=tools)


def variants(round_: int) -> list[dict[str, Any]]:
    """Four different edits of the base manifest, each also rewording one text per round (so no two manifests
    of any round describe the same catalog)."""

    def edit(name: str) -> dict[str, Any]:
        manifest = base()
        manifest["source"]["commit"] = f"round{round_}-{name}"
        tools = {t["id"]: t for t in manifest["tools"]}
        tools["readChart29"]["ragDescription"] += f" (round {round_}, {name})"
        return manifest

    tier = edit("tier")
    next(t for t in tier["tools"] if t["id"] == "prescribeMedication")["hitlTier"] = "low"
    tier["tools"][2]["ragDescription"] += " Reworded."
    added = edit("added")
    added["tools"] += [condor_tool(f"listAllergies{i}", module="allergy") for i in range(3)]
    removed = edit("removed")
    removed["tools"] = [t for t in removed["tools"] if t["id"] not in {"readChart1", "readChart2"}]
    config = edit("config")
    config["ownership"].append({"plane": "business", "module": "chart3", "team": "meds"})
    next(t for t in config["tools"] if t["id"] == "readChart3")["availability"] = "preview"
    return [tier, added, removed, config]


def import_at_once(raws: list[bytes]) -> list[ImportResult | Exception]:
    """One thread (one database connection) per manifest, released together by a barrier."""
    barrier = threading.Barrier(len(raws))
    results: list[ImportResult | Exception] = [RuntimeError("never ran")] * len(raws)

    def client(i: int) -> None:
        try:
            barrier.wait()
            results[i] = catalog_import(raw=raws[i], via=f"client {i}")
        except Exception as exc:  # reported by the caller's assertion
            results[i] = exc
        finally:
            connections.close_all()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(len(raws))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def expected_changes(raws: list[bytes]) -> list[set[tuple[str, str, str]]]:
    """Replays the manifests in order over a plain model of the catalog (every tool ever seen, with its last
    declaration; which are live): the (tool, kind, fields) rows each import must record."""
    declared: dict[str, tuple[dict[str, Any], str]] = {}
    live: set[str] = set()
    out = []
    for raw in raws:
        manifest = load_manifest(raw)
        rows = set()
        for d in manifest.tools:
            old = declared.get(d.declared_id)
            if old is None or d.declared_id not in live:
                kind = "added"
            elif old[1] != d.content_hash():
                kind = "changed"
            else:
                continue
            fields = field_changes(old[0] if old else {}, d.declared())
            rows.add((d.declared_id, kind, json.dumps(fields, sort_keys=True)))
        ids = {d.declared_id for d in manifest.tools}
        for gone in live - ids:
            rows.add((gone, "removed", json.dumps(field_changes(declared[gone][0], {}), sort_keys=True)))
        declared.update({d.declared_id: (d.declared(), d.content_hash()) for d in manifest.tools})
        live = ids
        out.append(rows)
    return out


def assert_one_serial_order(raws: list[bytes]) -> None:
    """Everything stored is what importing `raws` one after the other, in revision order, would store."""
    revisions = list(CatalogRevision.objects.filter(system="condor").order_by("number"))
    assert [r.number for r in revisions] == list(range(1, len(raws) + 1))  # every manifest landed, no gap
    by_sha = {manifest_sha256(raw): raw for raw in raws}
    assert len(by_sha) == len(raws) and {r.manifest_sha256 for r in revisions} == set(by_sha)
    order = [by_sha[r.manifest_sha256] for r in revisions]
    for revision, expected in zip(revisions, expected_changes(order), strict=True):
        stored = {
            (c.declared_id, c.kind, json.dumps(c.fields, sort_keys=True))
            for c in ToolChange.objects.filter(revision=revision)
        }
        assert stored == expected, f"r{revision.number} does not record its diff against r{revision.number - 1}"
        event = AuditEvent.objects.get(action="catalog.revision.imported", object_id=str(revision))
        assert event.before == {"revision": revision.number - 1 if revision.number > 1 else None}
        after = event.after or {}
        for kind in ("added", "removed", "changed"):
            assert sorted(after[kind]) == sorted(i for i, k, _ in expected if k == kind)
    last = json.loads(order[-1])
    live = {t.declared_id: t for t in Tool.objects.filter(system="condor").live()}
    assert set(live) == {t["id"] for t in last["tools"]}
    assert all(live[d.declared_id].content_hash == d.content_hash() for d in load_manifest(order[-1]).tools)
    rules = {(r.plane, r.module, r.team.slug) for r in OwnershipRule.objects.filter(system="condor")}
    assert rules == {(r["plane"], r["module"], r["team"]) for r in last["ownership"]}
    verified = audit_verify()
    assert verified.ok, verified.reason


def test_rounds_of_four_different_manifests_at_once_apply_in_one_serial_order() -> None:
    raws = [encode(base())]
    catalog_import(raw=raws[0], via="setup")
    for round_ in range(1, 4):
        batch = [encode(m) for m in variants(round_)]
        results = import_at_once(batch)
        assert not any(isinstance(r, Exception) for r in results), results
        assert not any(isinstance(r, ImportResult) and r.unchanged for r in results), "a manifest was skipped"
        raws += batch
    assert_one_serial_order(raws)


def test_two_first_imports_of_a_system_at_once_apply_one_after_the_other() -> None:
    batch = [encode(m) for m in variants(1)[:2]]
    results = import_at_once(batch)
    assert not any(isinstance(r, Exception) for r in results), results
    assert_one_serial_order(batch)
