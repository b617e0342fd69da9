#!/usr/bin/env bash
# The engine re-layout's before/after timings in one device call, on one machine: each suite
# runs on the tree before the move (BEFORE, a `git archive` of that commit, carried as an
# ignored folder) and then on this tree, so their rows compare. The gpu-marked tests of this
# tree run in a second call (TEST_ONLY=1). Logs and JSON land in $OUT/{before,after}.
# Run through the device tool from the repository root with carry [".whl", ".before"]:
#   git archive <commit> | tar -x -C .before    (ignored through .git/info/exclude)
set -uo pipefail
OUT="${OUT:-/tmp/device_relayout_out}"
TOTAL_S="${TOTAL_S:-580}"
RESERVE_S=5
BEFORE="${BEFORE:-.before}"
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
export SMARTCART_REAL_GPU=1
unset NUMBA_ENABLE_CUDASIM
env_report

if [ "${TEST_ONLY:-0}" = 1 ]; then
    export PYTHONPATH="/tmp/site:$PWD"
    phase tests 560 "$PY" -m pytest -m gpu -q -p no:cacheprovider -p no:django -p no:randomly \
        tests/gpu_engine
    exit 0
fi

bench_both() {  # bench_both NAME CAP ARGS...: the suite on the before tree, then on this one
    local name=$1 cap=$2 tree label
    shift 2
    for label in before after; do
        tree=$PWD
        [ "$label" = before ] && tree=$PWD/$BEFORE
        mkdir -p "$OUT/$label"
        phase "$name-$label" "$cap" env PYTHONPATH="/tmp/site:$tree" \
            GPU_ENGINE_PROFILE="$tree/gpu_engine/planning/default_profile.json" \
            bash -c 'cd "$0" && exec "$@"' "$tree" "$PY" -m gpu_engine bench --suite "$name" "$@" \
            --json "$OUT/$label/$name.json"
    done
}

bench_both full_search 60 --full-search-no-peers
bench_both subset_dp 60 --subset-dp-no-peers
bench_both batch 90 --batch-sizes 1000000 --batch-no-cpu --batch-gpu-variants split-warp,overlap \
    --batch-loop-sample 0 --batch-check-share 0
bench_both ga 70 --ga-carts 10
grep -h "^=== " "$LOG"
