"""A fuzz worker: ``python -m gpu_engine.fuzz.worker``, one long-lived child of the supervisor.

It reads one JSON task a line on stdin and answers one JSON line on the protocol stream (the
stdout it was started with). File descriptor 1 is pointed at stderr first, so that nothing a
solver or HiGHS prints can corrupt the protocol. Whatever a route raises becomes an answer; what
kills the process (a segfault inside HiGHS, an abort) is the supervisor's to see and count.
"""

from __future__ import annotations

import faulthandler
import json
import math
import os
import sys
import time
import traceback
from typing import IO, Any

from gpu_engine.problem import FulfillmentUnsupported, ProblemError

TRACE_CHARS = 2000
# Version 2 brute force: also run the engine's reference (gpu_engine.reference) up to this many
# assignments, and refuse to trust either oracle where they differ.
CROSS_CHECK_ASSIGNMENTS = 2_000


def solve_task(task: dict[str, Any]) -> dict[str, Any]:
    """Run one route on one cart: ``ok`` with the answer, ``unsupported`` for a route that does
    not price version 2 carts (FulfillmentUnsupported), ``refused`` for the engine's other
    documented refusals (ProblemError and its subclasses), ``traceback`` for anything else."""
    from gpu_engine.fuzz.routes import resolve
    from gpu_engine.problem import CartProblem

    try:
        route = resolve(task["route"])
        problem = CartProblem.from_json(task["cart"])
        started = time.perf_counter()
        solution = route(problem, task["budget_ms"], task["seed"])
        wall_ms = (time.perf_counter() - started) * 1e3
        return {
            "status": "ok",
            "total": int(solution.total),
            "optimal": bool(solution.optimal),
            "assignment": {str(k): str(v) for k, v in solution.assignment.items()},
            "nodes": {str(k): str(v) for k, v in solution.nodes.items()},
            "breakdown_total": sum(int(c.cost) for c in solution.breakdown),
            "gap": None if solution.gap is None else float(solution.gap),
            "algorithm": str(solution.algorithm),
            "wall_ms": wall_ms,
        }
    except FulfillmentUnsupported as exc:
        return {"status": "unsupported", "error": f"{type(exc).__name__}: {exc}"}
    except ProblemError as exc:
        return {"status": "refused", "error": f"{type(exc).__name__}: {exc}"}
    except Exception as exc:
        return {
            "status": "traceback",
            "error": f"{type(exc).__name__}: {_short(str(exc))}",
            "traceback": traceback.format_exc()[-TRACE_CHARS:],
        }


def reference_task(task: dict[str, Any]) -> dict[str, Any]:
    """The brute-force optimum of the cart (the supervisor sends only carts small enough). A
    version 2 cart's is the fuzzer's own, checked against ``reference_brute_force_v2`` where
    that is quick: a ``mismatch`` when the two readings of the spec differ."""
    from gpu_engine.fuzz.reference import brute_force, brute_force_v2, eligible_offers, is_v2

    try:
        cart = json.loads(task["cart"])
        if not is_v2(cart):
            optimum, assignment = brute_force(cart)
            return {"status": "ok", "optimum": optimum, "assignment": assignment}
        optimum, picks = brute_force_v2(cart)
        if math.prod(len(p) for p in eligible_offers(cart).values()) <= CROSS_CHECK_ASSIGNMENTS:
            from gpu_engine.reference import reference_brute_force_v2

            theirs, _ = reference_brute_force_v2(cart)
            if theirs != optimum:
                error = f"fuzz brute force {optimum} != reference_brute_force_v2 {theirs}"
                return {"status": "mismatch", "error": error}
    except Exception as exc:
        return {"status": "traceback", "error": f"{type(exc).__name__}: {_short(str(exc))}"}
    return {
        "status": "ok",
        "optimum": optimum,
        "assignment": {line: m for line, (m, _) in picks.items()},
        "nodes": {line: n for line, (_, n) in picks.items()},
    }


def _short(text: str) -> str:
    return text if len(text) <= 300 else text[:300] + "..."


def _protocol_stream() -> IO[str]:
    """The stdout we were started with, as the protocol stream; fd 1 then goes to stderr."""
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def main() -> int:
    faulthandler.enable()  # a crash leaves the Python stack in the worker's log
    out = _protocol_stream()
    from gpu_engine.device import gpu_available
    from gpu_engine.warmup import warm_before_budget, warmup

    warmup(include_gpu=gpu_available())
    warm_before_budget("auto", allow_gpu=gpu_available())  # the planner's modules, HiGHS's process
    out.write(json.dumps({"ready": True, "pid": os.getpid()}) + "\n")
    for line in sys.stdin:
        task = json.loads(line)
        handler = reference_task if task["kind"] == "reference" else solve_task
        reply = handler(task)
        reply["id"] = task["id"]
        out.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
