"""Checking a chunk of carts: the totals of each cart now, at the prices its lines were added
at and after the best assignment, and the stored answer of the carts that get a notice.

Most carts are read packed (``packed.carts_packed_read``) and solved by one ``solve_packed``
call; their notices' answers are built together from the chunk's arrays, the JSON columns as
text (``notice_text``). Carts the batch cannot take (too large, near the money limit) and
carts a warehouse merchant reaches (pricing version 2) get one ``CartProblem`` each and the
answer every run stores (``answers.answer_from_solution``).
"""

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np
from django.conf import settings

from gpu_engine import Solution, SolverInconsistency, solve
from gpu_engine.batch import METHOD_NAMES, TOO_LARGE, price_choice, solve_batch, solve_packed
from smartcart.answers import answer_from_solution
from smartcart.pricewatch.columns import ChunkRows
from smartcart.pricewatch.notice_text import suggestions_text
from smartcart.pricewatch.offer_book import OfferBook
from smartcart.pricewatch.packed import PackedChunk, carts_packed_read
from smartcart.pricewatch.selectors import CartRead, carts_problems_build, carts_v2_build
from smartcart.pricewatch.writes import JsonText
from smartcart.routing import rate_profile


@dataclass
class Counts:
    checked: int = 0
    skipped: int = 0
    # Of ``checked``: carts a warehouse merchant's offer reaches (version 2), built one by one.
    v2: int = 0
    improvable: int = 0
    price_up: int = 0
    notified: int = 0
    emails: int = 0
    solve_ms: float = 0.0
    device: str = ""


@dataclass
class Checked:
    """One checked cart: its totals now, at the lines' added prices and after the best
    assignment, and ``answer(improvable)``: the run fields of the best answer (or of the
    cart as it stands when the saving is under the floors), built only for a notice. A cart
    of a packed chunk has ``packed`` (its chunk solved, its position): the notices of a chunk
    are built together (``_packed_answers``)."""

    cart_id: int
    cart_version: int
    owner_id: int | None
    current_total: int
    added_total: int
    suggested_total: int
    answer: Callable[[bool], dict]
    packed: "tuple[Solved, int] | None" = None


@dataclass(frozen=True)
class Solved:
    """A packed chunk solved: per cart its method, the solver's choice (per packed line)
    priced in ``parts`` (per packed merchant) to ``priced``; the batch's time per cart."""

    chunk: PackedChunk
    choice: np.ndarray
    parts: np.ndarray
    priced: np.ndarray
    method: np.ndarray
    device: str
    per_cart_ms: float


def _solutions(carts: list[CartRead], *, device: str, counts: Counts) -> list[Solution]:
    start = time.perf_counter()
    result = solve_batch([cart.build.problem for cart in carts], device=device)
    counts.device = counts.device or result.device
    solutions = [
        # None: too large for the batch; the normal planner, time-boxed.
        solution
        if solution is not None
        else solve(
            cart.build.problem,
            budget_ms=settings.SMARTCART_CPU_FALLBACK_BUDGET_MS,
            allow_gpu=device != "cpu",
            profile=rate_profile(),
        )
        for cart, solution in zip(carts, result.solutions, strict=True)
    ]
    counts.solve_ms += (time.perf_counter() - start) * 1000.0
    return solutions


def checked_problems(
    *, cart_ids: list[int], device: str, counts: Counts, v2: bool = False
) -> list[Checked]:
    """The carts checked through one ``CartProblem`` each (the chunk's builder; ``v2``: the
    single-cart builder, which prices warehouses)."""
    read = (carts_v2_build if v2 else carts_problems_build)(cart_ids=cart_ids)
    counts.skipped += read.skipped
    if not read.carts:
        return []
    solutions = _solutions(read.carts, device=device, counts=counts)
    return [
        Checked(
            cart_id=cart.build.cart_id,
            cart_version=cart.build.cart_version,
            owner_id=cart.owner_id,
            current_total=cart.current_total,
            added_total=cart.added_total,
            suggested_total=int(solution.total),
            answer=partial(_problem_answer, cart.build, solution),
        )
        for cart, solution in zip(read.carts, solutions, strict=True)
    ]


def _problem_answer(build, solution: Solution, improvable: bool) -> dict:
    """The notice's answer: the best assignment, or the cart as it stands when the saving is
    under the floors (``answers.answer_from_solution``, as every run stores it)."""
    fields = answer_from_solution(
        build=build, solution=solution, plan=dict(NOTICE_PLAN), keep=not improvable
    )
    return {**fields, **_notice_timings(float(solution.elapsed_ms))}


