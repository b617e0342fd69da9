#!/usr/bin/env bash
# Issue 4's planner on the lent GPU, one call: environment facts, calibration (this machine's
# rate profile, with the MILP's spread), then the planner suite (200 mixed carts) at 200 ms with
# that profile, at 200 ms with the same profile minus the MILP's spread (the point prediction
# alone: the previous policy, as the peer in the same run), and at 1000 ms. Each run checks its
# unproven answers against a long HiGHS reference. Logs, JSON and a table land in $OUT.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda).
# Locally (CPU, simulator): DRY_RUN=1 runs every phase at tiny sizes.
set -uo pipefail
OUT="${OUT:-/tmp/device_planner_out}"
TOTAL_S="${TOTAL_S:-575}"
RESERVE_S=8
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    PLANNER_ARGS="--planner-carts 4 --planner-workers 1 --planner-reference-s 2"
    CALIBRATE_ARGS="--quick"
    LOW=50
    HIGH=80
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    PLANNER_ARGS="--planner-reference-s 10"
    CALIBRATE_ARGS=""
    LOW=200
    HIGH=1000
fi

env_report

phase calibrate "${CALIBRATE_CAP:-80}" "$PY" -m gpu_engine.planning.calibrate \
    --out "$OUT/profile.json" $CALIBRATE_ARGS
if [ -s "$OUT/profile.json" ]; then
    export GPU_ENGINE_PROFILE="$OUT/profile.json"
    # The peer: the same rates, the MILP's point prediction alone (no quick-instance spread).
    "$PY" -c 'import json, sys
d = json.load(open(sys.argv[1]))
for law in ("milp_flat", "milp_switched"):
    d[law].pop("low_coef", None)
json.dump(d, open(sys.argv[2], "w"), indent=2)' "$OUT/profile.json" "$OUT/profile_point.json"
fi

planner() {  # planner NAME BUDGET_MS [PROFILE]
    # shellcheck disable=SC2086
    GPU_ENGINE_PROFILE="${3:-$GPU_ENGINE_PROFILE}" phase "planner_$1" "${PLANNER_CAP:-140}" \
        "$PY" -m gpu_engine bench --suite planner --planner-budget-ms "$2" \
        --planner-detail "$OUT/planner_detail_$1.json" --json "$OUT/planner_$1.json" $PLANNER_ARGS
}
planner "$LOW" "$LOW"
[ -s "$OUT/profile_point.json" ] && planner "${LOW}_point" "$LOW" "$OUT/profile_point.json"
planner "$HIGH" "$HIGH"

"$PY" - "$OUT" <<'PYEOF' 2>&1 | tee "$OUT/table.txt"
import json, pathlib, re, sys

out = pathlib.Path(sys.argv[1])
log = (out / "log.txt").read_text()
for line in log.splitlines():
    if line.startswith("=== ") and (" exit " in line or "skipped" in line):
        print(line)
print("| run | B | over 1.1xB | worst/B | p95 ms | exact fits | exact answered | missed | "
      "proofs cut | unproven (with ref) | gap % p50 / max | methods |")
for path in sorted(out.glob("planner_[0-9]*.json")):
    for row in json.loads(path.read_text()):
        if row.get("suite") == "planner" and "budget_ms" in row:
            print(f"| {path.stem} | {row['budget_ms']} | {row['over_1.1x_budget']} | "
                  f"{row['max_wall_over_budget']} | {row['p95_wall_ms']} | {row['exact_fits']} | "
                  f"{row['exact_answered']} | {row['missed_carts']} | {row['proofs_cut']} | "
                  f"{row['unproven']} ({row['unproven_with_reference']}) | "
                  f"{row['gap_pct_p50']} / {row['gap_pct_max']} | {row['methods']} |")
for path in sorted(out.glob("planner_detail_*.json")):
    for budget, records in json.loads(path.read_text())["budgets"].items():
        worst = sorted(records, key=lambda r: -r["wall_ms"])[:5]
        print(f"{path.stem} B={budget} slowest:", [(r["cart"], r["method"], round(r["wall_ms"], 1),
              (r.get("proof") or {}).get("highs_status")) for r in worst])
        proofs = [r["proof"] for r in records if (r.get("proof") or {}).get("attempted")]
        print(f"{path.stem} B={budget} proofs (left, build, elapsed ms, status):", [(round(p["left_ms"]),
              round(p["build_ms"], 1), round(p["elapsed_ms"], 1), p["highs_status"])
              for p in proofs])
PYEOF
