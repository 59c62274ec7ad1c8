"""Plan eligibility exists twice by necessity: the pure function and its ORM filter. They must agree."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

from catalog.domain.profiles import is_plan_eligible
from catalog.models import CatalogProfile, Tool
from catalog.selectors.dashboard import plan_eligible_q_for

pytestmark = pytest.mark.django_db


def test_the_filter_and_the_function_pick_the_same_tools(db: Any) -> None:
    call_command("load_demo", stdout=io.StringIO())
    # An include of a preview tool, so the include branch is exercised too.
    CatalogProfile.objects.filter(slug="clinical-production").update(includes=["draftReferralLetter", "search_tools"])
    live = list(Tool.objects.live())
    for profile in CatalogProfile.objects.all():
        by_filter = set(Tool.objects.live().filter(plan_eligible_q_for(profile)).values_list("pk", flat=True))
        by_function = {
            t.pk
            for t in live
            if is_plan_eligible(
                plane=t.plane,
                availability=t.availability,
                declared_id=t.declared_id,
                profile_availabilities=profile.availabilities,
                profile_includes=profile.includes,
                same_system=t.system == profile.system,
            )
        }
        assert by_filter == by_function, profile.slug
        assert by_filter
