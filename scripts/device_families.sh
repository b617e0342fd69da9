#!/usr/bin/env bash
# Issue 13's instance families on the lent GPU, one call: environment facts, calibration (this
# machine's rate profile), then the `families` suite on the GPU path at 200 and 1000 ms (gap to a
# proven HiGHS optimum p50/p95/max, proven share, wall / budget, monotone in the budget, and the
# fixed-fee family's planner median against plain one-thread HiGHS in the same run), and, when
# time is left, the same suite on the host's CPU path (--families-cpu) as the peer. Logs, JSON
# and a table land in $OUT. GPU targets: every family up to 200 lines at the optimum at 200 ms,
# >= 80% proven at 1000 ms.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda).
# Locally (CPU, simulator): DRY_RUN=1 runs every phase at tiny sizes.
set -uo pipefail
OUT="${OUT:-/tmp/device_families_out}"
TOTAL_S="${TOTAL_S:-575}"
RESERVE_S=8
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    FAMILIES_ARGS="--families-lines 12 --families-carts 1 --families-reference-s 5"
    CALIBRATE_ARGS="--quick"
    BUDGETS="50,150"
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    FAMILIES_ARGS="${FAMILIES_ARGS:---families-lines 50,200 --families-carts 4 --families-reference-s 20}"
    CALIBRATE_ARGS=""
    BUDGETS="200,1000"
fi

env_report

phase calibrate "${CALIBRATE_CAP:-80}" "$PY" -m gpu_engine.planning.calibrate \
    --out "$OUT/profile.json" $CALIBRATE_ARGS
[ -s "$OUT/profile.json" ] && export GPU_ENGINE_PROFILE="$OUT/profile.json"

families() {  # families NAME CAP_S [EXTRA...]
    local name=$1 cap=$2
    shift 2
    # shellcheck disable=SC2086
    phase "families_$name" "$cap" "$PY" -m gpu_engine bench --suite families \
        --families-budget-ms "$BUDGETS" --families-detail "$OUT/families_detail_$name.json" \
        --json "$OUT/families_$name.json" $FAMILIES_ARGS "$@"
}
families gpu "${GPU_CAP:-300}"
families cpu "${CPU_CAP:-180}" --families-cpu

"$PY" - "$OUT" <<'PYEOF' 2>&1 | tee "$OUT/table.txt"
import json, pathlib, sys

out = pathlib.Path(sys.argv[1])
for line in (out / "log.txt").read_text().splitlines():
    if line.startswith("=== ") and (" exit " in line or "skipped" in line):
        print(line)
print("| path | family | B ms | carts (ref) | gap % p50 / p95 / max | at opt | proven | "
      "wall/B p50 / max | worse than smaller B | load | planner vs HiGHS-1t median ms | routes |")
for path in sorted(out.glob("families_[cg]*.json")):
    for r in json.loads(path.read_text()):
        if r.get("suite") != "families":
            continue
        highs = (f"{r['planner_median_ms']} vs {r['highs_1thread_median_ms']}"
                 if "planner_median_ms" in r else "")
        print(f"| {path.stem.split('_')[1]} | {r['case']} | {r['budget_ms']:.0f} | {r['carts']} "
              f"({r['with_proven_ref']}) | {r['gap_pct_p50']} / {r['gap_pct_p95']} / "
              f"{r['gap_pct_max']} | {r['at_optimum']} | {r['proven_share']} | "
              f"{r['wall_over_budget_p50']} / {r['wall_over_budget_max']} | "
              f"{r.get('worse_than_smaller_budget', '')} | {r['load1_mean']} | {highs} | "
              f"{r['routes']} |")
PYEOF
