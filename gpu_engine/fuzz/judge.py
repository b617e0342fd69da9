"""Judging one cart's runs: what the optimum is, and what each route did wrong.

The optimum comes from the brute force (:mod:`gpu_engine.fuzz.reference`) on small carts, or
from a full search and a subset DP (run without a budget) proving the same total. Besides it,
every answer that re-prices is a feasible total, so the cheapest of them bounds the optimum from
above whatever the cart's size: a route that claims a proof above it proved wrong. Re-pricing is
always the fuzzer's own pricing, never the engine's; a version 2 answer (each line's merchant and
node) is also re-priced by ``gpu_engine.reference.reference_cost_v2``, and the two readings of
the spec must agree (``oracle_mismatch`` otherwise). A route that refuses a cart every route
must take (one node a merchant, no tiers) as FulfillmentUnsupported is a ``bad_refusal``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gpu_engine.fuzz.carts import FuzzCart
from gpu_engine.fuzz.reference import InvalidAssignment, cart_total, cart_total_v2, is_simple, is_v2
from gpu_engine.fuzz.routes import EXACT_FAMILIES
from gpu_engine.fuzz.supervisor import Outcome

# Defects: any of these fails the run.
FAILURES = (
    "crash",
    "traceback",
    "wrong_proof",
    "below_optimum",
    "bad_price",
    "wrong_gap",
    "bad_refusal",
    "oracle_mismatch",
)
# The brute force's name in findings.
ORACLE = "brute force"
# A gap is a float: the bound it implies is trusted to this share of the total (plus a cent).
GAP_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Oracle:
    """``optimum`` (None: unknown) and where it came from (brute, exact, none); ``upper``: the
    cheapest re-priced total of any run (or the optimum), and who found it."""

    optimum: int | None
    source: str
    upper: int | None
    upper_by: str


@dataclass
class Verdict:
    """One run judged: ``flags`` holds its failures (:data:`FAILURES`, and ``hang``) and facts
    (``proved``, ``at_optimum``, ``suboptimal``, ``over_budget``)."""

    route: str
    budget_ms: float | None
    status: str
    flags: list[str] = field(default_factory=list)
    wall_ratio: float | None = None
    details: dict[str, str] = field(default_factory=dict)

    def flag(self, name: str, detail: str = "") -> None:
        self.flags.append(name)
        if detail:
            self.details[name] = detail


@dataclass(frozen=True)
class Finding:
    """A failure to report: enough to re-run it (the cart's key) and to read what happened."""

    cart: str
    shape: str
    route: str
    budget_ms: float | None
    kind: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "cart": self.cart,
            "shape": self.shape,
            "route": self.route,
            "budget_ms": self.budget_ms,
            "kind": self.kind,
            "detail": self.detail,
        }


def _reprice(cart: FuzzCart, data: dict[str, Any]) -> tuple[int | None, str, str]:
    """(re-priced total, why the answer is no assignment, how the oracles disagree)."""
    if cart.cart is None:
        return None, "", ""
    try:
        if not is_v2(cart.cart):
            return cart_total(cart.cart, data["assignment"]), "", ""
        ours = cart_total_v2(cart.cart, data["assignment"], data.get("nodes") or {})
    except InvalidAssignment as exc:
        return None, f"invalid assignment: {exc}", ""
    from gpu_engine.reference import reference_cost_v2

    picks = {line: (m, data["nodes"][line]) for line, m in data["assignment"].items()}
    theirs = reference_cost_v2(cart.cart, picks)
    if theirs != ours:
        return ours, "", f"fuzz pricing {ours} != reference_cost_v2 {theirs}"
    return ours, "", ""


def _exact_optimum(runs: list[Outcome], priced: dict[int, int | None]) -> int | None:
    """The one total that exact routes of two families (full search, subset DP, MILP), all
    unbudgeted, prove alike."""
    proven: dict[str, set[int]] = {family: set() for family in EXACT_FAMILIES}
    for run in runs:
        task, data = run.task, run.data
        if run.status != "ok" or task.budget_ms is not None or not data["optimal"]:
            continue
        if priced.get(task.id) != data["total"]:
            continue
        for family, routes in EXACT_FAMILIES.items():
            if task.route in routes:
                proven[family].add(data["total"])
    values = [v for family in proven.values() for v in family]
    agreed = {v for v in values if values.count(v) >= 2}
    return min(agreed) if len(agreed) == 1 else None


def oracle_for(
    cart: FuzzCart, reference: Outcome | None, runs: list[Outcome], priced: dict[int, int | None]
) -> Oracle:
    upper, upper_by = None, ""
    for run in runs:
        value = priced.get(run.task.id)
        if value is not None and (upper is None or value < upper):
            upper, upper_by = value, run.task.route
    if reference is not None and reference.status == "ok":
        optimum = int(reference.data["optimum"])
        if upper is None or optimum <= upper:
            upper, upper_by = optimum, "brute force"
        return Oracle(optimum, "brute", upper, upper_by)
    exact = _exact_optimum(runs, priced)
    if exact is not None and (upper is None or exact <= upper):
        return Oracle(exact, "exact", upper, upper_by)
    return Oracle(None, "none", upper, upper_by)


