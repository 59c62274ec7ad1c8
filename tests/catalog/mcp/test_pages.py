"""The MCP server pages as each role uses them: everyone reads, catalog admins edit the overlay (a new revision,
errors beside the field with the input kept) and trigger a live re-import."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from catalog.core import roles
from catalog.models import AuditEvent, CatalogRevision, Tool
from catalog.services.imports import catalog_import
from tests.catalog.mcp.test_governed_import import encode, referral_server
from tests.conftest import signed_in

IMPORT_ACTION = "catalog.revision.imported"


@pytest.fixture
def server(db: Any) -> None:
    catalog_import(raw=encode(referral_server()), via="test")


def test_everyone_signed_in_sees_the_servers_and_a_servers_tools(server: None, make_user: Any) -> None:
    client = signed_in(make_user, "oncall", roles.ON_CALL)
    listing = client.get("/mcp/").content.decode()
    assert "referrals" in listing and "referral-server" in listing
    page = client.get("/mcp/referrals/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "purge_outbox" in html and "ungated mutation" in html and "destructive write" in html
    assert "Save overlay" not in html  # only catalog admins edit it
    assert client.get("/mcp/nope/").status_code == 404
    assert client.post("/mcp/referrals/governance", {"rules": "*"}).status_code == 403


def test_the_tool_page_shows_hints_declared_beside_read_as_and_the_pin(server: None, make_user: Any) -> None:
    client = signed_in(make_user, "oncall", roles.ON_CALL)
    html = client.get("/tools/mcp:referrals/purge_outbox/").content.decode()
    assert "MCP declaration" in html and "no annotations" in html and "not declared" in html
    assert "mcp__referrals__purge_outbox" in html  # the names clients call it by


def test_server_pages_take_the_same_queries_whatever_the_number_of_tools(server: None, make_user: Any) -> None:
    client = signed_in(make_user, "admin", roles.CATALOG_ADMIN)
    client.get("/mcp/referrals/")
    with CaptureQueriesContext(connection) as few:
        client.get("/mcp/referrals/")
    doc = referral_server()
    doc["tools"] += [
        {"name": f"read_{i}", "description": "Read a thing.", "inputSchema": {"type": "object"}} for i in range(40)
    ]
    catalog_import(raw=encode(doc), via="test")
    client.get("/mcp/referrals/")
    with CaptureQueriesContext(connection) as many:
        client.get("/mcp/referrals/")
    assert len(many) == len(few) <= 14


def test_an_admin_changes_the_overlay_as_a_new_revision(server: None, make_user: Any) -> None:
    client = signed_in(make_user, "admin", roles.CATALOG_ADMIN)
    response = client.post(
        "/mcp/referrals/governance",
        {
            "team": "referral-team",
            "policy_domain": "referrals",
            "rules": "send_* tier=high\npurge_* tier=high domain=outbox",
        },
    )
    assert response.status_code == 302
    purge = Tool.objects.get(system="mcp:referrals", declared_id="purge_outbox")
    assert (purge.hitl_tier, purge.policy_domain, purge.module) == ("high", "outbox", "purge_*")
    revision = CatalogRevision.objects.filter(system="mcp:referrals").order_by("-number").first()
    assert revision.number == 2 and revision.imported_via == "console: governance overlay"
    assert AuditEvent.objects.filter(action=IMPORT_ACTION, actor="user:admin").count() == 1


def test_a_bad_overlay_line_is_shown_beside_the_field_and_nothing_changes(server: None, make_user: Any) -> None:
    client = signed_in(make_user, "admin", roles.CATALOG_ADMIN)
    typed = "# writes first\nsend_* tier=high\n\npurge_* tier=urgent"
    response = client.post("/mcp/referrals/governance", {"team": "referral-team", "rules": typed})
    html = response.content.decode()
    assert response.status_code == 422
    # The editor's line (comments and blank lines counted) and its own key, not the manifest's location.
    assert "line 4: tier: unknown value &#x27;urgent&#x27;" in html
    assert "purge_* tier=urgent</textarea>" in html  # what was typed is kept
    assert re.search(r'<textarea name="rules"[^>]* autofocus', html)  # and the cursor is in it
    assert CatalogRevision.objects.filter(system="mcp:referrals").count() == 1
    response = client.post("/mcp/referrals/governance", {"rules": "send_* tier"})
    assert "line 1: &#x27;tier&#x27; is not domain=…, tier=high|low or team=…" in response.content.decode()


def test_a_server_known_only_from_a_file_cannot_be_re_imported_live(server: None, make_user: Any) -> None:
    client = signed_in(make_user, "admin", roles.CATALOG_ADMIN)
    response = client.post("/mcp/referrals/reimport", follow=True)
    assert "came from a file" in response.content.decode()
    assert CatalogRevision.objects.filter(system="mcp:referrals").count() == 1
    assert not AuditEvent.objects.filter(action="mcp.reimport.requested").exists()
