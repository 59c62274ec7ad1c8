"""The audit chain's key: CONDOR_AUDIT_KEY, outside the database; `check --deploy` refuses a deployment without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.db import transaction

from catalog.checks import audit_key_is_set
from catalog.core.audit import Actor, audit_record, audit_seal, audit_verify
from tests.test_production import manage, production_env

pytestmark = pytest.mark.django_db

KEY = "the deployment's audit key, 48 characters long.."


def record(n: int) -> None:
    with transaction.atomic():
        for i in range(n):
            audit_record(actor=Actor("cli"), action="test.action", object_type="thing", object_id=i)
    audit_seal()


def test_the_chain_is_keyed_by_condor_audit_key_not_by_secret_key(settings: Any) -> None:
    settings.CONDOR_AUDIT_KEY = KEY
    record(3)
    settings.SECRET_KEY = "rotated for reasons of its own"
    assert audit_verify(seal=False).ok
    settings.CONDOR_AUDIT_KEY = "a different key, as if it had been changed after the fact"
    result = audit_verify(seal=False)
    assert not result.ok and result.place == "the chain head"


def test_without_condor_audit_key_the_stand_in_follows_secret_key(settings: Any) -> None:
    """Why `check --deploy` insists on CONDOR_AUDIT_KEY: the stand-in changes whenever SECRET_KEY does."""
    settings.CONDOR_AUDIT_KEY = ""
    record(2)
    assert audit_verify(seal=False).ok
    settings.SECRET_KEY = "rotated for reasons of its own"
    assert not audit_verify(seal=False).ok


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "CONDOR_AUDIT_KEY is not set: the audit chain is keyed with a stand-in derived from SECRET_KEY"),
        ("short", "CONDOR_AUDIT_KEY is shorter than 32 characters"),
    ],
)
def test_the_deploy_check_refuses_a_missing_or_short_key(settings: Any, key: str, problem: str) -> None:
    settings.CONDOR_AUDIT_KEY = key
    (error,) = audit_key_is_set()
    assert (error.id, error.msg, error.is_serious()) == ("condor.E020", problem, True)
    settings.CONDOR_AUDIT_KEY = KEY
    assert audit_key_is_set() == []


def test_check_deploy_fails_in_production_without_the_key(tmp_path: Path) -> None:
    result = manage(production_env(tmp_path, CONDOR_AUDIT_KEY=""), "check", "--deploy")
    assert result.returncode != 0
    assert "(condor.E020) CONDOR_AUDIT_KEY is not set" in result.stderr, result.stdout + result.stderr
