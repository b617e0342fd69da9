"""Catalog queries compiled to SQL once per shape, not once per request.

Django builds and compiles a queryset's SQL on every evaluation: for the catalog's list and
facets (five CASEs of subqueries for the best offer, a full-text match, grouped counts) that
is a large share of an uncached search's CPU (BENCHMARKS.md has the figures). Yet the SQL text
depends only on the query's *shape* (which filters are present, how many ids an ``IN`` holds,
the order, the page's slice); the values (the words searched, a merchant's id) are only its
parameters.

``shaped_list(key=..., slots=..., build=...)`` builds and compiles the query once per ``key``
and process, with sentinel values (from ``Slots``) in place of the request's values; the
SQL and the positions of the sentinels among its parameters are kept. Every later call with
that key binds the request's values into those positions and executes the kept SQL through
the kept compiler (so rows are converted and models built exactly as Django's own iterables
do), without building or compiling anything.

Safe by construction: the query is compiled twice, with two sets of sentinels, and a key is
refused for good (its queries run the plain way) unless the two SQL texts are the same and
the parameters differ exactly where one sentinel of each set stands (not so for a value
inlined into the SQL, or transformed, as a LIKE pattern or a regular expression around a
word is): a kept shape only ever differs from a fresh compile in the values it binds. The
key must name whatever the SQL's text depends on; tests compare kept and fresh compiles for
the shapes the catalog makes.
"""

import copy
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connections
from django.db.models import QuerySet
from django.db.models.sql.compiler import SQLCompiler

# Sentinel numbers fit even a 16-bit integer column: Django drops a condition whose value is out
# of its column's range while compiling, and a kept SQL without it would ignore the request's
# value. A sentinel that equals a constant of the query is told apart by the second set
# (variant 1), which moves every sentinel and no constant (see ``_compile``).
_INT_SENTINEL_BASE = (30_000, 20_000)
_MAX_NUMBER_SLOTS = 2_700  # below 32,767 - 30,000
_TEXT_SENTINEL = "\ue000shapeslot{}x{}\ue000"
_BIGINT = range(-(2**63), 2**63)
# Shapes kept per process, least recently used dropped first: ~30 KB each (221 shapes of the
# catalog's pages held 6.6 MB), so at most ~15 MB.
MAX_SHAPES = 512


