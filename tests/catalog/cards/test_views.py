"""The translator's workspace over HTTP: the matrix and its filters, the side panel, saving and reviewing
with htmx and without JavaScript, coverage, exports; who may do what."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from catalog.cards.services.translations import locale_add, translation_save
from catalog.core.audit import Actor
from catalog.models import CardTranslation

pytestmark = pytest.mark.django_db
HTMX = {"HX-Request": "true"}


def client_for(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def reader(make_user: Any) -> Any:
    return make_user("oscar", "on-call")


def rows(html: str) -> int:
    return html.count('id="cards-row-')


def test_everyone_signed_in_reads_the_matrix(small: None, reader: Any) -> None:
    html = client_for(reader).get("/cards/").content.decode()
    assert rows(html) == 7 and "card.medication.title" in html and "Medikation" in html
    assert 'id="cards-completion"' in html and "<progress" in html
    assert 'name="form"' not in html  # no editor: nothing chosen, and readers cannot edit anyway


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("module=status", 2),
        ("value_set=medicationrequest-status", 2),
        ("q=Pausiert", 1),
        ("q=interaction", 1),
        ("state=reviewed&locale=de", 1),
        ("check=same-as-source&locale=de", 0),  # marked "same as source": no finding
        ("check=any&locale=de", 0),
    ],
)
def test_filters_narrow_the_matrix(small: None, reader: Any, query: str, expected: int) -> None:
    assert rows(client_for(reader).get(f"/cards/?{query}").content.decode()) == expected


def test_a_failing_check_filter_finds_the_broken_string(small: None, translator: Any, reader: Any) -> None:
    translation_save(user=translator, key="card.medication.warning.interaction", locale="de", forms=["Mit {x}"])
    html = client_for(reader).get("/cards/?check=placeholder&locale=de").content.decode()
    assert rows(html) == 1 and 'data-check="placeholder"' in html
    html = client_for(reader).get("/cards/?state=untranslated&locale=de").content.decode()
    assert rows(html) == 0


def test_htmx_filtering_returns_only_the_table(small: None, reader: Any) -> None:
    html = client_for(reader).get("/cards/?module=hitl", headers=HTMX).content.decode()
    assert html.lstrip().startswith('<div id="cards-table">') and rows(html) == 1 and "<h1>" not in html


def test_the_panel_shows_source_note_placeholders_and_a_preview(small: None, translator: Any) -> None:
    html = (
        client_for(translator)
        .get("/cards/panel?key=card.medication.warning.interaction&lang=de", headers=HTMX)
        .content.decode()
    )
    assert html.lstrip().startswith('<aside id="cards-panel"')
    assert "Possible interaction with {drug}" in html and "<code>{drug}</code>" in html
    assert 'name="form"' in html and 'hx-get="/cards/panel"' in html
    # The preview fills {drug} with sample clinical data, which stays as the source system holds it.
    assert 'class="card-preview"' in html and "Wechselwirkung mit Metformin 500 mg" in html


def test_the_panel_without_javascript_is_the_whole_page(small: None, translator: Any) -> None:
    html = client_for(translator).get("/cards/?key=status.medicationrequest.on-hold&lang=de").content.decode()
    assert "<h1>" in html and 'id="cards-panel"' in html and "medicationrequest-status#on-hold" in html
    assert "Pausiert" in html and 'class="badge cp-status edited"' in html  # the status badge on the medication card


def test_the_panel_locale_is_independent_of_the_filter_locale(small: None, translator: Any) -> None:
    locale_add(actor=Actor(label="test"), code="fr")
    url = "/cards/?locale=de&module=base&key=card.medication.title&lang=fr"
    html = client_for(translator).get(url).content.decode()
    assert 'name="lang" value="fr"' in html and '<option value="de" selected>' in html


def test_checks_run_on_the_draft_as_you_type(small: None, translator: Any) -> None:
    client = client_for(translator)
    url = "/cards/panel?key=card.medication.warning.interaction&lang=de&part=checks"
    broken = client.get(url + "&form=Wechselwirkung mit {arznei}", headers=HTMX).content.decode()
    assert broken.lstrip().startswith('<div id="cards-checks"') and 'data-check="placeholder"' in broken
    fixed = client.get(url + "&form=Wechselwirkung mit {drug}", headers=HTMX).content.decode()
    assert 'data-check="placeholder"' not in fixed and "all checks pass" in fixed
    assert CardTranslation.objects.get(string__key="card.medication.warning.interaction").forms == [
        "Wechselwirkung mit {drug}"
    ]


def test_saving_with_htmx_swaps_the_panel_row_and_bars(small: None, translator: Any) -> None:
    response = client_for(translator).post(
        "/cards/save",
        {"key": "card.medication.warning.interaction", "lang": "de", "form": "Mit {arznei}", "intent": "save"},
        headers=HTMX,
    )
    html = response.content.decode()
    assert response.status_code == 200 and "Saved." in html
    assert 'id="cards-row-' in html and html.count('hx-swap-oob="true"') == 2
    assert 'data-check="placeholder"' in html


def test_saving_without_javascript_redirects_back_to_the_panel(small: None, translator: Any) -> None:
    response = client_for(translator).post(
        "/cards/save",
        {"key": "card.medication.title", "lang": "de", "form": "Arzneimittel", "back": "module=base"},
    )
    assert response.status_code == 302
    assert response["Location"] == "/cards/?module=base&key=card.medication.title&lang=de"
    assert CardTranslation.objects.get(string__key="card.medication.title", locale__code="de").forms == ["Arzneimittel"]


def test_the_way_back_keeps_only_the_matrix_filters(small: None, translator: Any) -> None:
    data = {"key": "card.medication.title", "lang": "de", "form": "Medikation", "back": "module=base&next=//evil&x=1"}
    response = client_for(translator).post("/cards/save", data)
    assert response["Location"] == "/cards/?module=base&key=card.medication.title&lang=de"


def test_check_without_saving_works_without_javascript(small: None, translator: Any) -> None:
    response = client_for(translator).post(
        "/cards/save",
        {
            "key": "card.medication.title",
            "lang": "de",
            "form": "Medikation für alle Patientinnen und Patienten",
            "intent": "check",
        },
    )
    html = response.content.decode()
    assert response.status_code == 200 and 'data-check="too-long"' in html and "not saved" in html
    assert CardTranslation.objects.get(string__key="card.medication.title", locale__code="de").forms == ["Medikation"]


def test_a_refused_save_says_why_in_the_panel(small: None, translator: Any) -> None:
    response = client_for(translator).post(
        "/cards/save", {"key": "card.medication.count", "lang": "de", "form": "nur eins"}, headers=HTMX
    )
    assert response.status_code == 200 and 'role="alert"' in response.content.decode()


def test_reviewing_from_the_panel(small: None, translator: Any, reviewer: Any) -> None:
    translation_save(user=translator, key="status.medicationrequest.on-hold", locale="de", forms=["Angehalten"])
    panel = client_for(reviewer).get("/cards/panel?key=status.medicationrequest.on-hold&lang=de", headers=HTMX)
    assert "Mark reviewed" in panel.content.decode()
    response = client_for(reviewer).post(
        "/cards/review", {"key": "status.medicationrequest.on-hold", "lang": "de"}, headers=HTMX
    )
    assert "Marked reviewed." in response.content.decode()
    assert CardTranslation.objects.get(string__key="status.medicationrequest.on-hold", locale__code="de").state == (
        "reviewed"
    )


def test_people_without_the_role_cannot_write(small: None, reader: Any, translator: Any) -> None:
    data = {"key": "card.medication.title", "lang": "de", "form": "X"}
    assert client_for(reader).post("/cards/save", data).status_code == 403
    assert client_for(translator).post("/cards/review", data).status_code == 403
    assert client_for(translator).post("/cards/save", {}).status_code == 400
    html = client_for(reader).get("/cards/?key=card.medication.title&lang=de").content.decode()
    assert 'name="form"' not in html and "Mark reviewed" not in html


def test_coverage_answers_which_codes_a_doctor_would_see_raw(small: None, reader: Any) -> None:
    html = client_for(reader).get("/cards/coverage/").content.decode()
    assert "medicationrequest-status" in html and "appointmentstatus" in html
    # Two of eight MedicationRequest codes have a label; the rest would show raw codes in every locale.
    assert "2/8" in html and "<code>stopped</code>" in html


def test_exports_download_the_template_a_po_and_a_bundle(small: None, reader: Any) -> None:
    client = client_for(reader)
    pot = client.get("/cards/export")
    assert (
        pot["Content-Disposition"] == 'attachment; filename="cards.pot"'
        and b'msgctxt "card.medication.title"' in pot.content
    )
    po = client.get("/cards/export?locale=de")
    assert po["Content-Disposition"] == 'attachment; filename="cards-de.po"' and b"Medikation" in po.content
    bundle = client.get("/cards/export?locale=de&format=json")
    assert bundle.json()["strings"]["card.medication.title"] == "Medikation"
    assert client.get("/cards/export?locale=xx").status_code == 404
