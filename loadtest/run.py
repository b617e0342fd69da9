"""Steps each load scenario through user counts against a running stack and reports, per
scenario, the highest sustained requests/s whose p95 stays within the target with 0 errors.

    python loadtest/run.py --host http://127.0.0.1:8000 [--users 4,8,16,32] [--step-s 30]

Every step is one headless locust run (``--run-time``, it stops by itself), so the whole run
is bounded: scenarios x steps x step time. Results: a markdown table on stdout and the
locust CSVs under ``loadtest/results/``.
"""

import argparse
import csv
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIOS = ("Shopper", "Trivial")


@dataclass
class Step:
    scenario: str
    users: int
    requests: int
    failures: int
    rps: float
    p50_ms: float
    p95_ms: float


def run_step(*, host: str, scenario: str, users: int, step_s: int) -> Step:
    prefix = HERE / "results" / f"{scenario.lower()}-{users}"
    prefix.parent.mkdir(exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "locust",
            "-f",
            str(HERE / "locustfile.py"),
            "--headless",
            "--host",
            host,
            "--users",
            str(users),
            "--spawn-rate",
            str(users),
            "--run-time",
            f"{step_s}s",
            "--stop-timeout",
            "5",
            "--csv",
            str(prefix),
            "--only-summary",
            "--loglevel",
            "WARNING",
            scenario,
        ],
        check=False,
        timeout=step_s + 60,
        capture_output=True,
    )
    with open(f"{prefix}_stats.csv", newline="") as stats:
        total = next(row for row in csv.DictReader(stats) if row["Name"] == "Aggregated")
    return Step(
        scenario=scenario,
        users=users,
        requests=int(total["Request Count"]),
        failures=int(total["Failure Count"]),
        rps=float(total["Requests/s"]),
        p50_ms=float(total["50%"]),
        p95_ms=float(total["95%"]),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="http://127.0.0.1:8000")
    parser.add_argument("--users", default="4,8,16,32")
    parser.add_argument("--step-s", type=int, default=30)
    parser.add_argument("--p95-ms", type=float, default=300.0)
    args = parser.parse_args()
    users = [int(n) for n in args.users.split(",")]
    steps = [
        run_step(host=args.host, scenario=scenario, users=n, step_s=args.step_s)
        for scenario in SCENARIOS
        for n in users
    ]
    print("| scenario | users | requests | failures | req/s | p50 ms | p95 ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for s in steps:
        print(
            f"| {s.scenario} | {s.users} | {s.requests} | {s.failures} | {s.rps:.1f} | "
            f"{s.p50_ms:.0f} | {s.p95_ms:.0f} |"
        )
    best = {}
    for scenario in SCENARIOS:
        ok = [
            s
            for s in steps
            if s.scenario == scenario and s.failures == 0 and s.p95_ms <= args.p95_ms
        ]
        best[scenario] = max((s.rps for s in ok), default=0.0)
        print(f"\n{scenario}: {best[scenario]:.1f} req/s sustained at p95 <= {args.p95_ms:g} ms")
    if best["Trivial"]:
        print(f"ratio Shopper/Trivial: {best['Shopper'] / best['Trivial']:.3f}")


if __name__ == "__main__":
    main()
