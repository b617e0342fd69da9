"""ORM queries compiled once per process, for the reads of the inline improve-cart request.

Building and compiling a ``values_list`` query with a few joins costs the web process more
than PostgreSQL spends running it: about 1.5 ms for the cart with its lines and 1 ms for the
offers, measured, on every improve-cart request. A ``PreparedQuery`` compiles its queryset
once per database alias and argument shape, with stand-in values, and then runs that SQL
with each call's values. The SQL is Django's own (the models stay the one description of the
schema) and each column gets the converters the ORM would apply (SQLite's booleans and
datetimes; PostgreSQL needs none for these columns). The statement goes through the
connection's cursor, so execute wrappers and query capture see it like any other.

Arguments are ids (``int``) and strings (``str``), each alone or in a non-empty list or
tuple of one kind (an ``__in`` list: each length compiles once; a cart has at most
``MAX_CART_LINES`` products, a postal code at most 11 prefixes). They are passed to the
database as given, so they must be what the ORM would pass: an id for an integer column, a
string for a text column (anything else is refused).
"""

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import connections, router
from django.db.models import Model, QuerySet

Value = int | str
Argument = Value | list[Value] | tuple[Value, ...]

# Stand-ins for the arguments while compiling: values no row has, and no query's constant.
_INT_STAND_IN = -(2**62)
_STR_STAND_IN = "\x1fstand-in-{}\x1f"


@dataclass(frozen=True)
class _Compiled:
    sql: str
    params: tuple[Any, ...]
    # params[i] is argument value slots[i] (an index into the flattened values), or constant.
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

    def rows(self, *args: Argument) -> list[tuple]:
        alias = router.db_for_read(self._model)
        shape = (alias, *map(_shape, args))
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
        stand_ins = _stand_ins(shape[1:])
        compiler = self._build(*stand_ins).using(alias).query.get_compiler(alias)
        sql, params = compiler.as_sql()
        if compiler.has_extra_select:  # rows would carry columns the ORM trims
            raise ValueError("a prepared query selects exactly its values_list columns")
        slot_of = {(type(v), v): slot for slot, v in enumerate(_flatten(stand_ins))}
        slots = tuple(slot_of.get((type(param), param)) for param in params)
        if sorted(slot for slot in slots if slot is not None) != list(range(len(slot_of))):
            raise ValueError(
                f"each argument value must be a query parameter exactly once, as given: "
                f"{params!r} for {shape!r}"
            )
        fields = [column[0] for column in compiler.select[: compiler.col_count]]
        converters = tuple(
            (position, tuple(convs), expression)
            for position, (convs, expression) in compiler.get_converters(fields).items()
        )
        compiled = _Compiled(sql=sql, params=tuple(params), slots=slots, converters=converters)
        self._compiled[shape] = compiled
        return compiled


def _kind(value: object) -> type:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise TypeError(f"a prepared query takes ids and strings, got {value!r}")
    return int if isinstance(value, int) else str


def _shape(arg: Argument) -> tuple:
    if not isinstance(arg, list | tuple):
        return (_kind(arg),)
    kinds = set(map(_kind, arg))
    if len(kinds) != 1:
        raise TypeError(f"a list argument holds values of one kind, at least one: {arg!r}")
    return (kinds.pop(), len(arg))


def _stand_ins(shapes: Sequence[tuple]) -> tuple:
    numbers = iter(range(10**6))

    def stand_in(kind: type) -> Value:
        number = next(numbers)
        return _INT_STAND_IN - number if kind is int else _STR_STAND_IN.format(number)

    return tuple(
        stand_in(kind) if len(rest) == 0 else [stand_in(kind) for _ in range(rest[0])]
        for kind, *rest in shapes
    )


def _flatten(args: Sequence[Argument]) -> list[Value]:
    flat: list[Value] = []
    for arg in args:
        if isinstance(arg, list | tuple):
            flat.extend(arg)
        else:
            flat.append(arg)
    return flat


def _convert(row: Sequence, converters, connection) -> tuple:
    row = list(row)
    for position, convs, expression in converters:
        value = row[position]
        for converter in convs:
            value = converter(value, expression, connection)
        row[position] = value
    return tuple(row)
