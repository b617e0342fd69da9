"""Counting verdicts per route and budget, and printing them (a table, findings, JSON)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from gpu_engine.fuzz.judge import FAILURES, ORACLE, Finding, Oracle, Verdict

STATUSES = ("ok", "unsupported", "refused", "skipped", "crash", "traceback", "hang")
COLUMNS = (
    "runs",
    "ok",
    "unsupported",
    "refused",
    "skipped",
    "crash",
    "traceback",
    "hang",
    "wrong_proof",
    "below_optimum",
    "bad_price",
    "wrong_gap",
    "bad_refusal",
    "oracle_mismatch",
    "proved",
    "at_optimum",
    "suboptimal",
    "over_budget",
)


def budget_label(budget_ms: float | None) -> str:
    return "none" if budget_ms is None else f"{budget_ms:g}ms"


@dataclass
class Tally:
    """Running counts of a fuzz run, cart by cart."""

    counts: dict[tuple[str, float | None], Counter] = field(default_factory=dict)
    max_ratio: dict[tuple[str, float | None], float] = field(default_factory=dict)
    max_ratio_cart: dict[tuple[str, float | None], str] = field(default_factory=dict)
    oracles: Counter = field(default_factory=Counter)
    shapes: Counter = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    # (route, reason) -> refusals: the engine's clean answers "no", by why.
    refusals: Counter = field(default_factory=Counter)
    carts: int = 0

    def add_cart(
        self,
        cart: str,
        shape: str,
        oracle: Oracle,
        verdicts: list[Verdict],
        findings: list[Finding],
    ) -> None:
        self.carts += 1
        self.shapes[shape] += 1
        self.oracles[oracle.source] += 1
        self.findings.extend(findings)
        for v in verdicts:
            self.add(v, cart)

    def add(self, verdict: Verdict, cart: str = "") -> None:
        key = (verdict.route, verdict.budget_ms)
        counter = self.counts.setdefault(key, Counter())
        counter["runs"] += 1
        counter[verdict.status] += 1
        counter.update(f for f in verdict.flags if f not in STATUSES)
        if "refusal" in verdict.details:
            self.refusals[(verdict.route, verdict.details["refusal"])] += 1
        ratio = verdict.wall_ratio
        if ratio is not None and ratio > self.max_ratio.get(key, 0.0):
            self.max_ratio[key] = ratio
            self.max_ratio_cart[key] = cart

    def failures(self) -> int:
        """Defects of the routes, and of the brute force (a traceback, or its two readings of
        the spec disagreeing), which counts against no route."""
        oracle = sum(1 for f in self.findings if f.route == ORACLE and f.kind in FAILURES)
        return sum(c[f] for c in self.counts.values() for f in FAILURES) + oracle

    def rows(self, routes: list[str], budgets: list[float | None]) -> list[dict[str, Any]]:
        order = {r: i for i, r in enumerate(routes)}
        border = {b: i for i, b in enumerate(budgets)}
        keys = sorted(
            self.counts, key=lambda k: (order.get(k[0], len(order)), border.get(k[1], 99), k)
        )
        rows = []
        for route, budget in keys:
            counter = self.counts[(route, budget)]
            row: dict[str, Any] = {"route": route, "budget": budget_label(budget)}
            row.update({c: counter[c] for c in COLUMNS})
            ratio = self.max_ratio.get((route, budget))
            row["max_wall_ratio"] = None if ratio is None else round(ratio, 3)
            row["max_wall_cart"] = self.max_ratio_cart.get((route, budget))
            rows.append(row)
        return rows


def format_table(rows: list[dict[str, Any]]) -> str:
    """Aligned columns; zero counts shown as ``.`` so the defects stand out."""
    if not rows:
        return "(no runs)"
    columns = list(rows[0])
    cells = [[_cell(row.get(c)) for c in columns] for row in rows]
    heads = [_head(c) for c in columns]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(heads)]
    lines = ["  ".join(h.rjust(w) for h, w in zip(heads, widths, strict=True))]
    lines.extend("  ".join(v.rjust(w) for v, w in zip(r, widths, strict=True)) for r in cells)
    return "\n".join(lines)


_SHORT = {
    "traceback": "trace",
    "unsupported": "unsup",
    "bad_refusal": "bad_refuse",
    "oracle_mismatch": "oracle_mis",
    "wrong_proof": "wrong_pf",
    "below_optimum": "below_opt",
    "suboptimal": "subopt",
    "over_budget": "over_bud",
    "max_wall_ratio": "max_wall/bud",
}


def _head(column: str) -> str:
    return _SHORT.get(column, column)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if value == 0 and not isinstance(value, str):
        return "."
    return str(value)


def _where(kind: str, detail: str) -> str:
    """The frame a crash or traceback happened in: faulthandler lists the innermost first, a
    Python traceback last."""
    frames = [line.strip() for line in detail.splitlines() if line.strip().startswith("File ")]
    if not frames:
        return ""
    return frames[0] if kind == "crash" else frames[-1]


def format_findings(findings: list[Finding], limit: int, reproduce: str) -> str:
    """Findings grouped by cart, kind and first line (the routes and budgets listed), the
    first ``limit`` groups, with the frame it happened in and how to re-run the cart."""
    groups: dict[tuple[str, str, str, str], list[str]] = {}
    where: dict[tuple[str, str, str, str], str] = {}
    for f in findings:
        headline = f.detail.strip().split("\n", 1)[0]
        key = (f.cart, f.shape, f.kind, headline)
        groups.setdefault(key, []).append(f"{f.route}@{budget_label(f.budget_ms)}")
        where.setdefault(key, _where(f.kind, f.detail))
    lines = []
    for key in list(groups)[:limit]:
        cart, shape, kind, headline = key
        lines.append(f"- {kind}: cart {cart} ({shape}): {', '.join(groups[key])}")
        lines.append(f"      {headline}")
        if where[key]:
            lines.append(f"      at {where[key]}")
        seed, _, index = cart.partition(":")
        if index and seed.lstrip("-").isdigit():
            # Naming the cart's shape alone draws the same cart (carts.fuzz_cart).
            rerun = f"--shapes {shape} --seed {seed} --first {index} --carts 1"
            lines.append(f"      re-run: {reproduce} {rerun}")
    if len(groups) > limit:
        lines.append(f"... and {len(groups) - limit} more (--json has them all)")
    return "\n".join(lines)
