"""Querysets compiled once: each call's values reach the SQL, constants stay, rows convert as the ORM's do."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.db.models.functions import Now
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.auth import token_by_hash
from catalog.models import ApiToken
from catalog.precompiled import PrecompiledInsert, PrecompiledQuery, PrecompiledUpdate

pytestmark = pytest.mark.django_db


def test_each_call_runs_with_its_own_values_and_keeps_the_query_constants(make_token: Any) -> None:
    soon = timezone.now() + timedelta(days=1)
    make_token("a", ("catalog",), expires_at=soon)
    make_token("b", ("rag", "cards"))
    make_token("c", ("rag",), revoked_at=timezone.now())
    query = PrecompiledQuery(
        lambda scope_name: ApiToken.objects.filter(name=scope_name, revoked_at__isnull=True).values_list(
            "name", "scopes", "expires_at"
        ),
        "scope_name",
    )
    assert query.rows("a") == [("a", ["catalog"], soon)]  # JSON decoded, datetime aware, as the ORM returns them
    assert query.rows("b") == [("b", ["rag", "cards"], None)]
    assert query.rows("c") == []  # the constant condition (not revoked) is still part of the query
    assert isinstance(query.rows("a")[0][2], datetime) and query.rows("a")[0][2].tzinfo is not None


def test_compiled_once_per_connection(make_token: Any) -> None:
    make_token("a")
    query = PrecompiledQuery(lambda name: ApiToken.objects.filter(name=name).values_list("pk"), "name")
    query.rows("a")
    compiled = query._compiled[connections["default"]]
    with CaptureQueriesContext(connection) as ran:
        assert query.rows("a") == query.rows("a")
    assert query._compiled[connections["default"]] is compiled
    assert len(ran.captured_queries) == 2


def test_a_placeholder_the_sql_does_not_carry_is_refused() -> None:
    query = PrecompiledQuery(lambda name: ApiToken.objects.values_list("pk"), "name")
    with pytest.raises(ValueError, match="placeholder"):
        query.rows("a")


def test_the_token_lookup_returns_a_whole_token(make_token: Any) -> None:
    raw = make_token("runtime", ("approvals", "rag"), expires_at=timezone.now() + timedelta(hours=1))
    token = token_by_hash(ApiToken.hash(raw))
    stored = ApiToken.objects.get(name="runtime")
    assert token is not None
    assert [getattr(token, f.attname) for f in ApiToken._meta.concrete_fields] == [
        getattr(stored, f.attname) for f in ApiToken._meta.concrete_fields
    ]
    assert token.is_usable() and token_by_hash(ApiToken.hash(raw + "x")) is None


def _stored(model: Any, pk: Any) -> dict[str, Any]:
    row = model.objects.get(pk=pk)
    return {f.attname: getattr(row, f.attname) for f in model._meta.concrete_fields if f.attname != "id"}


def test_a_precompiled_insert_stores_what_save_stores() -> None:
    from catalog.models import AuditEvent

    insert = PrecompiledInsert(AuditEvent)
    when = timezone.now()
    made = []
    for payload in ({"a": [1, "ü", None]}, {"b": {"when": when}}):  # a second call reuses the compiled INSERT
        fields = {"actor": "token:rt", "action": "x.y", "object_type": "t", "object_id": "1", "after": payload}
        saved, inserted = AuditEvent(created_at=when, **fields), AuditEvent(created_at=when, **fields)
        saved.save(force_insert=True)
        insert.insert(inserted)
        assert inserted.pk is not None and inserted.pk != saved.pk and not inserted._state.adding
        assert _stored(AuditEvent, inserted.pk) == _stored(AuditEvent, saved.pk)
        made.append(inserted.pk)
    assert _stored(AuditEvent, made[0])["after"] == {"a": [1, "ü", None]}  # JSON through the field's encoder


def test_a_precompiled_insert_keeps_the_constraints(make_token: Any) -> None:
    insert = PrecompiledInsert(ApiToken)
    insert.insert(ApiToken(name="one", prefix="p", token_hash="h" * 64, scopes=["rag"]))
    with pytest.raises(IntegrityError), transaction.atomic():
        insert.insert(ApiToken(name="two", prefix="p", token_hash="h" * 64, scopes=["rag"]))  # the same hash
    assert list(ApiToken.objects.values_list("name", "scopes")) == [("one", ["rag"])]


def test_a_model_with_save_receivers_is_saved_through_save() -> None:
    from django.db.models.signals import post_save

    heard: list[str] = []

    def receiver(sender: Any, instance: ApiToken, created: bool, **kwargs: Any) -> None:
        heard.append(instance.name)

    post_save.connect(receiver, sender=ApiToken)
    try:
        PrecompiledInsert(ApiToken).insert(ApiToken(name="heard", prefix="p", token_hash="k" * 64, scopes=[]))
    finally:
        post_save.disconnect(receiver, sender=ApiToken)
    assert heard == ["heard"] and ApiToken.objects.filter(name="heard").exists()


def test_objects_are_the_instances_the_orm_builds_with_their_related_rows(manifests: Any) -> None:
    from catalog.models import Tool
    from catalog.services.imports import catalog_import

    catalog_import(raw=manifests.encode(manifests.condor()), via="test")
    query = PrecompiledQuery(lambda key: Tool.objects.select_related("owner").filter(declared_id=key), "key")
    tools = list(Tool.objects.select_related("owner")[:5])
    assert tools and any(t.owner for t in tools)
    for tool in tools:
        (built,) = query.objects(tool.declared_id)
        assert type(built) is Tool and not built._state.adding and built._state.db == "default"
        assert [getattr(built, f.attname) for f in Tool._meta.concrete_fields] == [
            getattr(tool, f.attname) for f in Tool._meta.concrete_fields
        ]
        with CaptureQueriesContext(connection) as ran:  # the owner came with the row: no second query
            assert built.owner == tool.owner
        assert ran.captured_queries == []
    assert query.objects("no such tool") == []


def test_objects_of_a_values_queryset_are_refused() -> None:
    query = PrecompiledQuery(lambda name: ApiToken.objects.filter(name=name).values_list("pk"), "name")
    with pytest.raises(ValueError, match="model queryset"):
        query.objects("a")


def test_an_integer_parameter(make_token: Any) -> None:
    make_token("a")
    make_token("b")
    query = PrecompiledQuery(
        lambda pk: ApiToken.objects.filter(pk=pk, revoked_at__isnull=True).values_list("name"), "pk:int"
    )
    for pk, name in ApiToken.objects.values_list("pk", "name"):
        assert query.rows(pk) == query.rows(str(pk)) == [(name,)]
    assert query.rows(10**6) == []


def _token_row(name: str) -> tuple[Any, ...]:
    token = ApiToken.objects.get(name=name)
    return (token.scopes, token.expires_at, token.revoked_at, token.last_used_at)


def test_a_precompiled_update_writes_what_update_writes(make_token: Any) -> None:
    """Same rows, same WHERE, same values: the precompiled UPDATE and the ORM's leave identical rows, count the
    same, write None as NULL, and refuse a row the condition does not pass."""
    soon = timezone.now() + timedelta(days=1)
    for name in ("orm", "pre", "expired"):
        make_token(name, ("catalog",), expires_at=soon if name != "expired" else timezone.now() - timedelta(1))
    update = PrecompiledUpdate(
        lambda name, now: ApiToken.objects.filter(name=name, revoked_at__isnull=True, expires_at__gt=now),
        "name",
        "now:datetime",
    )
    now = timezone.now()
    values: dict[str, Any] = {"scopes": ["rag", "cards"], "last_used_at": now, "expires_at": soon + timedelta(1)}
    orm = ApiToken.objects.filter(name="orm", revoked_at__isnull=True, expires_at__gt=now).update(**values)
    assert (orm, update.update("pre", now, **values)) == (1, 1)
    assert _token_row("pre") == _token_row("orm") == (["rag", "cards"], soon + timedelta(1), None, now)
    assert update.update("expired", now, **values) == 0 and _token_row("expired")[0] == ["catalog"]
    assert update.update("pre", soon + timedelta(2), **values) == 0  # past its expiry: the condition fails
    # Another set of fields, a None among them: compiled apart, written as NULL.
    assert update.update("pre", now, last_used_at=None, scopes=["approvals"]) == 1
    assert _token_row("pre") == (["approvals"], soon + timedelta(1), None, None)
    assert update.update("pre", now, **values) == 1 and _token_row("pre") == _token_row("orm")
    assert len(update._compiled[connections["default"]]) == 2


def test_a_precompiled_update_refuses_what_it_cannot_compile_once(make_token: Any) -> None:
    make_token("a", ("catalog",), expires_at=timezone.now() + timedelta(days=1))
    update = PrecompiledUpdate(
        lambda name, now: ApiToken.objects.filter(name=name, expires_at__gt=now), "name", "now:datetime"
    )
    with pytest.raises(ValueError, match="naive"):
        update.update("a", datetime(2030, 1, 1), last_used_at=timezone.now())  # noqa: DTZ001 (the point)
    with pytest.raises(ValueError, match="expression"):
        update.update("a", timezone.now(), last_used_at=Now())
    assert ApiToken.objects.get(name="a").last_used_at is None
