"""Querysets compiled to SQL once and run many times: for the few reads every API call makes, where the ORM's
compilation cost more CPU than the indexed lookup itself (measured on the approvals evaluate path: compiling
the token lookup took about twice the CPU of running it).

The query is written as an ORM queryset, once; its parameters are placeholders that each call fills in. Rows
come back converted exactly as the ORM would convert them (JSON decoded, datetimes aware on every backend),
because they go through the compiler's own converters.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connections
from django.db.models import Field, Model, QuerySet, signals
from django.db.models.sql.compiler import SQLCompiler, SQLInsertCompiler
from django.db.models.sql.subqueries import InsertQuery

# The compiler (its converters), the SQL, and per parameter: (index of the value a call passes, or None; constant).
Compiled = tuple[SQLCompiler, str, list[tuple[int | None, Any]]]


class Placeholder(str):
    """Stands for a parameter while the queryset is compiled; each call passes the value in its place."""


class PrecompiledQuery:
    """`build(*placeholders)` returns a queryset (of values_list rows); `rows(*values)` runs it with values.

    Compiled per database connection (connections are per thread), and forgotten with the connection."""

    def __init__(self, build: Callable[..., QuerySet[Any, Any]], *names: str) -> None:
        self.build = build
        self.names = names
        self._compiled: weakref.WeakKeyDictionary[Any, Compiled] = weakref.WeakKeyDictionary()

    def _compile(self, connection: Any) -> Compiled:
        placeholders = [Placeholder(f"\x00{name}\x00") for name in self.names]
        compiler = self.build(*placeholders).query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()
        # Each parameter is either the index of the value a call passes, or a constant of the query itself.
        slots = [placeholders.index(p) if isinstance(p, Placeholder) else None for p in params]
        if {s for s in slots if s is not None} != set(range(len(placeholders))):
            raise ValueError(f"a placeholder does not reach the SQL as a parameter: {params!r}")
        return compiler, sql, list(zip(slots, params, strict=True))

    def rows(self, *values: Any, using: str = DEFAULT_DB_ALIAS) -> list[tuple[Any, ...]]:
        connection = connections[using]
        compiled = self._compiled.get(connection)
        if compiled is None:
            compiled = self._compiled[connection] = self._compile(connection)
        compiler, sql, template = compiled
        params = [values[slot] if slot is not None else param for slot, param in template]
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
        return [tuple(row) for row in compiler.results_iter(results=[fetched])]


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