def judge_cart(
    cart: FuzzCart, reference: Outcome | None, runs: list[Outcome]
) -> tuple[Oracle, list[Verdict], list[Finding]]:
    """Judge every run of ``cart`` (``reference``: the brute force's outcome, if it ran)."""
    priced: dict[int, int | None] = {}
    invalid: dict[int, str] = {}
    mismatch: dict[int, str] = {}
    for run in runs:
        if run.status == "ok":
            priced[run.task.id], why, disagree = _reprice(cart, run.data)
            if why:
                invalid[run.task.id] = why
            if disagree:
                mismatch[run.task.id] = disagree
    oracle = oracle_for(cart, reference, runs, priced)
    simple = cart.cart is not None and _simple(cart.cart)
    verdicts, findings = [], []
    for run in runs:
        verdict = _judge_run(run, oracle, priced.get(run.task.id), invalid.get(run.task.id))
        if run.task.id in mismatch:
            verdict.flag("oracle_mismatch", mismatch[run.task.id])
        if run.status == "unsupported" and simple:
            verdict.flag("bad_refusal", f"a cart every route takes: {run.data.get('error')}")
        verdicts.append(verdict)
        for kind in verdict.flags:
            if kind in FAILURES or kind == "hang":
                findings.append(
                    Finding(
                        cart.key,
                        cart.shape,
                        run.task.route,
                        run.task.budget_ms,
                        kind,
                        verdict.details.get(kind, ""),
                    )
                )
    if reference is not None and reference.status != "ok":
        err = reference.data.get("error", "")
        kind = "oracle_mismatch" if reference.status == "mismatch" else reference.status
        findings.append(Finding(cart.key, cart.shape, ORACLE, None, kind, str(err)))
    return oracle, verdicts, findings


def _simple(cart: dict[str, Any]) -> bool:
    try:
        return is_simple(cart)
    except (KeyError, TypeError, AttributeError):  # not a cart this process can read
        return False


def _judge_run(run: Outcome, oracle: Oracle, priced: int | None, invalid: str | None) -> Verdict:
    task, data = run.task, run.data
    verdict = Verdict(task.route, task.budget_ms, run.status)
    if run.status in ("crash", "traceback", "hang"):
        detail = str(data.get("error", f"no answer in {data.get('timeout_s')} s"))
        if data.get("log"):
            detail += "\n" + str(data["log"]).strip()[-600:]
        elif data.get("traceback"):
            detail += "\n" + str(data["traceback"]).strip()[-600:]
        verdict.flag(run.status, detail)
        return verdict
    if run.status != "ok":
        if run.status in ("refused", "unsupported"):  # the reason, less the value it names
            verdict.details["refusal"] = str(data.get("error", "")).split(" (got ", 1)[0][:160]
        return verdict
    total, optimum = int(data["total"]), oracle.optimum
    if task.budget_ms is not None:
        verdict.wall_ratio = float(data["wall_ms"]) / task.budget_ms
        if verdict.wall_ratio > 1.0:
            verdict.flags.append("over_budget")
    if invalid:
        verdict.flag("bad_price", invalid)
    elif priced is not None and priced != total:
        verdict.flag("bad_price", f"total {total} but its assignment prices at {priced}")
    elif int(data["breakdown_total"]) != total:
        verdict.flag(
            "bad_price", f"total {total} but its breakdown sums to {data['breakdown_total']}"
        )
    if data["optimal"]:
        verdict.flags.append("proved")
        if optimum is not None and total != optimum:
            verdict.flag("wrong_proof", f"proved {total}, optimum {optimum} ({oracle.source})")
        elif oracle.upper is not None and total > oracle.upper:
            verdict.flag(
                "wrong_proof", f"proved {total}, but {oracle.upper_by} found {oracle.upper}"
            )
    if optimum is None:
        return verdict
    if total < optimum or (priced is not None and priced < optimum):
        verdict.flag(
            "below_optimum",
            f"total {total} (re-priced {priced}) < optimum {optimum} ({oracle.source})",
        )
    elif total == optimum:
        verdict.flags.append("at_optimum")
    elif not data["optimal"]:
        verdict.flags.append("suboptimal")
        gap = data.get("gap")
        if gap is not None and total * (1 - gap) > optimum + 1 + GAP_TOLERANCE * total:
            verdict.flag(
                "wrong_gap",
                f"total {total} with gap {gap!r} claims a bound above the optimum {optimum}",
            )
    return verdict
