"""Card-string keys: the never-localize guard refuses clinical data and LLM-facing text, and malformed keys."""

from __future__ import annotations

import pytest

from catalog.cards.domain.checks import StringSpec, check_key
from catalog.cards.domain.keys import key_problem, never_localize_reason
from catalog.cards.domain.vocabulary import Check, Severity


@pytest.mark.parametrize(
    "key",
    ["clinical.drug.name", "patient.name", "icd.E11", "rag.keywords", "tool.prescribeMedication.ragDescription"],
)
def test_keys_in_never_localize_namespaces_are_refused(key: str) -> None:
    assert never_localize_reason(key)
    assert "never-localize" in (key_problem(key) or "")
    [finding] = check_key(StringSpec(key, "x"))
    assert finding.check == Check.NEVER_LOCALIZE and finding.severity == Severity.ERROR


@pytest.mark.parametrize(
    "key", ["card.patient.kv.name", "card.patient.kv.birthDate", "status.condition.clinical.active"]
)
def test_card_chrome_about_clinical_things_is_localizable(key: str) -> None:
    assert never_localize_reason(key) is None and key_problem(key) is None
    assert check_key(StringSpec(key, "Name")) == []


def test_malformed_keys_are_refused() -> None:
    assert key_problem("Card Title") and key_problem("card") and key_problem("")
