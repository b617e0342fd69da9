#!/usr/bin/env bash
# gpu_engine's final device batch (issues 3, 4, 7), one call: environment facts; (a) every
# gpu-marked test of tests/gpu_engine; (b) the catalog suite's cheapest-offer rows, with the
# "x3 in one launch" confirmation rows and the torch/CuPy peers of the same run, then the radix
# rows if time is left; (c) the planner suite at 200 and 1000 ms with the packaged profile, to
# measure the proof-floor/one-thread change made after the last planner run.
# Each phase gets what is left of TOTAL_S (minus a reserve for the table), capped by its own
# limit, so one slow phase cannot cost the rest their results. Logs and JSON land in $OUT.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda).
# Locally (CPU, simulator) every phase runs at tiny sizes with DRY_RUN=1.
set -uo pipefail
OUT="${OUT:-/tmp/device_final_out}"
TOTAL_S="${TOTAL_S:-535}"
RESERVE_S=10
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    CATALOG_ARGS="--catalog-products 64 --catalog-offers 32 --catalog-keys 256 \
--catalog-queries 1024 --catalog-repeats 1 --catalog-batch 1"
    PLANNER_ARGS="--planner-carts 3 --planner-workers 1"
    BUDGETS="50,80"
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    CATALOG_ARGS=""
    PLANNER_ARGS=""
    BUDGETS="200,1000"
fi

cupy_torch_versions() {
    "$PY" -c 'import cupy, torch; print("cupy", cupy.__version__, "torch", torch.__version__)' \
        || echo "no cupy/torch"
}
env_report cupy_torch_versions

# (a) Every gpu-marked test (skipped, not failed, in a dry run without a GPU).
phase tests "${TEST_CAP:-210}" "$PY" -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine
# (b) Cheapest offer first (the 3.4 TB/s confirmation), then the radix tree if time is left.
# shellcheck disable=SC2086
phase catalog_cheapest "${CHEAPEST_CAP:-100}" "$PY" -m gpu_engine.bench.catalog \
    --catalog-part cheapest --json "$OUT/catalog_cheapest.json" $CATALOG_ARGS
# (c) The planner on 200 mixed carts at each budget, packaged profile; one phase per budget so
# a slow second one cannot lose the first's results.
for budget in ${BUDGETS//,/ }; do
    # shellcheck disable=SC2086
    phase "planner_$budget" "${PLANNER_CAP:-150}" "$PY" -m gpu_engine bench --suite planner \
        --planner-budget-ms "$budget" --planner-detail "$OUT/planner_detail_$budget.json" \
        --json "$OUT/planner_$budget.json" $PLANNER_ARGS
done
# shellcheck disable=SC2086
phase catalog_radix "${RADIX_CAP:-90}" "$PY" -m gpu_engine.bench.catalog \
    --catalog-part radix --json "$OUT/catalog_radix.json" $CATALOG_ARGS

"$PY" - "$OUT" <<'EOF' 2>&1 | tee "$OUT/table.txt"
import json, pathlib, re, sys

out = pathlib.Path(sys.argv[1])
log = (out / "log.txt").read_text()
for line in log.splitlines():
    if line.startswith("=== ") and (" exit " in line or "skipped" in line):
        print(line)
tests = re.findall(r"^(?:=+ )?[0-9]+ (?:passed|failed|skipped|error).* in [0-9.]+s.*$", log, re.M)
print("pytest -m gpu:", tests[0] if tests else "no summary line")
def rows(name):
    path = out / name
    return json.loads(path.read_text()) if path.is_file() else []
print("| catalog case | ms | TB/s | lookups/s |")
for row in rows("catalog_cheapest.json") + rows("catalog_radix.json"):
    if "ms" in row or "note" in row:
        print(f"| {row.get('case')} | {row.get('ms', '')} | {row.get('tb_per_s', '')} | "
              f"{row.get('lookups_per_s', '')} {row.get('note', '') if 'ms' not in row else ''} |")
print("| planner B | over 1.1xB | worst/B | p95 ms | exact fits | exact answered | methods |")
for row in [r for p in sorted(out.glob("planner_[0-9]*.json")) for r in rows(p.name)]:
    if row.get("suite") == "planner" and "budget_ms" in row:
        print(f"| {row['budget_ms']} | {row['over_1.1x_budget']} | {row['max_wall_over_budget']} "
              f"| {row['p95_wall_ms']} | {row['exact_fits']} | {row['exact_answered']} "
              f"| {row['methods']} |")
EOF
