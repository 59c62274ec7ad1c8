"""Who may sign off: nobody puts their own change in effect, not even inside someone else's later revision; a
deactivated officer signs nothing, and a deactivated person's API tokens stop working; the command line's
`--as` is recorded as such."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from catalog.models import AuditEvent, CatalogRevision, Tool
from catalog.services.governance import GovernanceRefused
from catalog.services.imports import catalog_import
from catalog.services.signoff import revision_review
from tests.conftest import condor_manifest, condor_tool, encode, mutate_tool, signed_import

pytestmark = pytest.mark.django_db


def _catalog(tier: str, extra: int = 0) -> bytes:
    tools = [mutate_tool("prescribeMedication", hitlTier=tier), condor_tool("listActiveMedications")]
    tools += [condor_tool(f"listThing{n}") for n in range(extra)]
    return encode(condor_manifest(tools, baselineCount=len(tools)))


@pytest.fixture
def officers(make_user: Any) -> dict[str, Any]:
    return {name: make_user(name, "safety-officer") for name in ("ines", "olga", "omar")}


def test_an_importer_cannot_approve_a_later_revision_that_carries_their_own_change(officers: dict[str, Any]) -> None:
    signed_import(_catalog("high"))
    weakening = catalog_import(raw=_catalog("low"), via="test", imported_by=officers["ines"])  # r2: high -> low
    assert weakening.revision.review_state == "pending-review"
    later = catalog_import(raw=_catalog("low", extra=1), via="test", imported_by=officers["omar"])  # r3
    tool = Tool.objects.get(declared_id="prescribeMedication")
    assert tool.awaiting_signoff

    with pytest.raises(GovernanceRefused) as refused:
        revision_review(revision_id=later.revision.pk, reviewer=officers["ines"], decision="approved", comment="ok")
    assert "you imported condor r2" in refused.value.message
    assert CatalogRevision.objects.get(pk=later.revision.pk).reviews.count() == 0  # nothing recorded
    # The other officers can (two of them: a tier-high tool's weakening).
    revision_review(revision_id=later.revision.pk, reviewer=officers["olga"], decision="approved", comment="ok")
    with pytest.raises(GovernanceRefused):  # omar imported r3 itself
        revision_review(revision_id=later.revision.pk, reviewer=officers["omar"], decision="approved", comment="ok")
    # Requesting changes on it stays open to the importer of an older one (it puts nothing in effect).
    revision_review(
        revision_id=later.revision.pk, reviewer=officers["ines"], decision="changes-requested", comment="no"
    )
    assert Tool.objects.get(declared_id="prescribeMedication").awaiting_signoff


def test_a_deactivated_officer_signs_nothing_and_the_command_line_names_itself(officers: dict[str, Any]) -> None:
    signed_import(_catalog("high"))
    pending = catalog_import(raw=_catalog("low"), via="test", imported_by=officers["ines"]).revision
    officers["olga"].is_active = False
    officers["olga"].save()
    with pytest.raises(CommandError, match="olga is deactivated and cannot sign off"):
        call_command("signoff", "condor", f"r{pending.number}", "--as", "olga", "--comment", "checked")
    assert not pending.reviews.exists()

    call_command("signoff", "condor", f"r{pending.number}", "--as", "omar", "--comment", "checked the tiers")
    event = AuditEvent.objects.filter(action="catalog.revision.reviewed").latest("pk")
    assert event.actor == "user:omar" and event.after["via"] == "cli --as"


def test_a_deactivated_owners_token_gets_a_401_and_the_tokens_page_says_why(
    make_user: Any, make_token: Any, client: Client
) -> None:
    owner = make_user("leaver")
    token = make_token("ci-import", scopes=("catalog:read",), owner=owner)
    auth = {"Authorization": f"Bearer {token}"}
    assert client.get("/api/v1/catalog/revisions", headers=auth).status_code == 200
    owner.is_active = False
    owner.save()
    assert client.get("/api/v1/catalog/revisions", headers=auth).status_code == 401
    admin = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(admin)
    page = client.get("/tokens/").content.decode()
    assert "owner deactivated" in page
