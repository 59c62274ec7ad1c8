"""Saving, reviewing, the fuzzy-on-source-change rule, locales, and the audit events they write."""

from __future__ import annotations

from typing import Any

import pytest

from catalog.cards.services.translations import CardsRefused, locale_add, translation_review, translation_save
from catalog.core.audit import Actor, audit_verify
from catalog.models import AuditEvent, CardFinding, CardLocale, CardString, CardTranslation
from tests.catalog.cards.conftest import TEMPLATE, catalog, entry

pytestmark = pytest.mark.django_db


def tr(key: str, locale: str = "de") -> CardTranslation:
    return CardTranslation.objects.get(string__key=key, locale__code=locale)


def findings(key: str, locale: str = "de") -> set[str]:
    return set(CardFinding.objects.filter(string__key=key, locale__code=locale).values_list("check_name", flat=True))


def test_a_saved_translation_is_checked_and_audited(small: None, translator: Any) -> None:
    translation_save(user=translator, key="card.medication.warning.interaction", locale="de", forms=["Mit {arznei}"])
    t = tr("card.medication.warning.interaction")
    assert t.state == "translated" and t.updated_by == translator and not t.ships
    assert findings("card.medication.warning.interaction") == {"placeholder"}
    event = AuditEvent.objects.filter(action="cards.translation.saved").get()
    assert event.object_id == "card.medication.warning.interaction@de" and event.actor == "user:tina"
    assert event.before["forms"] == ["Wechselwirkung mit {drug}"] and event.after["forms"] == ["Mit {arznei}"]
    translation_save(
        user=translator, key="card.medication.warning.interaction", locale="de", forms=["Wechselwirkung mit {drug}"]
    )
    assert findings("card.medication.warning.interaction") == set()
    assert tr("card.medication.warning.interaction").ships
    assert audit_verify().ok


def test_saving_unchanged_text_writes_nothing(small: None, translator: Any) -> None:
    translation_save(user=translator, key="card.medication.title", locale="de", forms=["Medikation"])
    assert tr("card.medication.title").state == "reviewed"  # the review stays
    assert not AuditEvent.objects.filter(action="cards.translation.saved").exists()


def test_plural_translations_need_the_locales_number_of_forms(small: None, translator: Any) -> None:
    with pytest.raises(CardsRefused, match="needs 2 form"):
        translation_save(user=translator, key="card.medication.count", locale="de", forms=["{count} Medikament"])
    translation_save(user=translator, key="card.medication.count", locale="de", forms=["{count} Medikament", ""])
    assert findings("card.medication.count") == {"plural-forms"}


def test_only_translators_save_and_english_is_not_edited_here(small: None, make_user: Any, translator: Any) -> None:
    with pytest.raises(CardsRefused) as refused:
        translation_save(user=make_user("oscar", "on-call"), key="card.medication.title", locale="de", forms=["X"])
    assert refused.value.forbidden
    with pytest.raises(CardsRefused, match="English is the source"):
        translation_save(user=translator, key="card.medication.title", locale="en", forms=["Meds"])
    with pytest.raises(CardsRefused, match="no card string"):
        translation_save(user=translator, key="card.nothing.title", locale="de", forms=["X"])


def test_the_editor_refuses_a_key_in_a_never_localize_namespace(small: None, translator: Any) -> None:
    # Such a key cannot be imported; one stored before its namespace was declared never-localize shows a
    # finding and the editor will not take a translation for it.
    string = CardString.objects.create(key="rag.medication.keywords", module="base", source="prescribe")
    with pytest.raises(CardsRefused, match="never localized"):
        translation_save(user=translator, key=string.key, locale="de", forms=["verordnen"])
    assert not CardTranslation.objects.filter(string=string).exists()


def test_changing_the_english_turns_its_translations_fuzzy(small: None, load: Any) -> None:
    changed = [entry("card.medication.title", "Current medications", slot="title")] + TEMPLATE[1:]
    result = load(("cards.pot", catalog(*changed)))
    assert result.source_changed == ["card.medication.title"] and result.turned_fuzzy == 1
    t = tr("card.medication.title")
    assert t.state == "fuzzy" and not t.ships and t.reviewed_at is None
    assert t.translated_from == ["Medications"]  # the panel shows what the English was
    assert tr("card.medication.count").state == "translated"  # untouched English: untouched translation
    event = AuditEvent.objects.get(action="cards.import", after__source_changed=["card.medication.title"])
    assert event.after["turned_fuzzy"] == 1


def test_a_translator_confirms_a_fuzzy_translation_by_saving_it(small: None, load: Any, translator: Any) -> None:
    load(("cards.pot", catalog(entry("card.medication.title", "Current medications", slot="title"), *TEMPLATE[1:])))
    translation_save(user=translator, key="card.medication.title", locale="de", forms=["Medikation"])
    t = tr("card.medication.title")
    assert t.state == "translated" and t.ships and t.translated_from == ["Current medications"]


def test_a_reviewer_marks_reviewed_but_never_their_own_work(small: None, translator: Any, reviewer: Any) -> None:
    translation_save(user=translator, key="status.medicationrequest.on-hold", locale="de", forms=["Angehalten"])
    translation_review(user=reviewer, key="status.medicationrequest.on-hold", locale="de")
    t = tr("status.medicationrequest.on-hold")
    assert t.state == "reviewed" and t.reviewed_by == reviewer and t.reviewed_at is not None
    assert AuditEvent.objects.filter(action="cards.translation.reviewed").count() == 1
    translation_save(user=reviewer, key="status.medicationrequest.on-hold", locale="de", forms=["Pausiert"])
    assert tr("status.medicationrequest.on-hold").state == "translated"  # a change clears the review
    with pytest.raises(CardsRefused, match="another reviewer") as own:
        translation_review(user=reviewer, key="status.medicationrequest.on-hold", locale="de")
    assert own.value.forbidden
    with pytest.raises(CardsRefused) as not_reviewer:
        translation_review(user=translator, key="status.medicationrequest.on-hold", locale="de")
    assert not_reviewer.value.forbidden


def test_review_waits_for_fixes_and_for_fuzzy_confirmation(small: None, translator: Any, reviewer: Any) -> None:
    translation_save(user=translator, key="card.medication.warning.interaction", locale="de", forms=["Mit {x}"])
    with pytest.raises(CardsRefused, match="fix the failing check"):
        translation_review(user=reviewer, key="card.medication.warning.interaction", locale="de")
    CardTranslation.objects.filter(string__key="card.medication.count").update(state="fuzzy", ships=False)
    with pytest.raises(CardsRefused, match="fuzzy"):
        translation_review(user=reviewer, key="card.medication.count", locale="de")


def test_a_new_locale_shows_every_string_missing(small: None) -> None:
    locale_add(actor=Actor(label="test"), code="fr")
    assert CardFinding.objects.filter(locale__code="fr", check_name="missing", severity="warning").count() == 7
    at = locale_add(actor=Actor(label="test"), code="de_at")
    assert at.code == "de-AT" and at.fallback.code == "de"
    assert not CardFinding.objects.filter(locale=at).exists()  # regional: inherits from de
    with pytest.raises(CardsRefused, match="exists already"):
        locale_add(actor=Actor(label="test"), code="fr")
    with pytest.raises(CardsRefused, match="unknown"):
        locale_add(actor=Actor(label="test"), code="xx")
    assert AuditEvent.objects.filter(action="cards.locale.added").count() == 2
    assert set(CardLocale.objects.values_list("code", flat=True)) == {"en", "de", "fr", "de-AT"}
