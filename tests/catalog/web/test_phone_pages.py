"""The owner lookup and team pages as the on-call engineer opens them from a page on a phone: the on-call handle and
channel are links that page someone in one tap, and the tables are read as labelled cards (the width itself is
measured in Chromium by tests/integration/browser/test_every_page.py)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db
CHAT = "https://chat.hospital.example/{name}"


@pytest.fixture
def oncall(demo: None, make_user: Any, settings: Any) -> Client:
    settings.CONDOR_CHAT_URL = CHAT
    client = Client()
    client.force_login(make_user("oscar", "on-call"))
    return client


def test_the_owner_lookup_links_on_call_and_channel(oncall: Client) -> None:
    body = oncall.get("/owners/", {"q": "visit-recording-card"}).content.decode()
    assert '<a class="contact" href="https://chat.hospital.example/cards-oncall">@cards-oncall</a>' in body
    assert 'href="https://chat.hospital.example/condor-cards">#condor-cards</a>' in body


def test_near_misses_link_the_on_call_of_each_candidate(oncall: Client) -> None:
    body = oncall.get("/owners/", {"q": "get_clinical_notes"}).content.decode()
    assert 'href="https://chat.hospital.example/docs-oncall">@docs-oncall</a>' in body
    assert '<table class="stack">' in body and 'data-label="Similarity"' in body


def test_teams_and_a_team_link_their_contacts(oncall: Client) -> None:
    teams = oncall.get("/teams/").content.decode()
    assert 'href="https://chat.hospital.example/billing-oncall">@billing-oncall</a>' in teams
    assert '<table class="stack">' in teams and 'data-label="On call"' in teams
    team = oncall.get("/teams/billing/").content.decode()
    assert 'href="https://chat.hospital.example/billing-oncall">@billing-oncall</a>' in team
    assert 'href="https://chat.hospital.example/condor-billing">#condor-billing</a>' in team


def test_without_a_chat_url_a_handle_stays_text(oncall: Client, settings: Any) -> None:
    settings.CONDOR_CHAT_URL = ""
    body = oncall.get("/teams/billing/").content.decode()
    assert "@billing-oncall" in body and 'class="contact"' not in body


def test_german_labels_for_the_stacked_cells(oncall: Client) -> None:
    oncall.cookies["django_language"] = "de"
    body = oncall.get("/teams/", headers={"Accept-Language": "de"}).content.decode()
    assert 'data-label="Bereitschaft"' in body
