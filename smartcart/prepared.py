"""ORM queries compiled once per process, for the reads of the inline improve-cart request.

Building and compiling a ``values_list`` query with a few joins costs the web process more
than PostgreSQL spends running it: about 1.5 ms for the cart with its lines and 1 ms for the
offers, measured, on every improve-cart request. A ``PreparedQuery`` compiles its queryset
once per database alias and argument shape, with stand-in values, and then runs that SQL
with each call's values. The SQL is Django's own (the models stay the one description of the
schema) and each column gets the converters the ORM would apply (SQLite's booleans and
datetimes; PostgreSQL needs none for these columns). The statement goes through the
connection's cursor, so execute wrappers and query capture see it like any other.

Arguments are ids: an ``int``, or a list or tuple of ints (an ``__in`` list; each length
compiles once, and a cart has at most ``MAX_CART_LINES`` products).
"""

import itertools
import operator
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections, router
from django.db.models import Model, QuerySet

# Stand-ins for the arguments while compiling: ids no row has, and no query's own constant.
_STAND_IN_BASE = -(2**62)


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    # params[i] is argument slots[i] (an index into the flattened arguments), or a constant.
    slots: tuple[int | None, ...]
    converters: tuple[tuple[int, tuple[Callable, ...], Any], ...]


class PreparedQuery:
    """``build(*args)`` returns a ``values_list`` queryset of ``model``; ``rows(*args)`` returns
    what iterating ``build(*args)`` would, as a list of tuples."""

    def __init__(self, model: type[Model], build: Callable[..., QuerySet]) -> None:
        self._model = model
        self._build = build
        self._compiled: dict[tuple, _Compiled] = {}
        self._lock = threading.Lock()

    def rows(self, *args: int | list[int] | tuple[int, ...]) -> list[tuple]:
        alias = router.db_for_read(self._model)
        shape = (alias, *(len(arg) if isinstance(arg, list | tuple) else None for arg in args))
        compiled = self._compiled.get(shape)
        if compiled is None:
            with self._lock:
                compiled = self._compiled.get(shape) or self._compile(shape, alias)
        values = _flatten(args)
        params = [
            constant if slot is None else values[slot]
            for constant, slot in zip(compiled.params, compiled.slots, strict=True)
        ]
        connection = connections[alias]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, params)
            rows = cursor.fetchall()
        if not compiled.converters:
            return [tuple(row) for row in rows]
        return [_convert(row, compiled.converters, connection) for row in rows]

    def _compile(self, shape: tuple, alias: str) -> _Compiled:
        counter = itertools.count()
        stand_ins = tuple(
            _STAND_IN_BASE - next(counter)
            if length is None
            else [_STAND_IN_BASE - next(counter) for _ in range(length)]
            for length in shape[1:]
        )
        queryset = self._build(*stand_ins).using(alias)
        compiler = queryset.query.get_compiler(alias)
        sql, params = compiler.as_sql()
        if compiler.has_extra_select:  # rows would carry columns the ORM trims
            raise ValueError("a prepared query selects exactly its values_list columns")
        slot_of = {stand_in: slot for slot, stand_in in enumerate(_flatten(stand_ins))}
        slots = tuple(slot_of.get(param) if isinstance(param, int) else None for param in params)
        used = [slot for slot in slots if slot is not None]
        if sorted(used) != list(range(len(slot_of))):
            raise ValueError(
                f"each argument must be a query parameter exactly once: {params!r} for {shape!r}"
            )
        fields = [column[0] for column in compiler.select[: compiler.col_count]]
        converters = tuple(
            (position, tuple(convs), expression)
            for position, (convs, expression) in compiler.get_converters(fields).items()
        )
        compiled = _Compiled(sql=sql, params=tuple(params), slots=slots, converters=converters)
        self._compiled[shape] = compiled
        return compiled


def _flatten(args: Sequence) -> list[int]:
    """The arguments' ids in order; ``operator.index`` refuses anything but an integer (the
    ORM would have converted a string, this SQL takes the value as given)."""
    flat = []
    for arg in args:
        if isinstance(arg, list | tuple):
            flat.extend(map(operator.index, arg))
        else:
            flat.append(operator.index(arg))
    return flat


def _convert(row: Sequence, converters, connection) -> tuple:
    row = list(row)
    for position, convs, expression in converters:
        value = row[position]
        for converter in convs:
            value = converter(value, expression, connection)
        row[position] = value
    return tuple(row)
