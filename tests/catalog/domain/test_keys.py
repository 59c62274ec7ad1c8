from __future__ import annotations

import pytest

from catalog.domain.keys import canonical_key, llm_name


@pytest.mark.parametrize(
    "spelling",
    [
        "visitRecordingCard",
        "VisitRecordingCard",
        "visit_recording_card",
        "visit-recording-card",
        "visit.recording.card",
        "visit recording card",
        "  Visit-Recording_card ",
        "VISIT_RECORDING_CARD",
        "visit__recording--card",
    ],
)
def test_every_spelling_folds_to_one_dotted_key(spelling: str) -> None:
    assert canonical_key(spelling) == "visit.recording.card"


@pytest.mark.parametrize(
    ("spelling", "key"),
    [
        ("search_tools", "search.tools"),
        ("load_tool", "load.tool"),
        ("getHTTPResponse", "get.http.response"),
        ("HTTPServer", "http.server"),
        ("listICD10Codes", "list.icd10.codes"),
        ("vitals2Card", "vitals2.card"),
        ("show-modal", "show.modal"),
        ("show_modal", "show.modal"),
        ("get_clinical_notes", "get.clinical.notes"),
        ("list-clinical-notes", "list.clinical.notes"),
        ("medication.prescribe", "medication.prescribe"),
        ("a", "a"),
        ("", ""),
    ],
)
def test_canonical_key_examples(spelling: str, key: str) -> None:
    assert canonical_key(spelling) == key


def test_canonical_key_is_idempotent() -> None:
    for spelling in ("visitRecordingCard", "getHTTPResponse", "list-clinical-notes"):
        assert canonical_key(canonical_key(spelling)) == canonical_key(spelling)


@pytest.mark.parametrize(
    ("tool_id", "exposed"),
    [
        ("show-modal", "show_modal"),
        ("show_modal", "show_modal"),
        ("update-info-container", "update_info_container"),
        ("visitRecordingCard", "visitRecordingCard"),
        ("search_tools", "search_tools"),
    ],
)
def test_llm_name_turns_hyphens_into_underscores(tool_id: str, exposed: str) -> None:
    assert llm_name(tool_id) == exposed


def test_hyphenated_and_underscored_ids_meet_at_the_llm() -> None:
    # The Mastra collision the TUCAN seed warns about: two ids, one name for the model.
    assert llm_name("show-notification") == llm_name("show_notification")
