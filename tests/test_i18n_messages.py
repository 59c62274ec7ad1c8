"""Finding texts, state words and Tool-RAG "why not" sentences read in the reader's language; the API stays English."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.template import Context, Template
from django.test import Client
from django.utils import translation

from catalog.domain.messages import N_, Message, from_json, render_json
from catalog.models import Finding


def _templates(message: Message) -> list[str]:
    """Every template of a message, its nested clauses' included."""
    out = [message.template]
    for value in message.params.values():
        if isinstance(value, Message):
            out += _templates(value)
    return out


def _has_words(template: str) -> bool:
    """A template a person reads (not a bare joint such as `%(p0)s, %(p1)s`)."""
    return bool(re.search(r"[A-Za-z]{3}", re.sub(r"%\(\w+\)[sd]", "", template)))


def test_a_message_renders_its_nested_clauses_through_the_translation() -> None:
    message = Message(N_("%(a)s and %(b)s"), {"a": Message(N_("one")), "b": 2})
    assert message.render() == "one and 2"
    german = {"%(a)s and %(b)s": "%(a)s und %(b)s", "one": "eins"}
    assert message.render(lambda s: german.get(s, s)) == "eins und 2"
    assert from_json(message.as_json()) == message


def test_a_stored_message_falls_back_to_the_english_text_when_it_cannot_render() -> None:
    assert render_json({}, None, "stored") == "stored"  # a row from before messages were kept
    assert render_json({"t": "%(tool)s is broken", "p": {}}, None, "stored") == "stored"  # a parameter missing
    assert render_json({"t": "%(n)d tools", "p": {"n": "many"}}, None, "stored") == "stored"  # of the wrong kind
    assert render_json("not a message", None, "stored") == "stored"


@pytest.fixture
def demo(demo_committed: None) -> None:
    """The demo committed, its tasks run: the findings the worker adds after the import are read too."""


@pytest.mark.django_db(transaction=True)
def test_every_demo_finding_reads_in_german_and_keeps_its_english_message(demo: None) -> None:
    findings = list(Finding.objects.exclude(text={}))
    assert len(findings) > 100
    assert {f.rule for f in findings} >= {"mutate-without-hitl", "unowned", "rag-description-shape"}
    untranslated: set[str] = set()
    with translation.override("de"):
        for f in findings:
            message = from_json(f.text)
            assert message is not None and message.render() == f.message  # English, as stored and in the API
            for template in _templates(message):
                if _has_words(template) and translation.gettext(template) == template:
                    untranslated.add(template)
            shown = Template("{% load i18n_text %}{{ f|finding_text }}").render(Context({"f": f}))
            assert shown and shown != f.message
    assert untranslated == set()


@pytest.mark.django_db(transaction=True)
def test_the_findings_api_answers_in_english_whatever_the_language(demo: None, make_token: Any) -> None:
    token = make_token(scopes=("catalog:read",))
    body = Client().get(
        "/api/v1/catalog/findings?rule=unowned", headers={"Authorization": f"Bearer {token}", "Accept-Language": "de"}
    )
    assert body.status_code == 200, body.content
    messages = [f["message"] for f in body.json()["items"]]
    assert messages and all("no ownership rule matches" in m for m in messages)


def test_state_words_show_their_label_and_keep_the_value_for_css() -> None:
    template = Template('{% include "catalog/_review_state.html" with state=s %}')
    with translation.override("de"):
        html = template.render(Context({"s": "pending-review"}))
        assert 'class="badge pending-review"' in html and "wartet auf Prüfung" in html
        shown = Template("{% load i18n_text %}{{ 'error'|state_label }} {{ 'something-new'|state_label }}")
        assert shown.render(Context()) == "Fehler something-new"
    with translation.override("en"):
        assert "pending review" in template.render(Context({"s": "pending-review"}))
