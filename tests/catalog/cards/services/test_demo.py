"""The demo card strings: a few hundred keys in every seam module, German complete but for a handful of
deliberate gaps and errors, and every check finds its example."""

from __future__ import annotations

import pytest
from django.db.models import Count

from catalog.cards.selectors.locales import coverage_table, locales
from catalog.cards.services.demo import cards_demo_load
from catalog.models import CardFinding, CardString, CardTranslation

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo(db: object) -> None:
    cards_demo_load()


def de_findings() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for key, check in CardFinding.objects.filter(locale__code="de").values_list("string__key", "check_name"):
        found.setdefault(check, set()).add(key)
    return found


def test_the_demo_has_a_few_hundred_keys_in_every_seam_module(demo: None) -> None:
    per_module = dict(CardString.objects.values_list("module").annotate(n=Count("id")))
    assert sum(per_module.values()) >= 300
    assert set(per_module) == {"base", "status", "extras", "hitl"} and min(per_module.values()) >= 40
    assert CardString.objects.filter(value_set="medicationrequest-status").count() == 8
    assert CardString.objects.exclude(source_plural="").count() >= 20


def test_german_is_complete_except_the_deliberate_gaps(demo: None) -> None:
    total = CardString.objects.count()
    german = CardTranslation.objects.filter(locale__code="de")
    assert german.filter(state__in=["translated", "reviewed"]).count() >= total - 10
    assert german.filter(state="fuzzy").count() == 3
    assert german.filter(state="reviewed").count() > 100
    assert de_findings()["missing"] == {
        "common.printable",
        "status.appointment.waitlist",
        "status.encounter.onleave",
        "status.claim.draft",
        "card.carePlan.kv.responsible",
    }


def test_every_check_finds_its_deliberate_example(demo: None) -> None:
    found = de_findings()
    assert found["placeholder"] == {"card.medication.warning.interaction", "common.updatedAt", "hitl.expiresIn"}
    assert found["plural-forms"] == {"card.lab.hint.abnormal"}
    assert found["markup"] == {"hitl.warning.highTier"}
    assert found["same-as-source"] == {"card.lab.kv.unit"}  # the 16 marked ones are not flagged
    assert found["too-long"] == {"card.condition.action.showResolved", "card.encounter.kv.attending"}
    assert not CardFinding.objects.filter(check_name="never-localize").exists()  # refused at import instead
    assert CardFinding.objects.filter(locale__code="pl", check_name="plural-forms").count() == 1


def test_regional_and_partial_locales(demo: None) -> None:
    assert CardTranslation.objects.filter(locale__code="de-AT").count() == 5
    assert not CardFinding.objects.filter(locale__code="de-AT").exists()  # the rest is inherited from de
    pl = CardTranslation.objects.get(locale__code="pl", string__key="card.medication.count")
    assert len(pl.forms) == 3 and pl.ships


def test_coverage_shows_the_status_codes_a_german_doctor_would_not_read_in_german(demo: None) -> None:
    rows = {row.value_set.id: {c.locale: c for c in row.cells} for row in coverage_table(locales())}
    assert rows["appointmentstatus"]["de"].fallback == ("waitlist",)
    assert rows["encounter-status"]["de"].missing == ("triaged",)  # no label at all: the raw code
    assert rows["medicationrequest-status"]["de"].complete


def test_loading_the_demo_again_changes_nothing(demo: None) -> None:
    assert cards_demo_load().unchanged
