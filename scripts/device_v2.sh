#!/usr/bin/env bash
# Pricing contract v2 on the device, one call: environment facts; (a) every gpu-marked test of
# tests/gpu_engine (v1 and v2 kernels); (b) v2_exact: 20x10x60 v2 carts by the GPU DP against
# one-thread HiGHS and CP-SAT; (c) v2_anytime: 50-200 line v2 carts at 200/1000 ms on the GPU
# and CPU routes against a long HiGHS reference. Run through the device tool with carry
# [".whl"]; the command starts with the wheel install and PYTHONPATH export. DRY_RUN=1 runs
# every phase at tiny sizes locally.
set -uo pipefail
OUT="${OUT:-/tmp/device_v2_out}"
TOTAL_S="${TOTAL_S:-560}"
RESERVE_S=10
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    EXACT_ARGS="--v2-exact-shape 10x3x12 --v2-exact-carts 1 --v2-exact-repeats 1"
    ANYTIME_ARGS="--v2-anytime-lines 50 --v2-anytime-seeds 0 --v2-anytime-reference-s 5"
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    EXACT_ARGS="${EXACT_ARGS:---v2-exact-carts 5 --v2-exact-repeats 3 --v2-exact-peer-limit-s 60}"
    ANYTIME_ARGS="${ANYTIME_ARGS:---v2-anytime-reference-s 20}"
fi
env_report
"$PY" -c 'import ortools; print("ortools", ortools.__version__)' || echo "no ortools"

phase tests "${TEST_CAP:-200}" "$PY" -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine
phase v2_exact "${EXACT_CAP:-150}" "$PY" -m gpu_engine bench --suite v2_exact $EXACT_ARGS \
    --json "$OUT/v2_exact.json"
phase v2_anytime "${ANYTIME_CAP:-300}" "$PY" -m gpu_engine bench --suite v2_anytime \
    $ANYTIME_ARGS --json "$OUT/v2_anytime.json"
