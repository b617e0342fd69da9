#!/usr/bin/env bash
# Issue 25 on the lent GPU host, one call: the gpu-marked engine tests, then the fuzz
# (`python -m gpu_engine fuzz`) on the host's cores, every CPU route at none/200/10 ms, and a
# smaller fuzz of the gpu-* routes on the real GPU. Logs and JSON land in $OUT.
# Run through the device tool from the repository root with carry [".whl"] (NumPy 2.4, highspy
# and numba-cuda wheels for Python 3.12: the image's NumPy 2.5 breaks numba-cuda).
# CARTS, SEED, WORKERS, GPU_CARTS, GPU_WORKERS, GPU_BUDGETS, TEST_CAP (0: no tests), FUZZ_CAP and
# GPU_FUZZ_CAP override the defaults; CARTS=0 skips the CPU routes. VERSION=2 fuzzes version 2
# carts (warehouses, weight tiers), VERSION=all both; each fuzz stops drawing carts at its cap.
set -uo pipefail
OUT="${OUT:-/tmp/device_fuzz_out}"
TOTAL_S="${TOTAL_S:-585}"
RESERVE_S=5
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH="/tmp/site:$PWD" SMARTCART_REAL_GPU=1
unset NUMBA_ENABLE_CUDASIM

env_report

if [ "${TEST_CAP:-150}" -gt 0 ]; then
    phase gpu_tests "${TEST_CAP:-150}" "$PY" -m pytest -m gpu -q -p no:cacheprovider \
        -p no:django -p no:randomly tests/gpu_engine
fi
# Fill numba's on-disk cache once, before the workers load it side by side.
phase warm 120 "$PY" -c 'from gpu_engine.warmup import warmup; print(warmup())'
CPU_ROUTES="auto,cpu-full,dp,cpu-dp,flat,milp,cpu-ga"
[ "${CARTS:-5000}" -gt 0 ] && phase fuzz_cpu "${FUZZ_CAP:-330}" "$PY" -m gpu_engine fuzz --carts "${CARTS:-5000}" \
    --seed "${SEED:-1}" --workers "${WORKERS:-14}" --routes "$CPU_ROUTES" \
    --version "${VERSION:-1}" --time-limit-s "$(( ${FUZZ_CAP:-330} - 30 ))" \
    --budgets-ms none,200,10 --progress 1000 --json "$OUT/fuzz_cpu.json" \
    --save-failures "$OUT/failures"
if [ "${GPU_CARTS:-0}" -gt 0 ]; then
    phase fuzz_gpu "${GPU_FUZZ_CAP:-200}" "$PY" -m gpu_engine fuzz --carts "$GPU_CARTS" \
        --seed "${SEED:-1}" --workers "${GPU_WORKERS:-4}" --routes auto,gpu-full,gpu-dp,gpu-ga \
        --version "${VERSION:-1}" --time-limit-s "$(( ${GPU_FUZZ_CAP:-200} - 30 ))" \
        --budgets-ms "${GPU_BUDGETS:-none,200}" --progress 500 --json "$OUT/fuzz_gpu.json"
fi
grep -h "^=== " "$LOG"