class Slots:
    """Hands out one sentinel per value a query takes, in a fixed order, and remembers the
    value each stands for. Two calls with the same key must ask for the same slots in the
    same order (the key names whatever changes them)."""

    def __init__(self, variant: int = 0) -> None:
        self.variant = variant
        self.values: dict[int | str, Any] = {}
        # A number no database column holds (Django drops such a condition while compiling),
        # or more numbers than sentinels: the query runs plainly, as without shapes.
        self.plain_only = False

    def number(self, value: int) -> int:
        sentinel = _INT_SENTINEL_BASE[self.variant] + len(self.values)
        value = int(value)
        if value not in _BIGINT or len(self.values) >= _MAX_NUMBER_SLOTS:
            self.plain_only = True
        self.values[sentinel] = value
        return sentinel

    def text(self, value: str) -> str:
        sentinel = _TEXT_SENTINEL.format(self.variant, len(self.values))
        self.values[sentinel] = str(value)
        return sentinel

    def numbers(self, values: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(self.number(value) for value in values)


@dataclass(frozen=True)
class _Shape:
    queryset: QuerySet
    compiler: SQLCompiler
    sql: str
    params: tuple[Any, ...]
    slots: tuple[tuple[int, int | str], ...]  # (position among the params, sentinel)

    def bind(self, values: dict[int | str, Any]) -> tuple[Any, ...]:
        params = list(self.params)
        for position, sentinel in self.slots:
            params[position] = values[sentinel]
        return tuple(params)


class _BoundQuery:
    """The kept query, whose compiler returns the kept SQL with this call's parameters."""

    def __init__(self, query: Any, compiler: SQLCompiler) -> None:
        self._query = query
        self._compiler = compiler

    def get_compiler(self, *args: Any, **kwargs: Any) -> SQLCompiler:
        return self._compiler

    def __getattr__(self, name: str) -> Any:
        return getattr(self._query, name)


_shapes: "OrderedDict[Hashable, _Shape | None]" = OrderedDict()
_lock = threading.Lock()


def _slot_positions(
    first: tuple[Any, ...], second: tuple[Any, ...], slots: tuple[Slots, Slots]
) -> tuple[tuple[int, int | str], ...] | None:
    """Where each value sits among the parameters of one query compiled with two sets of
    sentinels: a parameter that is the same in both is a constant; one that differs must be a
    sentinel of each set, the same slot. Anything else (a value inlined, or transformed into
    a pattern or a regular expression) leaves None: such a query has no fixed shape."""
    if len(first) != len(second):
        return None
    order = [list(s.values) for s in slots]
    positions = []
    for position, (one, two) in enumerate(zip(first, second, strict=True)):
        if type(one) is type(two) and one == two:
            continue
        try:
            index = order[0].index(one)
        except ValueError:
            return None
        if index >= len(order[1]) or order[1][index] != two:
            return None
        positions.append((position, one))
    return tuple(positions)


def _compile(build: Callable[[Slots], QuerySet], using: str) -> _Shape | None:
    compiled = []
    slots = (Slots(0), Slots(1))
    for variant in slots:
        queryset = build(variant)
        prefetches = queryset._prefetch_related_lookups  # type: ignore[attr-defined]
        if queryset.db != using or prefetches or queryset.query.is_sliced:
            return None
        compiler = queryset.query.get_compiler(using=using)
        try:
            sql, params = compiler.as_sql()
        except (EmptyResultSet, FullResultSet):
            return None
        compiled.append((queryset, compiler, sql, tuple(params)))
    (queryset, compiler, sql, params), (_, _, other_sql, other_params) = compiled
    if sql != other_sql:
        return None
    positions = _slot_positions(params, other_params, slots)
    if positions is None:
        return None
    return _Shape(queryset, compiler, sql, params, positions)


def _shape(
    key: Hashable, build: Callable[[Slots], QuerySet], slots: Slots, using: str
) -> _Shape | None:
    """The shape kept for ``key`` (compiled now if none is); None: run plainly (shapes off,
    a value no column holds, or a query without a fixed shape)."""
    if not settings.SQL_SHAPES or slots.plain_only:
        return None
    full_key = (using, key)
    with _lock:
        if full_key in _shapes:
            _shapes.move_to_end(full_key)
            return _shapes[full_key]
    # Compiled outside the lock, from querysets this thread builds (two threads missing the
    # same key both compile it; the last one's is kept).
    shape = _compile(build, using)
    with _lock:
        _shapes[full_key] = shape
        if len(_shapes) > MAX_SHAPES:
            _shapes.popitem(last=False)
    return shape


def _bound(
    shape: _Shape, slots: Slots, window: tuple[int, int] | None
) -> tuple[str, tuple[Any, ...]]:
    sql, params = shape.sql, shape.bind(slots.values)
    if window is not None:
        start, stop = window
        # PostgreSQL's and SQLite's syntax (the two databases the shop runs on).
        sql, params = f"{sql} LIMIT %s OFFSET %s", (*params, max(stop - start, 0), start)
    return sql, params


def shaped_sql(
    *,
    key: Hashable,
    slots: Slots,
    build: Callable[[Slots], QuerySet],
    window: tuple[int, int] | None = None,
    using: str = "default",
) -> tuple[str, tuple[Any, ...]] | None:
    """The SQL and parameters ``shaped_list`` runs for these arguments (None: run plainly)."""
    shape = _shape(key, build, slots, using)
    return None if shape is None else _bound(shape, slots, window)


def shaped_list(
    *,
    key: Hashable,
    slots: Slots,
    build: Callable[[Slots], QuerySet],
    plain: Callable[[], QuerySet],
    window: tuple[int, int] | None = None,
    using: str = "default",
) -> list:
    """The rows of the queryset ``plain()`` builds, run from the SQL kept for ``key``.

    ``build(sentinels)`` makes the same queryset, unsliced, with values from ``sentinels``
    (a ``Slots``) asked for in the order ``slots`` was asked (twice per key and process, with
    two sets of sentinels); ``plain()`` runs instead when the key cannot be kept. The values
    come from ``slots``. ``window`` (start, stop) is the slice, as parameters of one kept SQL
    for every page (Django would write each page's LIMIT into the SQL's text)."""
    shape = _shape(key, build, slots, using)
    if shape is None:
        queryset = plain()
        return list(queryset if window is None else queryset[window[0] : window[1]])
    sql, params = _bound(shape, slots, window)
    compiler = copy.copy(shape.compiler)
    compiler.connection = connections[using]  # this thread's connection
    compiler.as_sql = lambda *args, **kwargs: (sql, params)  # type: ignore[method-assign]
    queryset = shape.queryset._clone()  # type: ignore[attr-defined]
    queryset._query = _BoundQuery(shape.queryset.query, compiler)
    return list(queryset)


def shaped_count(
    *,
    key: Hashable,
    slots: Slots,
    build: Callable[[Slots], QuerySet],
    using: str = "default",
) -> int | None:
    """``queryset.count()`` of the queryset ``build`` makes, from SQL compiled once per
    ``key`` (the rows' ids counted in a subquery, which PostgreSQL flattens into the plain
    count's plan); None when the key cannot be kept (count the plain way then)."""

    def ids(sentinels: Slots) -> QuerySet:
        return build(sentinels).order_by().values("pk")

    shape = _shape(("count", key), ids, slots, using)
    if shape is None:
        return None
    sql, params = _bound(shape, slots, None)
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM ({sql}) AS shaped", params)
        return cursor.fetchone()[0]


def shapes_clear() -> None:
    """Forget every kept shape (tests; a schema change in a running process)."""
    with _lock:
        _shapes.clear()
