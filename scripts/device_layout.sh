#!/usr/bin/env bash
# Issue 11's device batch (the gpu_engine rooms move), one call: environment facts, every
# gpu-marked test of tests/gpu_engine (kernels vs their CPU twins, the shared reduction and the
# full-search walk on the real device), then the engine benchmarks whose before/after rows go
# into BENCHMARKS.md: full_search (with the kernel variants), subset_dp and ga, with HiGHS and
# CP-SAT in the same run. Run it once on the commit before the move and once after.
# Each phase gets what is left of TOTAL_S (minus a reserve for the summary), capped by its own
# limit. Logs and JSON land in $OUT.
# Run through the device tool from the repository root with carry [".whl"]; the command starts
# with the wheel install and PYTHONPATH export (the image's NumPy 2.5 breaks numba-cuda).
# Locally (CPU, simulator) every phase runs at tiny sizes with DRY_RUN=1.
set -uo pipefail
OUT="${OUT:-/tmp/device_layout_out}"
TOTAL_S="${TOTAL_S:-570}"
RESERVE_S=10
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"

if [ "${DRY_RUN:-0}" = 1 ]; then
    FULL_ARGS="--full-search-shape 4x3x4 --full-search-repeats 1 --full-search-no-peers"
    DP_ARGS="--subset-dp-shape 5x3x6 --subset-dp-carts 1 --subset-dp-repeats 1 --subset-dp-no-peers"
    GA_ARGS="--ga-sizes 6 --ga-carts 2 --ga-workers 1 --ga-cpu-budget-ms 50 --ga-gpu-budget-ms 50"
    export NUMBA_ENABLE_CUDASIM=1
else
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
    FULL_ARGS="--full-search-variants"
    DP_ARGS=""
    # 30 carts a size (not 100) so the GA suite fits one call next to the others; the before
    # and after runs use the same script, so their rows compare.
    GA_ARGS="--ga-carts 30"
fi
env_report

# Every gpu-marked engine test (skipped, not failed, in a dry run without a GPU).
phase tests "${TEST_CAP:-160}" "$PY" -m pytest -m gpu -q -p no:cacheprovider -p no:django \
    tests/gpu_engine
# One suite a phase, each with its own JSON, so a slow suite cannot cost the others their rows.
# shellcheck disable=SC2086
phase full_search "${FULL_CAP:-110}" "$PY" -m gpu_engine bench --suite full_search $FULL_ARGS \
    ${BENCH_ARGS:-} --json "$OUT/full_search.json"
# shellcheck disable=SC2086
phase subset_dp "${DP_CAP:-100}" "$PY" -m gpu_engine bench --suite subset_dp $DP_ARGS \
    ${BENCH_ARGS:-} --json "$OUT/subset_dp.json"
# shellcheck disable=SC2086
phase ga "${GA_CAP:-190}" "$PY" -m gpu_engine bench --suite ga $GA_ARGS ${BENCH_ARGS:-} \
    --json "$OUT/ga.json"
grep "^=== .* exit" "$LOG"
