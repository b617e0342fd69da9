#!/usr/bin/env bash
# gpu_engine batch solver's device batch (issue 14), one call: environment facts; (a) the
# gpu-marked batch tests (kernel == CPU twin on 20k synthetic carts for every GPU variant,
# sample == per-cart DP); (b) `bench --suite batch` at 1M carts, split-warp (pinned narrow
# copies, heavy carts first on bigger blocks) and overlap (the same launches chunk by chunk,
# each chunk's copy in on its own stream behind the previous chunk's kernels) side by side,
# each compared with the CPU twin on all cores, vs the per-cart planner loop (sample,
# extrapolated), 1% checked against the per-cart exact DP; (c) at 100k carts (baseline,
# split-warp, overlap); then (d), if time remains, the other variants at 1M (baseline:
# pageable int64 copies, one range launch; pinned: pinned narrow copies; split/split256).
# Rows carry per-array bytes and copy timings (in_<array>_mb/cast/call/copy ms).
# Each phase gets what is left of TOTAL_S, capped by its own limit, so a slow phase
# cannot cost the rest their results. Logs and JSON land in $OUT; a table is printed last.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda), as for
# scripts/device_final.sh. Locally (CPU, simulator) every phase runs at tiny sizes with DRY_RUN=1.
set -uo pipefail
OUT="${OUT:-/tmp/device_batch_out}"
TOTAL_S="${TOTAL_S:-530}"
RESERVE_S=10
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    SIZES=(5000 2000)
    BENCH_ARGS="--batch-loop-sample 20 --batch-repeats 1"
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    SIZES=(1000000 100000)
    BENCH_ARGS="${BENCH_ARGS:-}"
fi
VARIANTS_100K="${VARIANTS_100K:-baseline,split-warp,overlap}"
VARIANTS_1M="${VARIANTS_1M:-split-warp,overlap}"
VARIANTS_1M_REST="${VARIANTS_1M_REST:-baseline,pinned,split,split256}"
env_report

# (a) The batch solver's gpu-marked tests (skipped, not failed, in a dry run without a GPU).
phase tests "${TEST_CAP:-130}" "$PY" -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine/batch
# (b), (c) One phase per size, 1M first (the one the target is about); the 1M CPU twin
# runs once (its repeats would cost the GPU's budget), the 1% check is capped at 10k carts.
for size in "${SIZES[@]}"; do
    variants=$VARIANTS_100K
    [ "$size" = "${SIZES[0]}" ] && variants=$VARIANTS_1M
    # shellcheck disable=SC2086
    phase "bench_$size" "${BENCH_CAP:-200}" "$PY" -m gpu_engine bench --suite batch \
        --batch-sizes "$size" --batch-gpu-variants "$variants" \
        --json "$OUT/batch_$size.json" $BENCH_ARGS
done
# (d) The other variants at 1M with what is left (a smaller check: (b) checked this batch).
# shellcheck disable=SC2086
phase "bench_${SIZES[0]}_rest" "${REST_CAP:-200}" "$PY" -m gpu_engine bench --suite batch \
    --batch-sizes "${SIZES[0]}" --batch-gpu-variants "$VARIANTS_1M_REST" \
    --batch-check-max 1000 --batch-loop-sample 50 \
    --json "$OUT/batch_${SIZES[0]}_rest.json" $BENCH_ARGS

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
            "solve_batch_api_ms", "setup_ms", "cast_ms", "plan_wait_ms", "enqueue_ms",
            "drain_ms", "gpu_ms", "inputs_on_device_ms")
    text = ", ".join(f"{k[:-3]} {row[k]}" for k in keys if k in row) or row.get("note", "")
    if "chunks" in row:
        text += f", chunks {row['chunks']}"
    extra = [f"{k} {v}" for k, v in row.items() if k.startswith("tier_") or k.endswith(("_regs", "_local_bytes"))]
    arrays = {}  # in_<array>_<what>: one "array MB/cast/call/copy" entry per array
    for k, v in row.items():
        m = re.match(r"in_(.+)_(mb|cast_ms|call_ms|copy_ms)$", k)
        if m:
            arrays.setdefault(m[1], {})[m[2].split("_")[0]] = v
    if arrays:
        extra.append("in: " + ", ".join(
            f"{a} " + "/".join(str(w.get(x, "-")) for x in ("mb", "cast", "call", "copy"))
            for a, w in arrays.items()) + " (MB/cast/call/copy ms)")
    if "same_totals_as_cpu" in row:
        same = row["same_totals_as_cpu"] and row["same_choices_as_cpu"]
        extra.insert(0, "answers == CPU twin" if same else "ANSWERS DIFFER FROM THE CPU TWIN")
    return "; ".join([text, *extra])
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
            print(f"| {row.get('case', '')} | {row.get('solver', 'error')} | ERROR {row['error']} | | | | | |")
PYEOF