# The batch solver has no planner's reasoning to record.
NOTICE_PLAN = {"price_watch": True}


def _notice_timings(elapsed_ms: float) -> dict:
    # The batch solver's time for this cart: the panel says how long the answer took.
    return {"solve_ms": elapsed_ms, "elapsed_ms": elapsed_ms}


def _floors(amount: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``_counts_as`` over arrays (the same float arithmetic)."""
    return (amount >= settings.SMARTCART_PRICE_WATCH_MIN_CENTS) & (
        amount * 100.0 >= settings.SMARTCART_PRICE_WATCH_MIN_PERCENT * total
    )


@dataclass(frozen=True)
class Fresh:
    """Packed carts of a chunk that get a notice and hold none (``carts``: positions in the
    chunk), decided on the arrays: whether each is ``improvable`` and its price ``increase``
    (-1: under the floors). Nothing to compare with, nothing to retire: their notices are
    built and written together."""

    solved: Solved
    carts: np.ndarray
    improvable: np.ndarray
    increase: np.ndarray

    def notices(self) -> list[tuple[int, dict]]:
        """(cart id, run fields) of each cart's notice."""
        chunk, at = self.solved.chunk, self.carts
        answers = _packed_answers(self.solved, at.tolist(), self.improvable.tolist())
        for fields, increase in zip(answers, self.increase.tolist(), strict=True):
            fields["price_increase"] = None if increase < 0 else increase
        return list(zip(chunk.cart_ids[at].tolist(), answers, strict=True))

    def owners(self) -> dict[int, int | None]:
        chunk = self.solved.chunk
        return {
            cart_id: None if owner < 0 else owner
            for cart_id, owner in zip(
                chunk.cart_ids[self.carts].tolist(), chunk.owners[self.carts].tolist(), strict=True
            )
        }


class ChunkChecks(NamedTuple):
    """A chunk checked: carts one by one (``checked``) and packed carts decided together."""

    checked: list[Checked]
    fresh: list[Fresh]


def checked_packed(
    *,
    cart_ids: list[int],
    device: str,
    counts: Counts,
    noticed: set[int] | None = None,
    book: OfferBook | None = None,
    rows: ChunkRows | None = None,
) -> ChunkChecks:
    """The carts checked from the chunk's packed rows (``packed.carts_packed_read``): one
    ``solve_packed`` call, answers turned into rows only for notices. Carts the batch cannot
    take (too large, or a money bound to check exactly) go through ``checked_problems``.
    With ``noticed`` (the carts that have a notice now) only the carts that may change a
    notice are returned: those in ``noticed`` one by one, and those over a floor (decided on
    the arrays, counted in ``counts``) as ``Fresh``; the others would neither get nor lose
    one. ``book``: the run's offers read so far; ``rows``: the chunk's rows read already."""
    chunk = carts_packed_read(cart_ids=cart_ids, book=book, rows=rows)
    counts.skipped += chunk.skipped
    counts.v2 += len(chunk.v2)
    fallback = list(chunk.fallback)
    checked: list[Checked] = []
    fresh: list[Fresh] = []
    if chunk.v2:
        checked += checked_problems(cart_ids=chunk.v2, device=device, counts=counts, v2=True)
    if chunk.n_carts:
        start = time.perf_counter()
        raw = solve_packed(chunk.batch, device=device)
        counts.device = counts.device or raw.device
        solved = raw.plan.method != TOO_LARGE
        per_line = np.repeat(solved, np.diff(chunk.batch.line_ptr))
        parts, priced = price_choice(chunk.batch, np.where(per_line, raw.choice, 0))
        wrong = np.flatnonzero(solved & (priced != raw.total))
        if wrong.size:
            raise SolverInconsistency(
                f"batch: cart {chunk.cart_ids[int(wrong[0])]} total "
                f"{int(raw.total[wrong[0]])} != priced {int(priced[wrong[0]])}"
            )
        elapsed = (time.perf_counter() - start) * 1000.0
        counts.solve_ms += elapsed
        fallback += chunk.cart_ids[~solved].tolist()
        solved_chunk = Solved(
            chunk=chunk,
            choice=raw.choice,
            parts=parts,
            priced=priced,
            method=raw.plan.method,
            device=raw.device,
            per_cart_ms=elapsed / chunk.n_carts,
        )
        one_by_one = solved
        if noticed is not None:
            one_by_one = solved & np.isin(chunk.cart_ids, np.fromiter(noticed, np.int64))
            fresh.append(_fresh(solved_chunk, solved & ~one_by_one, counts))
        checked += [
            Checked(
                cart_id=int(chunk.cart_ids[c]),
                cart_version=int(chunk.versions[c]),
                owner_id=chunk.owner(c),
                current_total=int(chunk.current[c]),
                added_total=int(chunk.added[c]),
                suggested_total=int(priced[c]),
                answer=partial(_packed_answer, solved_chunk, c),
                packed=(solved_chunk, c),
            )
            for c in np.flatnonzero(one_by_one).tolist()
        ]
    if fallback:
        checked += checked_problems(cart_ids=sorted(fallback), device=device, counts=counts)
    return ChunkChecks(checked, fresh)


def _fresh(solved: Solved, among: np.ndarray, counts: Counts) -> Fresh:
    """The carts ``among`` (a mask) over a floor, decided as ``services._notice_wanted``
    decides one cart."""
    chunk = solved.chunk
    current, added = chunk.current, chunk.added
    increase = np.maximum(0, current - added)
    improvable = among & _floors(np.maximum(0, current - solved.priced), current)
    price_up = among & _floors(increase, added)
    counts.improvable += int(improvable.sum())
    counts.price_up += int(price_up.sum())
    at = np.flatnonzero(improvable | price_up)
    return Fresh(
        solved=solved,
        carts=at,
        improvable=improvable[at],
        increase=np.where(price_up[at], increase[at], -1),
    )


# The notices' plan as stored: the batch solver has no planner's reasoning to record.
_NOTICE_PLAN_TEXT = JsonText(json.dumps(NOTICE_PLAN))


def _packed_answers(solved: Solved, carts: list[int], improvable: list[bool]) -> list[dict]:
    """The notices' answers of packed ``carts`` from the chunk's arrays, decided as
    ``_problem_answer`` decides (the cart as it stands when not ``improvable`` or nothing
    cheaper), their JSON columns as text (``notice_text.suggestions_text``)."""
    chunk = solved.chunk
    at = np.asarray(carts, np.int64)
    current = chunk.current[at]
    priced = solved.priced[at]
    kept = ~np.asarray(improvable, bool) | (priced >= current)
    texts = suggestions_text(chunk, carts=at, kept=kept, choice=solved.choice, parts=solved.parts)
    totals = np.where(kept, current, priced)
    timings = _notice_timings(solved.per_cart_ms)
    return [
        {
            "cart_version": version,
            "algorithm": METHOD_NAMES[method],
            "optimal": True,
            "device": solved.device,
            "current_total": now,
            "suggested_total": total,
            "savings": now - total,
            "suggestion": JsonText(text.suggestion),
            "plan": _NOTICE_PLAN_TEXT,
            "problem_size": JsonText(text.problem_size),
            **timings,
        }
        for version, method, now, total, text in zip(
            chunk.versions[at].tolist(),
            solved.method[at].tolist(),
            current.tolist(),
            totals.tolist(),
            texts,
            strict=True,
        )
    ]


def _packed_answer(solved: Solved, c: int, improvable: bool) -> dict:
    """One packed cart's answer as ``_problem_answer`` gives it (the JSON decoded)."""
    (fields,) = _packed_answers(solved, [c], [improvable])
    return {k: json.loads(v) if isinstance(v, JsonText) else v for k, v in fields.items()}


def notice_answers(wanted: list[tuple[Checked, bool, int | None]]) -> list[dict]:
    """The notices' run fields, in order: a packed chunk's together, other carts one by one."""
    out: list[dict | None] = [None] * len(wanted)
    packed: dict[int, tuple[Solved, list[int], list[int], list[bool]]] = {}
    for k, (cart, improvable, _) in enumerate(wanted):
        if cart.packed is None:
            out[k] = cart.answer(improvable)
            continue
        solved, c = cart.packed
        group = packed.setdefault(id(solved), (solved, [], [], []))
        group[1].append(k)
        group[2].append(c)
        group[3].append(improvable)
    for solved, at, carts, flags in packed.values():
        for k, fields in zip(at, _packed_answers(solved, carts, flags), strict=True):
            out[k] = fields
    done = [fields for fields in out if fields is not None]
    for fields, (_, _, increase) in zip(done, wanted, strict=True):
        fields["price_increase"] = increase
    return done
