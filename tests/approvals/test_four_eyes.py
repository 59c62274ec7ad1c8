"""Four-eyes against look-alike names: every spelling of the approver's own name in requestedBy is them."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from django.test import Client

from approvals.domain import identity_key
from approvals.services import ApprovalRefused, approval_decide
from catalog.domain.lookalikes import LETTER_GROUPS, SEPARATOR_GROUPS

from .conftest import Runtime

# The approver is `approver` (e-mail approver@hospital.org). Each of these names them in requestedBy.
OWN_SPELLINGS = [
    pytest.param("approver", id="exact"),
    pytest.param("APPROVER", id="upper-case"),
    pytest.param("appro\u200bver", id="zero-width-space-inside"),
    pytest.param("\uff41\uff50\uff50\uff52\uff4f\uff56\uff45\uff52", id="fullwidth"),
    pytest.param("\u0430pprover", id="cyrillic-a"),
    pytest.param("appr\u03bfver", id="greek-omicron"),
    pytest.param("\u0430\u0440\u0440r\u043ev\u0435r", id="cyrillic-a-er-er-o-ie"),
    pytest.param("user: approver", id="user-prefix"),
    pytest.param("USR:Approver", id="usr-prefix"),
    pytest.param("approver@", id="trailing-at"),
    pytest.param("approver@example.org", id="local-part-of-another-domain"),
    pytest.param("approver ", id="trailing-space"),
    pytest.param("\u00a0approver", id="nbsp"),
    pytest.param("appro\u0301ver", id="combining-acute"),
    pytest.param("appro\u00adver\u2060", id="soft-hyphen-and-word-joiner"),
    pytest.param("\u202eapprover", id="bidi-override"),
    pytest.param("\U0001d41a\U0001d429\U0001d429\U0001d42b\U0001d428\U0001d42f\U0001d41e\U0001d42b", id="math-bold"),
    pytest.param("Approver <approver@hospital.org>", id="display-name-and-address"),
    pytest.param("HOSPITAL\\approver", id="windows-domain"),
    pytest.param("@approver", id="mention"),
]
OTHER_PEOPLE = ["approver2", "approvers", "bert", "bert@approver.org", "user:bert", "x-approver", "appr0ver.bot"]


@pytest.mark.parametrize("spelling", OWN_SPELLINGS)
def test_every_spelling_of_the_approvers_name_has_their_identity_key(spelling: str) -> None:
    assert identity_key(spelling) == identity_key("approver") == "approver"
    assert identity_key(spelling) == identity_key("approver@hospital.org")


@pytest.mark.parametrize("name", OTHER_PEOPLE)
def test_other_peoples_names_keep_their_own_key(name: str) -> None:
    assert identity_key(name) not in ("", "approver")


@pytest.mark.parametrize("nobody", ["", " ", "user:", "\u200b\u200b", "@", "user: @", "<>"])
def test_a_name_of_only_decorations_names_nobody(nobody: str) -> None:
    assert identity_key(nobody) == ""


def test_four_eyes_and_the_manipulation_rule_fold_the_same_letters() -> None:
    """One table: a letter that passes for Latin in a requester's name passes for it in a tool's text too."""
    from catalog.domain.rules.manipulation import normalized

    for source, target in LETTER_GROUPS:
        for ch, ascii_ in zip(source, target, strict=True):
            assert identity_key(f"x{ch}x") == identity_key(f"x{ascii_}x"), unicodedata.name(ch)
            assert normalized(f"x{ch}x") == normalized(f"x{ascii_}x"), unicodedata.name(ch)


def test_the_look_alike_table_maps_letters_of_other_scripts_to_ascii() -> None:
    for source, target in LETTER_GROUPS + SEPARATOR_GROUPS:
        assert len(source) == len(target), source
        for ch, ascii_ in zip(source, target, strict=True):
            assert ascii_.isascii() and not ch.isascii(), (ch, unicodedata.name(ch))


@pytest.fixture
def approver(make_user: Any) -> Any:
    return make_user("approver", "approver", "approver:medication", email="approver@hospital.org")


@pytest.mark.django_db
@pytest.mark.parametrize("spelling", OWN_SPELLINGS)
def test_a_request_whose_requester_is_the_approver_is_refused_to_them_and_another_decides_it(
    runtime: Runtime, approver: Any, second_approver: Any, spelling: str
) -> None:
    req = runtime.suspend(requestedBy=spelling)
    with pytest.raises(ApprovalRefused) as exc:
        approval_decide(request_id=req["id"], approver=approver, decision="approve")
    assert exc.value.code == "own-request" and exc.value.status == 403
    assert "another approver must decide it (four-eyes)" in exc.value.message
    decided = approval_decide(request_id=req["id"], approver=second_approver, decision="approve")
    assert decided.state == "approved" and decided.decided_by == second_approver


@pytest.mark.django_db
def test_the_detail_page_offers_no_decision_on_a_look_alike_of_my_own_name(runtime: Runtime, approver: Any) -> None:
    req = runtime.suspend(requestedBy="\u0430ppro\u200bver")
    client = Client()
    client.force_login(approver)
    detail = client.get(f"/approvals/{req['id']}/").content.decode()
    assert "another approver must decide it (four-eyes)" in detail and "Approve as proposed" not in detail


@pytest.mark.django_db
@pytest.mark.parametrize("nobody", ["user:", "\u200b", "user: @"])
def test_a_requested_by_that_names_nobody_is_refused_at_evaluate(runtime: Runtime, nobody: str) -> None:
    response = runtime.evaluate(requestedBy=nobody)
    assert response.status_code == 422
    body = response.json()
    assert body["reason"] == "invalid-requested-by" and body["detail"].startswith("requestedBy: ")
    assert "send the username or e-mail of the person who asked" in body["detail"]
