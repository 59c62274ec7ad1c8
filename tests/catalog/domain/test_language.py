"""The keyword-language heuristic: hand-picked cases, the API's shape, and accuracy on the labelled demo data."""

from __future__ import annotations

import json

import pytest

from catalog.domain.language import classify_keywords, detect_keyword_language, explain_keyword_language
from tests.conftest import ROOT

DEMO = ROOT / "catalog" / "demo"

ENGLISH_KEYWORDS = [
    "table view",
    "address",
    "navigate",
    "problem list",
    "data sharing consent",
    "unsigned prescriptions",
    "diagnosis prevalence",
    "go back",
    "failed logins",
    "new allergy",
    "last blood pressure",
    "risk scores",
    "show vaccination history",
    "open patient chart",
    "cancel appointment",
    "book follow-up visit",
    "print discharge summary",
    "send e-prescription",
    "renew repeat prescription",
    "pending lab results",
    "overdue recall letters",
    "who signed the note",
    "when is the next appointment",
    "add family history",
    "record smoking status",
    "upload scanned document",
    "mark message as read",
    "waiting room",
    "insurance card expired",
    "referral to cardiology",
    "blood glucose trend",
    "weight over time",
    "check drug interactions",
    "allergy to penicillin",
    "create sick note",
    "edit care plan",
    "delete draft",
    "assign task to nurse",
    "export to CSV",
    "doctor's notes",
    "today's schedule",
    "ICD-10 lookup",
    "FHIR patient resource",
    "SOAP note",
    "HbA1c trend",
    "clinical decision support",
    "medication reconciliation",
    "home visit",
    "between visits",
    "lung function",
    "abdomen ultrasound",
    "antigen test",
    "schedule ultrasound",
    "chronic kidney disease",
    "anticoagulation therapy",
    "co-payment exemption",
    "no-show rate",
    "GOÄ factor",
]

GERMAN_KEYWORDS = [
    "Termin buchen",
    "Befund",
    "Kalender",
    "Rezept",
    "Patientenakte",
    "ICD-Kapitel",
    "E-Rezept senden",
    "Details Bericht",
    "Medikament öffnen",
    "Übersicht Aufgaben",
    "Plausibilitätsprüfung",
    "Dubletten finden",
    "QM-Bericht",
    "GOÄ",
    "Impfausweis anzeigen",
    "Laborwerte vergleichen",
    "Hausbesuch planen",
    "Überweisung an Kardiologie",
    "Blutzuckerverlauf",
    "Gewicht im Verlauf",
    "Wechselwirkungen prüfen",
    "Penicillinallergie",
    "Arbeitsunfähigkeit bescheinigen",
    "Behandlungsplan bearbeiten",
    "Entwurf löschen",
    "Aufgabe an Pflege zuweisen",
    "nach CSV exportieren",
    "Notizen des Arztes",
    "heutige Sprechstunde",
    "ICD-10 nachschlagen",
    "FHIR-Ressource Patient",
    "SOAP-Notiz",
    "Verlauf HbA1c",
    "klinische Entscheidungsunterstützung",
    "Medikationsabgleich",
    "Videosprechstunde",
    "Lungenfunktion",
    "Ultraschall Abdomen",
    "Antigentest",
    "Einstellungen öffnen",
    "Sonographie planen",
    "chronische Niereninsuffizienz",
    "Raucherstatus erfassen",
    "Familienanamnese ergänzen",
    "Nachricht als gelesen markieren",
    "Wartezimmer",
    "Versichertenkarte abgelaufen",
    "Rückruf vereinbaren",
    "nächste Woche",
    "was fehlt noch",
    "verordnen",
    "nachfragen",
    "fertig",
    "abhaken",
    "eingescannte Unterlagen",
    "freie Termine",
    "Dokumentation",
    "Diagnose",
    "Anamnese",
    "Dauermedikation",
    "FHIR-Export",
    "Patientenressource",
]

UNDETERMINED_KEYWORDS = ["SOP", "QM", "ICD-10", "FHIR", "HL7", "EBM", "HbA1c", "eGFR", "CHA2DS2-VASc", "123", "", "  "]


@pytest.mark.parametrize("keyword", ENGLISH_KEYWORDS)
def test_english_keywords_are_english(keyword: str) -> None:
    assert detect_keyword_language(keyword) == "en", explain_keyword_language(keyword).signals


