#!/usr/bin/env bash
# Issue 4 on the lent GPU, one batch: environment facts, the gpu-marked GA tests (kernels vs
# their CPU twin at full size, GPU GA vs brute force), calibration (the planner's rate profile
# for this machine), the GA quality benchmark against HiGHS on the same carts in the same run,
# and the planner benchmark using the profile just measured. Logs and JSON land in $OUT.
# Run through the device tool from the repository root with carry [".whl"].
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-/tmp/device_ga_out}"
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" PYTHONUNBUFFERED=1 SMARTCART_REAL_GPU=1
unset NUMBA_ENABLE_CUDASIM
LOG="$OUT/log.txt"

{
    date -u +%Y-%m-%dT%H:%M:%SZ
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
    python3 -c 'import sys, numpy, numba, numba_cuda, highspy; print(sys.version.split()[0], "numpy", numpy.__version__, "numba", numba.__version__, "numba-cuda", numba_cuda.__version__)'
    echo "cpus: $(nproc) $(lscpu | sed -n 's/^Model name: *//p')"
} 2>&1 | tee "$OUT/env.txt"

phase() {  # phase NAME TIMEOUT CMD...: run, log, and report the exit code and seconds
    local name=$1 limit=$2 t0=$SECONDS
    shift 2
    echo "=== $name" | tee -a "$LOG"
    timeout "$limit" "$@" 2>&1 | tee -a "$LOG"
    echo "=== $name exit ${PIPESTATUS[0]} after $((SECONDS - t0)) s" | tee -a "$LOG"
}

phase tests "${TEST_TIMEOUT:-90}" python3 -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine/solvers/ga/test_ga_cuda.py
phase calibrate "${CAL_TIMEOUT:-60}" python3 -m gpu_engine.planning.calibrate \
    --out "$OUT/profile.json"
if [ -s "$OUT/profile.json" ]; then export GPU_ENGINE_PROFILE="$OUT/profile.json"; fi
# shellcheck disable=SC2086
phase ga "${GA_TIMEOUT:-170}" python3 -m gpu_engine bench --suite ga --ga-sweep \
    --ga-detail "$OUT/ga_detail.json" --json "$OUT/ga.json" ${GA_ARGS:-}
# shellcheck disable=SC2086
phase planner "${PLANNER_TIMEOUT:-210}" python3 -m gpu_engine bench --suite planner \
    --planner-budget-ms "${PLANNER_BUDGETS:-200,1000}" \
    --planner-detail "$OUT/planner_detail.json" --json "$OUT/planner.json" ${PLANNER_ARGS:-}
grep "^=== .* exit" "$LOG"
