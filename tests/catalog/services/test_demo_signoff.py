"""The demo a newcomer meets: both catalogs signed off by two demo safety officers, one revision waiting."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from catalog.models import CatalogRevision, RevisionReview, Tool

pytestmark = pytest.mark.django_db


def test_the_demo_is_signed_off_and_one_weakening_revision_waits() -> None:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    text = out.getvalue()
    assert "condor r1 approved by safety (1 of 2)" in text and "condor r1 approved by safety-two (2 of 2)" in text
    first = CatalogRevision.objects.get(system="condor", number=1)
    assert first.review_state == "approved" and first.imported_by.username == "catalog-admin"
    assert set(first.reviews.values_list("reviewer__username", flat=True)) == {"safety", "safety-two"}
    assert CatalogRevision.objects.get(system="tucan", number=1).review_state == "approved"
    pending = CatalogRevision.objects.get(system="condor", number=2)
    assert pending.review_state == "pending-review" and pending.signoffs_required == 2
    assert not RevisionReview.objects.filter(revision=pending).exists()
    # The gate holds: the signing tool is still tier high for clinical profiles, the old note text is served.
    sign = Tool.objects.get(system="condor", declared_id="signDocument")
    assert sign.hitl_tier == "low" and sign.in_effect["hitl_tier"] == "high" and sign.awaiting_signoff
    note = Tool.objects.get(system="condor", declared_id="recordClinicalNote")
    assert note.in_effect["rag_description"] != note.rag_description and note.awaiting_signoff
    assert Tool.objects.filter(awaiting_signoff=True).live().count() == 2
