"""Querysets compiled to SQL once and run many times: for the few reads every API call makes, where the ORM's
compilation cost more CPU than the indexed lookup itself (measured on the approvals evaluate path: compiling
the token lookup took about twice the CPU of running it).

The query is written as an ORM queryset, once; its parameters are placeholders that each call fills in. Rows
come back converted exactly as the ORM would convert them (JSON decoded, datetimes aware on every backend),
because they go through the compiler's own converters. The same holds for the conditional UPDATEs that decide
and consume an approval (PrecompiledUpdate) and for the INSERTs every API call writes (PrecompiledInsert).
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.models import Field, Model, QuerySet, signals
from django.db.models.query import get_related_populators  # type: ignore[attr-defined]  # internal, as ModelIterable uses it
from django.db.models.sql.compiler import SQLCompiler, SQLInsertCompiler
from django.db.models.sql.subqueries import InsertQuery, UpdateQuery
from django.utils import timezone


@dataclass(frozen=True)
class _Compiled:
    compiler: SQLCompiler
    sql: str
    # Per parameter: the index of the value a call passes (or None: a constant of the query itself), and how
    # that value is stored (or the constant).
    template: list[tuple[int | None, Any]]
    # For a model queryset: what ModelIterable works out per query, worked out once here.
    instances: _Instances | None
    # What turns a fetched row into the ORM's values (by column), as results_iter() would work it out per call.
    converters: dict[int, Any]


@dataclass(frozen=True)
class _Instances:
    model: type[Model]
    start: int  # the model's columns in a row
    end: int
    names: list[str]
    populators: list[Any]  # select_related: one per related model


class Placeholder(str):
    """Stands for a text parameter while the queryset is compiled; each call passes the value in its place."""


class UUIDPlaceholder(uuid.UUID):
    """Stands for a UUID parameter (a name ending in `:uuid`). The field stores it either as it is (PostgreSQL's
    uuid) or as its hex digits (SQLite's char(32)); each call's value is stored the way the placeholder was."""


def _as_is(value: Any) -> Any:
    return value


def _uuid_hex(value: Any) -> str:
    return (value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))).hex


def _placeholder(name: str) -> Any:
    if name.endswith(":uuid"):
        return UUIDPlaceholder(int=uuid.uuid4().int)
    if name.endswith(":int"):
        # An integer no query holds as a constant, inside a 32-bit column's range (the ORM turns a value out of
        # its field's range into "no rows" instead of a parameter).
        return (1 << 30) + uuid.uuid4().int % ((1 << 30) - 1)
    if name.endswith(":datetime"):
        # An aware instant no query holds as a constant (a random microsecond of 2001).
        return datetime(2001, 1, 1, tzinfo=UTC) + timedelta(microseconds=uuid.uuid4().int % (365 * 86_400_000_000))
    return Placeholder(f"\x00{name}\x00")


def _stored_as(param: Any, placeholder: Any, connection: Any) -> Callable[[Any], Any] | None:
    """How the SQL holds a call's value, if this parameter is the placeholder; else None."""
    if isinstance(placeholder, UUIDPlaceholder):
        if type(param) is UUIDPlaceholder and param == placeholder:
            return _as_is
        return _uuid_hex if param == placeholder.hex else None
    if isinstance(placeholder, Placeholder):
        return _as_is if type(param) is Placeholder and param == placeholder else None
    if isinstance(placeholder, datetime):
        adapt = connection.ops.adapt_datetimefield_value  # as-is on PostgreSQL, UTC text on SQLite
        if param != adapt(placeholder):
            return None

        def stored(value: datetime) -> Any:
            if timezone.is_naive(value):
                raise ValueError(f"{value!r} is naive: pass an aware datetime")
            return adapt(value)

        return stored
    return int if type(param) is int and param == placeholder else None


def _template(params: Any, placeholders: list[Any], connection: Any) -> list[tuple[int | None, Any]]:
    """Per parameter of compiled SQL: the index of the value a call passes and how it is stored, or (None, the
    constant) for a value of the query itself. Every placeholder must reach the SQL."""
    template: list[tuple[int | None, Any]] = []
    for param in params:
        for index, placeholder in enumerate(placeholders):
            how = _stored_as(param, placeholder, connection)
            if how is not None:
                template.append((index, how))
                break
        else:
            template.append((None, param))
    if {slot for slot, _ in template if slot is not None} != set(range(len(placeholders))):
        raise ValueError(f"a placeholder does not reach the SQL as a parameter: {params!r}")
    return template


def _fill(template: list[tuple[int | None, Any]], values: tuple[Any, ...]) -> list[Any]:
    return [how(values[slot]) if slot is not None else how for slot, how in template]


class PrecompiledQuery:
    """`build(*placeholders)` returns a queryset; `rows(*values)` runs it with values and returns its rows
    (for a values_list queryset), `objects(*values)` its model instances (for a model queryset, with its
    select_related relations filled in as the ORM fills them). A parameter is text, a UUID when its name ends
    in `:uuid`, an integer when it ends in `:int`, an aware datetime when it ends in `:datetime`.

    Compiled per database connection (connections are per thread), and forgotten with the connection."""

    def __init__(self, build: Callable[..., QuerySet[Any, Any]], *names: str) -> None:
        self.build = build
        self.names = names
        self._compiled: weakref.WeakKeyDictionary[Any, _Compiled] = weakref.WeakKeyDictionary()

    def _compile(self, connection: Any) -> _Compiled:
        placeholders = [_placeholder(name) for name in self.names]
        compiler = self.build(*placeholders).query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        template = _template(params, placeholders, connection)
        instances = None
        klass_info = compiler.klass_info  # set by as_sql(); None for a values queryset
        if klass_info is not None and not compiler.annotation_col_map:
            fields = klass_info["select_fields"]
            start, end = fields[0], fields[-1] + 1
            instances = _Instances(
                model=klass_info["model"],
                start=start,
                end=end,
                names=[column[0].target.attname for column in compiler.select[start:end]],
                populators=get_related_populators(klass_info, compiler.select, connection.alias),
            )
        columns = [column[0] for column in compiler.select[: compiler.col_count]]
        if compiler.has_composite_fields(columns):
            raise ValueError("a composite primary key is not supported here")
        converters = compiler.get_converters(columns)
        return _Compiled(compiler, sql, template, instances, converters)

    def _run(self, values: tuple[Any, ...], using: str) -> tuple[_Compiled, list[Any]]:
        connection = connections[using]
        compiled = self._compiled.get(connection)
        if compiled is None:
            compiled = self._compiled[connection] = self._compile(connection)
        params = _fill(compiled.template, values)
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            fetched = cursor.fetchall()
        if compiled.converters:
            return compiled, list(compiled.compiler.apply_converters(fetched, compiled.converters))
        return compiled, fetched

    def rows(self, *values: Any, using: str = DEFAULT_DB_ALIAS) -> list[tuple[Any, ...]]:
        _, rows = self._run(values, using)
        return [tuple(row) for row in rows]

    def objects(self, *values: Any, using: str = DEFAULT_DB_ALIAS) -> list[Any]:
        """Model instances, built as Django's ModelIterable builds them (from_db, then each related populator)."""
        compiled, rows = self._run(values, using)
        build = compiled.instances
        if build is None:
            raise ValueError("objects() needs a model queryset without annotations; use rows()")
        out = []
        for row in rows:
            obj = build.model.from_db(using, build.names, row[build.start : build.end])
            for populator in build.populators:
                populator.populate(row, obj)
            out.append(obj)
        return out


def _prepared(field: Field[Any, Any], value: Any, connection: Any) -> Any:
    """A SET value as SQLUpdateCompiler prepares it."""
    if hasattr(value, "prepare_database_save"):  # a model instance, for a relation: its key
        if not field.remote_field:
            raise TypeError(f"{value!r} is not a value for {field.name}")
        return value.prepare_database_save(field)
    return field.get_db_prep_save(value, connection=connection)


@dataclass(frozen=True)
class _CompiledUpdate:
    sql: str
    fields: list[tuple[str, Field[Any, Any]]]  # the SET columns that take a parameter (name as passed, field)
    template: list[tuple[int | None, Any]]  # the WHERE's parameters, as PrecompiledQuery's


class PrecompiledUpdate:
    """`build(*placeholders).update(**fields)` with the UPDATE compiled once per connection and per set of fields
    (and which of them are None: those are written as NULL without a parameter). The WHERE's parameters are
    placeholders as PrecompiledQuery's; each SET value is prepared as update() prepares it (a model instance
    becomes its key; any other value goes through its field's get_db_prep_save). Returns the number of rows
    updated, as update() does; like update(), it sends no signals. For the conditional UPDATEs that decide and
    consume an approval: compiling them cost more CPU than running them."""

    def __init__(self, build: Callable[..., QuerySet[Any, Any]], *names: str) -> None:
        self.build = build
        self.names = names
        self._compiled: weakref.WeakKeyDictionary[Any, dict[tuple[tuple[str, bool], ...], _CompiledUpdate]] = (
            weakref.WeakKeyDictionary()
        )

    def _compile(self, connection: Any, fields: dict[str, Any]) -> _CompiledUpdate:
        placeholders = [_placeholder(name) for name in self.names]
        query = cast(UpdateQuery, self.build(*placeholders).query.chain(UpdateQuery))
        query.add_update_values(fields)
        query.get_initial_alias()
        if query.related_updates or query.count_active_tables() != 1:
            raise ValueError("only an UPDATE of one table filtered on its own columns is precompiled")
        compiler = query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        if len(query.values) != len(fields):
            raise ValueError("only the model's own columns are precompiled; use update()")
        # query.values is in the order of `fields`; a None is written as NULL, without a parameter.
        with_param = [
            (name, field) for name, (field, _, value) in zip(fields, query.values, strict=True) if value is not None
        ]
        if any(hasattr(field, "get_placeholder") for _, field in with_param):
            raise ValueError("a field needs SQL of its own per value; use update()")
        if any(_prepared(field, fields[name], connection) is None for name, field in with_param):
            # The ORM wrote this one as "= NULL" without a parameter: the SQL would not match its parameters.
            raise ValueError("a value that is stored as NULL must be passed as None")
        return _CompiledUpdate(sql, with_param, _template(params[len(with_param) :], placeholders, connection))

    def update(self, *values: Any, using: str = DEFAULT_DB_ALIAS, **fields: Any) -> int:
        connection = connections[using]
        per_connection = self._compiled.get(connection)
        if per_connection is None:
            per_connection = self._compiled[connection] = {}
        for value in fields.values():
            if hasattr(value, "resolve_expression"):
                raise ValueError(f"{value!r}: an expression needs SQL of its own per call; use update()")
        key = tuple((name, value is None) for name, value in fields.items())
        compiled = per_connection.get(key)
        if compiled is None:
            compiled = per_connection[key] = self._compile(connection, fields)
        params = [_prepared(field, fields[name], connection) for name, field in compiled.fields]
        params += _fill(compiled.template, values)
        with transaction.mark_for_rollback_on_error(using=using), connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            return cursor.rowcount


# The compiler (it prepares each value), the fields in column order, the SQL.
CompiledInsert = tuple[SQLInsertCompiler, list["Field[Any, Any]"], str]


class PrecompiledInsert:
    """`Model.save(force_insert=True)` for the rows an API call writes every time (an approval request, its audit
    event), with the INSERT compiled once per connection. Values are prepared by the ORM's own compiler
    (`prepare_value`), so a row stored this way is the row `save()` would store; the database's generated
    primary key comes back with RETURNING. The model's save() is not called; should a pre_save or post_save
    receiver ever be connected to the model, rows go through save() instead, so that it still hears of them."""

    def __init__(self, model: type[Model]) -> None:
        self.model = model
        self._compiled: weakref.WeakKeyDictionary[Any, CompiledInsert] = weakref.WeakKeyDictionary()

    def _compile(self, connection: Any, obj: Model) -> CompiledInsert:
        meta = self.model._meta
        fields = [f for f in meta.local_concrete_fields if not f.generated and f not in meta.db_returning_fields]
        query = InsertQuery(self.model)
        query.insert_values(fields, [obj])
        compiler = query.get_compiler(connection=connection)
        compiler.returning_fields = meta.db_returning_fields
        values = [compiler.prepare_value(f, compiler.pre_save_val(f, obj)) for f in fields]
        placeholders, _ = compiler.assemble_as_sql(fields, [values])
        if any(p != "%s" for p in placeholders[0]):
            raise ValueError(f"{meta.label}: a field needs SQL of its own per value; save() it instead")
        ((sql, _params),) = compiler.as_sql()
        return compiler, fields, sql

    def insert(self, obj: Model, using: str = DEFAULT_DB_ALIAS) -> None:
        if signals.pre_save.has_listeners(self.model) or signals.post_save.has_listeners(self.model):
            obj.save(force_insert=True, using=using)
            return
        connection = connections[using]
        compiled = self._compiled.get(connection)
        if compiled is None:
            compiled = self._compiled[connection] = self._compile(connection, obj)
        compiler, fields, sql = compiled
        params = [compiler.prepare_value(f, compiler.pre_save_val(f, obj)) for f in fields]
        returning = compiler.returning_fields or []
        with connection.cursor() as cursor:
            cursor.execute(sql, params + list(compiler.returning_params or ()))
            if returning:
                for field, value in zip(returning, cursor.fetchone(), strict=True):
                    setattr(obj, field.attname, value)
        obj._state.adding, obj._state.db = False, using
