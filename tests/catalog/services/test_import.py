"""Importing manifests into the database: revisions, diffs, derivations, all-or-nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import IntegrityError, transaction

from catalog.domain.manifest import ManifestError
from catalog.models import (
    Agent,
    CatalogProfile,
    CatalogRevision,
    ForcedFloor,
    OwnershipRule,
    Team,
    Tool,
    ToolChange,
)
from catalog.services.imports import catalog_import

pytestmark = pytest.mark.django_db

MODELS = (Tool, ToolChange, CatalogRevision, Team, OwnershipRule, CatalogProfile, ForcedFloor, Agent)


def counts() -> dict[str, int]:
    return {m.__name__: m.objects.count() for m in MODELS}


def do_import(manifests: Any, manifest: dict[str, Any]) -> Any:
    return catalog_import(raw=manifests.encode(manifest), via="test")


def test_first_import_mirrors_every_axis_and_derives(manifests: Any) -> None:
    result = do_import(manifests, manifests.condor())
    assert result.revision.number == 1 and not result.unchanged
    assert sorted(result.added) == ["listActiveMedications", "prescribeMedication"]
    tool = Tool.objects.select_related("owner", "owner_rule").get(declared_id="prescribeMedication")
    assert (tool.system, tool.plane, tool.module, tool.availability) == (
        "condor",
        "business",
        "medication",
        "production",
    )
    assert (tool.policy_class, tool.hitl_tier, tool.idempotency, tool.retry_class) == (
        "mutate",
        "high",
        "durable-required",
        "none",
    )
    assert tool.canonical_key == "prescribe.medication" and tool.llm_name == "prescribeMedication"
    assert tool.is_mutating and tool.effective_policy_class == "mutate" and tool.effective_retry_class == "none"
    assert tool.owner.slug == "meds" and (tool.owner_rule.plane, tool.owner_rule.module) == ("business", "medication")
    assert tool.rag_keywords["de"] == ["prescribeMedication (de)"]
    assert len(tool.content_hash) == 64
    assert CatalogProfile.objects.get(slug="clinical-production").clinical
    assert ForcedFloor.objects.get(slug="intake").tool_ids == ["listActiveMedications"]
    revision = result.revision
    assert (revision.tool_count, revision.business_tool_count, revision.baseline_count) == (2, 2, 2)
    assert revision.source_commit == "c0ffee" and revision.imported_via == "test"


def test_reimporting_the_identical_manifest_writes_nothing(manifests: Any, django_assert_max_num_queries: Any) -> None:
    raw = manifests.encode(manifests.condor())
    catalog_import(raw=raw, via="test")
    before = counts()
    with django_assert_max_num_queries(8) as ctx:
        result = catalog_import(raw=raw, via="test")
    assert result.unchanged and result.revision.number == 1
    writes = [q["sql"] for q in ctx.captured_queries if q["sql"].split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}]
    assert writes == []
    assert counts() == before


def test_semantically_identical_manifest_with_new_bytes_records_no_revision(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    m = manifests.condor()
    m["tools"].reverse()
    m["source"]["commit"] = "another-commit"
    result = do_import(manifests, m)
    assert result.unchanged
    assert CatalogRevision.objects.count() == 1


def test_changed_tool_records_old_and_new_and_safety_axes(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    m = manifests.condor()
    m["tools"][0]["hitlTier"] = "low"
    m["tools"][1]["ragDescription"] = "USE WHEN: changed.\nDO NOT USE WHEN: x.\nREQUIRES: y.\nPRODUCES: z."
    result = do_import(manifests, m)
    assert result.revision.number == 2
    assert sorted(result.changed) == ["listActiveMedications", "prescribeMedication"]
    assert result.safety_relevant == ["prescribeMedication"]
    tier = ToolChange.objects.get(revision=result.revision, declared_id="prescribeMedication")
    assert tier.kind == "changed" and tier.fields == {"hitl_tier": ["high", "low"]}
    assert tier.safety_fields == ["hitl_tier"] and tier.safety_relevant
    text = ToolChange.objects.get(revision=result.revision, declared_id="listActiveMedications")
    assert list(text.fields) == ["rag_description"] and not text.safety_relevant
    assert Tool.objects.get(declared_id="prescribeMedication").hitl_tier == "low"
    assert result.revision.changed_count == 2 and result.revision.safety_change_count == 1


def test_removed_tool_is_retired_and_revived_later(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    without = manifests.condor([manifests.mutate_tool("prescribeMedication")], forcedFloors=[])
    result = do_import(manifests, without)
    assert result.removed == ["listActiveMedications"]
    retired = Tool.objects.get(declared_id="listActiveMedications")
    assert retired.retired_in == result.revision and not retired.is_live
    assert Tool.objects.live().count() == 1 and result.revision.tool_count == 1
    change = ToolChange.objects.get(revision=result.revision, declared_id="listActiveMedications")
    assert change.kind == "removed" and change.safety_relevant
    assert change.fields["plane"] == ["business", None]

    again = do_import(manifests, manifests.condor())
    assert again.added == ["listActiveMedications"] and again.revision.number == 3
    assert Tool.objects.get(declared_id="listActiveMedications").is_live
    assert Tool.objects.filter(declared_id="listActiveMedications").count() == 1


def test_owner_is_rederived_when_ownership_rules_change(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    m = manifests.condor()
    m["ownership"] = [r for r in m["ownership"] if r["module"] != "medication"]
    result = do_import(manifests, m)
    assert "ownership" in result.config_changes and result.changed == []
    assert Tool.objects.get(declared_id="prescribeMedication").owner.slug == "core"
    m["ownership"] = [r for r in m["ownership"] if r["plane"] != "business"]
    do_import(manifests, m)
    tool = Tool.objects.get(declared_id="prescribeMedication")
    assert tool.owner is None and tool.owner_rule is None


def test_team_changes_update_the_shared_team(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    m = manifests.condor()
    m["teams"][0]["oncall"] = "@new-meds-oncall"
    result = do_import(manifests, m)
    assert result.config_changes["teams"]["new"][1][2] == "@new-meds-oncall"
    assert Team.objects.get(slug="meds").oncall == "@new-meds-oncall"


def test_baseline_change_alone_is_a_revision(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    result = do_import(manifests, manifests.condor(baselineCount=3))
    assert result.config_changes == {"baselineCount": {"old": 2, "new": 3}}
    assert result.revision.baseline_count == 3


@pytest.mark.parametrize(
    "breakage",
    [
        lambda m: m["tools"][0].update(hitlTier=None),
        lambda m: m["tools"][1].update(plane="ui"),
        lambda m: m["tools"].append(dict(m["tools"][1])),
        lambda m: m["tools"][1].update(id="prescribe_medication"),
        lambda m: m["tools"][1].update(stylingFragment="highlight in #ff0000"),
        lambda m: (
            m["profiles"][0].update(include=["generateDemoPatient"])
            or m["tools"].append({**m["tools"][1], "id": "generateDemoPatient", "availability": "demo-only"})
        ),
        lambda m: m["ownership"][0].update(team="ghosts"),
        lambda m: m.pop("format"),
    ],
    ids=[
        "mutate-without-tier",
        "unknown-enum",
        "duplicate-id",
        "key-collision",
        "colour-literal",
        "clinical-includes-demo-only",
        "unknown-team",
        "no-format",
    ],
)
def test_refused_manifest_changes_nothing(manifests: Any, breakage: Any) -> None:
    do_import(manifests, manifests.condor())
    m = manifests.condor()
    m["tools"][0]["ragDescription"] = "changed so the import would otherwise write"
    m["teams"][0]["name"] = "Renamed"
    breakage(m)
    before = counts()
    with pytest.raises(ManifestError) as info:
        do_import(manifests, m)
    assert info.value.problems
    assert counts() == before
    assert Team.objects.get(slug="meds").name == "Clinical Medication"
    assert Tool.objects.get(declared_id="prescribeMedication").rag_description != m["tools"][0]["ragDescription"]


def test_failure_after_writes_began_rolls_everything_back(manifests: Any, monkeypatch: Any) -> None:
    """A crash mid-import (after the revision row was written) leaves no trace: one transaction."""
    do_import(manifests, manifests.condor())
    before = counts()
    m = manifests.condor()
    m["tools"].append(manifests.condor_tool("listAllergies"))

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr("catalog.services.imports._change", boom)  # after tools and revision are inserted
    with pytest.raises(RuntimeError):
        do_import(manifests, m)
    assert counts() == before


def test_tucan_import_keeps_systems_apart(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    result = do_import(manifests, manifests.tucan())
    assert result.revision.system == "tucan" and result.revision.number == 1
    prescription = Tool.objects.get(system="tucan", declared_id="create-prescription")
    assert prescription.is_mutating and prescription.hitl_tier is None
    assert prescription.effective_policy_class == "mutate" and prescription.effective_retry_class == "none"
    assert prescription.llm_name == "create_prescription" and prescription.input_schema == {
        "type": "object",
        "properties": {},
    }
    assert Agent.objects.get(slug="clinical").categories == ["ui", "medications"]
    # The TUCAN import retired nothing of Condor's.
    assert Tool.objects.filter(system="condor").live().count() == 2


def test_tucan_ownership_can_use_a_team_from_the_condor_manifest(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    do_import(manifests, manifests.tucan(ownership=[{"plane": "business", "module": "ui", "team": "core"}]))
    assert Tool.objects.get(declared_id="show-modal").owner.slug == "core"
    assert Tool.objects.get(declared_id="create-prescription").owner is None


def test_database_refuses_mutate_without_tier(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    with pytest.raises(IntegrityError), transaction.atomic():
        Tool.objects.filter(declared_id="prescribeMedication").update(hitl_tier=None)
    assert Tool.objects.get(declared_id="prescribeMedication").hitl_tier == "high"


def test_database_refuses_retry_on_a_mutating_tool(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    with pytest.raises(IntegrityError), transaction.atomic():
        Tool.objects.filter(declared_id="prescribeMedication").update(effective_retry_class="transient")


def test_database_refuses_unknown_plane(manifests: Any) -> None:
    do_import(manifests, manifests.condor())
    with pytest.raises(IntegrityError), transaction.atomic():
        Tool.objects.filter(declared_id="listActiveMedications").update(plane="ui")
