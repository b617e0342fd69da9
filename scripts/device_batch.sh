#!/usr/bin/env bash
# gpu_engine batch solver's device batch (issue 14), one call: environment facts; (a) the
# gpu-marked batch tests (kernel == CPU twin on 20k synthetic carts, sample == per-cart DP);
# (b) `bench --suite batch` at 100k carts, then (c) at 1M carts: GPU batch vs the CPU twin on
# all cores vs the per-cart planner loop (sample, extrapolated), 1% checked against the
# per-cart exact DP. Each phase gets what is left of TOTAL_S, capped by its own limit, so a slow
# phase cannot cost the rest their results. Logs and JSON land in $OUT; a table is printed last.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda), as for
# scripts/device_final.sh. Locally (CPU, simulator) every phase runs at tiny sizes with DRY_RUN=1.
set -uo pipefail
OUT="${OUT:-/tmp/device_batch_out}"
TOTAL_S="${TOTAL_S:-560}"
RESERVE_S=10
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    SIZES=(2000 5000)
    BENCH_ARGS="--batch-loop-sample 20 --batch-repeats 1"
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    SIZES=(100000 1000000)
    BENCH_ARGS="${BENCH_ARGS:-}"
fi
env_report

# (a) The batch solver's gpu-marked tests (skipped, not failed, in a dry run without a GPU).
phase tests "${TEST_CAP:-150}" "$PY" -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine/batch
# (b), (c) One phase per size so a slow 1M run cannot lose the 100k results; the 1M CPU twin
# runs once (its repeats would cost the GPU's budget), the 1% check is capped at 10k carts.
for size in "${SIZES[@]}"; do
    # shellcheck disable=SC2086
    phase "bench_$size" "${BENCH_CAP:-240}" "$PY" -m gpu_engine bench --suite batch \
        --batch-sizes "$size" --json "$OUT/batch_$size.json" $BENCH_ARGS
done

"$PY" - "$OUT" <<'PYEOF' 2>&1 | tee "$OUT/table.txt"
import json, pathlib, re, sys

out = pathlib.Path(sys.argv[1])
log = (out / "log.txt").read_text()
for line in log.splitlines():
    if line.startswith("=== ") and (" exit " in line or "skipped" in line):
        print(line)
tests = re.findall(r"^(?:=+ )?[0-9]+ (?:passed|failed|skipped|error).* in [0-9.]+s.*$", log, re.M)
print("pytest -m gpu:", tests[0] if tests else "no summary line")
def phases(row):
    keys = ("plan_ms", "copy_in_ms", "kernel_ms", "copy_out_ms", "solve_ms", "pack_ms",
            "solve_batch_api_ms")
    return ", ".join(f"{k[:-3]} {row[k]}" for k in keys if k in row) or row.get("note", "")
print("| carts | solver | device | engine ms | carts/s | x CPU twin | full/dp/too large | phases ms |")
for path in sorted(out.glob("batch_*.json")):
    for row in json.loads(path.read_text()):
        if "engine_ms" in row:
            split = f"{row.get('full', '')}/{row.get('dp', '')}/{row.get('too_large', '')}"
            print(f"| {row['case']} | {row['solver']} | {row['device']} | {row['engine_ms']} | "
                  f"{row.get('carts_per_s', '')} | {row.get('speedup_vs_cpu_twin', '')} | "
                  f"{split} | {phases(row)} |")
        elif "checked" in row:
            print(f"| {row['case']} | {row['solver']} | {row['device']} | checked "
                  f"{row['checked']}, agree {row['agree']} ({row['check_s']} s) | | | | |")
        elif "error" in row:
            print(f"| {row.get('case', '')} | error | {row['error']} | | | | | |")
PYEOF
