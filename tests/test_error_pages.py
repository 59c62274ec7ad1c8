"""403, 404 and 500 as pages in the person's language with the way back; for htmx, one line of text to show."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.test.client import RequestFactory

from condor_admin.errors import server_error

pytestmark = pytest.mark.django_db


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_page_someone_may_not_open_is_a_styled_403_that_says_who_may(make_user: Any) -> None:
    client = signed_in(make_user("otto", "on-call"))
    response = client.get("/tokens/")
    body = response.content.decode()
    assert response.status_code == 403
    assert "<header>" in body and "This is not open to you" in body and "catalog-admin" in body
    assert 'href="/"' in body  # the way back


def test_the_403_is_in_german_for_a_german_reader(make_user: Any) -> None:
    client = signed_in(make_user("otto", "on-call"))
    response = client.get("/tokens/", headers={"Accept-Language": "de"})
    body = response.content.decode()
    assert response.status_code == 403 and 'lang="de"' in body
    assert "This is not open to you" not in body and "Diese Seite ist für: " in body


def test_htmx_gets_the_reason_as_one_line_of_text(make_user: Any) -> None:
    client = signed_in(make_user("otto", "on-call"))
    response = client.get("/tokens/", headers={"HX-Request": "true"})
    assert response.status_code == 403 and response["Content-Type"].startswith("text/plain")
    assert response.content.decode().startswith("This page is for: ")


def test_an_unknown_page_is_a_styled_404_with_the_path(make_user: Any) -> None:
    client = signed_in(make_user("otto", "on-call"))
    response = client.get("/no/such/page/")
    body = response.content.decode()
    assert response.status_code == 404 and "Nothing here" in body and "/no/such/page/" in body and "<header>" in body
    htmx = client.get("/no/such/page/", headers={"HX-Request": "true"})
    assert htmx.status_code == 404 and htmx["Content-Type"].startswith("text/plain")


def test_the_500_page_reads_neither_database_nor_session(django_assert_num_queries: Any) -> None:
    request = RequestFactory().get("/")
    with django_assert_num_queries(0):
        response = server_error(request)
    body = response.content.decode()
    assert response.status_code == 500 and "Something went wrong on our side" in body and "favicon.svg" in body


def test_every_page_names_its_favicon(client: Client) -> None:
    body = client.get("/login/").content.decode()
    assert 'rel="icon"' in body and "condor/favicon.svg" in body
    assert client.get("/static/condor/favicon.svg").status_code == 200
