"""On-call handles and channels become links a person can act on, and nothing else becomes a link."""

from __future__ import annotations

import pytest
from django.test import override_settings

from catalog.web.templatetags.contacts import contact_href, contact_link


@pytest.mark.parametrize(
    ("value", "href"),
    [
        ("meds-oncall@hospital.example", "mailto:meds-oncall@hospital.example"),
        ("+49 30 1234-5678", "tel:+493012345678"),
        ("https://pager.example/teams/meds", "https://pager.example/teams/meds"),
        ("@meds-oncall", ""),  # no chat URL configured: we never invent a target
        ("#condor-meds", ""),
        ("javascript:alert(1)", ""),
        ("", ""),
    ],
)
def test_contact_targets(value: str, href: str) -> None:
    assert contact_href(value) == href


@override_settings(CONDOR_CHAT_URL="https://chat.hospital.example/{name}")
def test_chat_handles_and_channels_open_in_the_configured_chat() -> None:
    assert contact_href("@meds-oncall") == "https://chat.hospital.example/meds-oncall"
    assert contact_href("#condor-meds") == "https://chat.hospital.example/condor-meds"
    assert contact_href("#a b") == ""  # not a channel name


def test_the_link_is_escaped_and_plain_text_stays_text() -> None:
    assert str(contact_link("ops@x.example")) == '<a class="contact" href="mailto:ops@x.example">ops@x.example</a>'
    assert contact_link("<b>@x</b>") == "<b>@x</b>"  # returned as a plain str: the template escapes it
    assert contact_link("") == "—"
