"""An owner's verdict on an unknown name: alias of a live tool (resolved through the owner lookup), ignore or reopen,
each with its audit event; the catalog itself never changes."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from catalog.models import AuditEvent, Tool, UnknownToolName
from catalog.usage.services.names import VerdictRefused, unknown_name_verdict
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import, tucan_manifest, tucan_tool


@pytest.fixture
def unknown(db: Any) -> UnknownToolName:
    tools = [mutate_tool("prescribeMedication"), condor_tool("showModal")]
    signed_import(encode(condor_manifest(tools, forcedFloors=[])))
    signed_import(encode(tucan_manifest([tucan_tool("show-modal")])))
    now = timezone.now()
    return UnknownToolName.objects.create(
        name="get_active_meds", key="get.active.meds", calls=4, first_seen=now - timedelta(days=1), last_seen=now
    )


def test_on_call_marks_a_name_an_alias_and_reopens_it(unknown: UnknownToolName, make_user: Any):
    oncall = make_user("oona", "on-call")
    before = Tool.objects.get(declared_id="prescribeMedication").aliases
    row = unknown_name_verdict(name_id=unknown.pk, verdict="alias", alias_of="prescribe_medication", by=oncall)
    row.refresh_from_db()
    assert row.verdict == "alias" and row.alias_of.declared_id == "prescribeMedication"
    assert row.verdict_by == oncall and row.verdict_at is not None
    assert Tool.objects.get(declared_id="prescribeMedication").aliases == before  # advice only: no catalog change
    event = AuditEvent.objects.get(action="usage.unknown_name.judged")
    assert event.actor == "user:oona" and event.object_id == str(unknown.pk)
    assert event.before["verdict"] == "open" and event.after["alias_of"] == "condor:prescribeMedication"

    unknown_name_verdict(name_id=unknown.pk, verdict="open", by=oncall)
    row.refresh_from_db()
    assert row.verdict == "" and row.alias_of is None
    admin = make_user("ada", "catalog-admin")
    unknown_name_verdict(name_id=unknown.pk, verdict="ignore", alias_of="ignored text", by=admin)
    row.refresh_from_db()
    assert row.verdict == "ignore" and row.alias_of is None
    assert AuditEvent.objects.filter(action="usage.unknown_name.judged").count() == 3


def test_the_alias_is_one_live_tool(unknown: UnknownToolName, make_user: Any):
    oncall = make_user("oona", "on-call")
    for text, problem in [
        ("", "name the tool it should be an alias of"),
        ("prescribeMedicine", "no live tool is called prescribeMedicine; did you mean condor:prescribeMedication?"),
        ("zzqx", "no live tool is called zzqx"),
        ("show_modal", "show_modal names several live tools (condor:showModal, tucan:show-modal): type system:id"),
        ("tucan:prescribeMedication", "no live tool prescribeMedication in the catalog tucan"),
    ]:
        with pytest.raises(VerdictRefused) as refused:
            unknown_name_verdict(name_id=unknown.pk, verdict="alias", alias_of=text, by=oncall)
        assert refused.value.problems == {"alias_of": problem}, text
    row = unknown_name_verdict(name_id=unknown.pk, verdict="alias", alias_of="tucan:show-modal", by=oncall)
    assert row.alias_of.system == "tucan"
    assert not AuditEvent.objects.filter(action="usage.unknown_name.judged", after__alias_of=None).exists()


def test_only_on_call_and_catalog_admins_judge(unknown: UnknownToolName, make_user: Any):
    for user in (make_user("tara", "translator"), make_user("sam", "safety-officer"), make_user("nobody")):
        with pytest.raises(VerdictRefused) as refused:
            unknown_name_verdict(name_id=unknown.pk, verdict="ignore", by=user)
        assert refused.value.forbidden
    unknown.refresh_from_db()
    assert unknown.verdict == "" and not AuditEvent.objects.filter(action="usage.unknown_name.judged").exists()
    with pytest.raises(VerdictRefused) as refused:
        unknown_name_verdict(name_id=unknown.pk + 99, verdict="ignore", by=make_user("oona", "on-call"))
    assert refused.value.missing
    with pytest.raises(VerdictRefused) as refused:
        unknown_name_verdict(name_id=unknown.pk, verdict="delete", by=make_user("olly", "on-call"))
    assert "verdict" in refused.value.problems