@pytest.mark.parametrize("keyword", GERMAN_KEYWORDS)
def test_german_keywords_are_german(keyword: str) -> None:
    assert detect_keyword_language(keyword) == "de", explain_keyword_language(keyword).signals


@pytest.mark.parametrize("keyword", UNDETERMINED_KEYWORDS)
def test_acronyms_codes_and_blanks_are_undetermined(keyword: str) -> None:
    assert detect_keyword_language(keyword) == "und", explain_keyword_language(keyword).signals


def test_enough_hand_picked_cases() -> None:
    assert len(ENGLISH_KEYWORDS) >= 40
    assert len(GERMAN_KEYWORDS) >= 40


def test_a_word_both_languages_spell_alike_is_decided_by_its_case() -> None:
    # Decision (documented in the module): this catalog writes English keywords in lower case and German
    # capitalizes nouns, so for "Patient"/"patient" the case is the only evidence there is.
    assert detect_keyword_language("patient") == "en"
    assert detect_keyword_language("Patient") == "de"


def test_words_shared_by_both_languages_do_not_decide_alone() -> None:
    # "in", "an" and "was" are words in both languages: their neighbours decide.
    assert detect_keyword_language("check in") == "en"
    assert detect_keyword_language("in der Akte ablegen") == "de"
    assert detect_keyword_language("make an appointment") == "en"
    assert detect_keyword_language("Brief an Facharzt") == "de"
    assert detect_keyword_language("was it dispensed") == "en"
    assert detect_keyword_language("was nimmt der Patient") == "de"


def test_the_evidence_explains_the_verdict() -> None:
    evidence = explain_keyword_language("Medikament öffnen")
    assert evidence.language == "de"
    assert evidence.german > evidence.english
    assert any("umlaut" in signal for signal in evidence.signals)

    evidence = explain_keyword_language("SOP")
    assert (evidence.language, evidence.english, evidence.german, evidence.signals) == ("und", 0, 0, ())


def test_classify_keywords_keeps_input_order_per_language() -> None:
    keywords = ["table view", "Medikament öffnen", "SOP", "new allergy", "Kalender", "QM", "go back", "E-Rezept senden"]
    assert classify_keywords(keywords) == {
        "en": ["table view", "new allergy", "go back"],
        "de": ["Medikament öffnen", "Kalender", "E-Rezept senden"],
        "und": ["SOP", "QM"],
    }


def test_classify_keywords_always_has_all_three_keys() -> None:
    assert classify_keywords([]) == {"en": [], "de": [], "und": []}
    assert classify_keywords(["go back"]) == {"en": ["go back"], "de": [], "und": []}
    assert classify_keywords(iter(["Kalender"])) == {"en": [], "de": ["Kalender"], "und": []}


def test_classify_keywords_keeps_duplicates() -> None:
    assert classify_keywords(["go back", "go back"])["en"] == ["go back", "go back"]


def labelled_condor_keywords() -> list[tuple[str, str]]:
    condor = json.loads((DEMO / "condor.json").read_text(encoding="utf-8"))
    return [
        (keyword, language)
        for tool in condor["tools"]
        for language in ("en", "de")
        for keyword in (tool.get("ragKeywords") or {}).get(language, [])
    ]


def test_agrees_with_the_labelled_condor_keywords() -> None:
    labelled = labelled_condor_keywords()
    assert len(labelled) > 400
    verdicts = [(keyword, label, detect_keyword_language(keyword)) for keyword, label in labelled]
    agreed = sum(1 for _, label, got in verdicts if got == label)
    wrong = [(keyword, label, got) for keyword, label, got in verdicts if got not in (label, "und")]
    assert agreed / len(labelled) >= 0.95
    assert len(wrong) / len(labelled) <= 0.02, wrong


def test_tucan_keywords_are_mostly_determined_and_umlauts_are_never_english() -> None:
    tucan = json.loads((DEMO / "tucan.json").read_text(encoding="utf-8"))
    keywords = [keyword for tool in tucan["tools"] for keyword in tool["metadata"].get("ragKeywords", [])]
    assert len(keywords) > 1000
    groups = classify_keywords(keywords)
    assert len(groups["und"]) / len(keywords) <= 0.03, groups["und"]
    assert not [keyword for keyword in groups["en"] if any(c in keyword for c in "äöüÄÖÜß") and "GOÄ" not in keyword]
