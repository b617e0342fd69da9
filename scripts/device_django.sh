#!/usr/bin/env bash
# The Django side on the lent GPU (issues 5 and 7), one call. Real parts: Redis (Debian's
# redis-server, carried as .debs), Celery workers (one `gpu` queue worker, --pool=solo, on the
# GPU; one `cpu` worker), SQLite in a file (PostgreSQL cannot be carried; every process shares
# the file). Phases:
#   (a) every gpu-marked test of the whole suite (Django tests included);
#   (c) the stored cheapest offers of the fresh demo catalog computed by the gpu worker (the
#       Celery task on the gpu queue, STOREFRONT_CHEAPEST_DEVICE=gpu), then
#       `recompute_cheapest --all` on the CPU must change nothing; the command timed on both;
#   (b) improve-cart jobs as the planner routes them with the gpu queue served
#       (SMARTCART_GPU_QUEUE=1): `bench_optimize --series auto` through the real broker to the
#       workers, with each series' routes (route/algorithm) and round trips;
#   (d) `bench_cart_pricing` (zone resolution for many carts through the radix-tree index), the
#       index built on the CPU twin, then on the GPU (STOREFRONT_ZONE_INDEX_DEVICE).
# Run through the device tool from the repository root with carry [".whl-dj"] (the wheels of
# numpy 2.4, highspy and the Django stack, plus .whl-dj/deb/*.deb); the command starts with
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
#       --target /tmp/site .whl-dj/*.whl && export PYTHONPATH=/tmp/site:$PWD || exit 1;
set -uo pipefail
OUT="${OUT:-/tmp/device_django_out}"
TOTAL_S="${TOTAL_S:-560}"
RESERVE_S=15
# shellcheck source=scripts/device_common.sh
source "$(dirname "$0")/device_common.sh"
REDIS_PORT="${REDIS_PORT:-6379}"
if [ "${DRY_RUN:-0}" = 1 ]; then  # locally: the plumbing only, on the CPU
    DEVICE=cpu
    export NUMBA_ENABLE_CUDASIM=1
else
    DEVICE=gpu
    export SMARTCART_REAL_GPU=1
    unset NUMBA_ENABLE_CUDASIM
fi
env_report

# (a) Test settings use their own SQLite database; no broker (tasks run in-process).
phase tests "${TEST_CAP:-150}" env -u DATABASE_URL -u REDIS_URL "$PY" -m pytest -m gpu -q \
    -p no:cacheprovider tests

carried_redis_start "$REDIS_PORT"

rm -f /tmp/smartcart-device.sqlite3
export DATABASE_URL=sqlite:////tmp/smartcart-device.sqlite3 REDIS_URL=redis://127.0.0.1:$REDIS_PORT/0
export SECRET_KEY=device-run ALLOWED_HOSTS=localhost,127.0.0.1,testserver DEBUG=0
export SMARTCART_GPU_QUEUE=1 STOREFRONT_CHEAPEST_QUEUE=gpu STOREFRONT_CHEAPEST_DEVICE=$DEVICE
# shellcheck disable=SC2016
# No recompute here: the gpu worker stores every product's cheapest offer first, in (c).
phase setup 90 bash -c '"$0" manage.py migrate --noinput -v0 && "$0" manage.py seed_demo \
    --if-empty' "$PY"

CELERY=("$PY" -m celery -A storefront worker --prefetch-multiplier=1 --without-gossip
    --without-mingle --loglevel=INFO)
"${CELERY[@]}" -Q gpu --pool=solo --concurrency=1 -n gpu0@%h >"$OUT/worker_gpu.log" 2>&1 &
GPU_WORKER=$!
env STOREFRONT_CHEAPEST_DEVICE=cpu "${CELERY[@]}" -Q cpu --pool=prefork --concurrency=2 \
    -n cpu@%h >"$OUT/worker_cpu.log" 2>&1 &
CPU_WORKER=$!
trap 'kill $GPU_WORKER $CPU_WORKER 2>/dev/null; wait; \
    /tmp/redis/usr/bin/redis-cli -p $REDIS_PORT shutdown nosave >/dev/null 2>&1' EXIT
for _ in $(seq 120); do
    grep -q "ready." "$OUT/worker_gpu.log" && grep -q "ready." "$OUT/worker_cpu.log" && break
    sleep 0.5
done
grep -h "ready\.\|warm" "$OUT"/worker_*.log | tee -a "$LOG"

# (c) The catalog recompute as a task on the gpu worker, then a CPU pass that must change nothing.
stored() { "$PY" manage.py shell -c '
from storefront.models import ProductCheapest
print("stored cheapest rows:", ProductCheapest.objects.count())' 2>&1 | tail -1 | tee -a "$LOG"; }
stored
phase cheapest_gpu_task 60 "$PY" manage.py shell -c '
from storefront.catalog.tasks import catalog_cheapest_recompute_task as task
task.apply_async(kwargs={"all_products": True}, queue="gpu")
print("sent to the gpu queue")
'
for _ in $(seq 60); do
    grep -q "catalog_cheapest_recompute.*succeeded" "$OUT/worker_gpu.log" && break
    sleep 0.5
done
grep -h "catalog_cheapest_recompute\|storefront.catalog.cheapest" "$OUT/worker_gpu.log" | tee -a "$LOG"
stored
for device in $DEVICE cpu $DEVICE cpu; do
    phase "cheapest_command_$device" 60 env STOREFRONT_CHEAPEST_DEVICE=$device \
        "$PY" manage.py recompute_cheapest --all
done

# (b) Demo carts of several sizes, as the planner routes them with the gpu queue served.
for lines in ${BENCH_LINES:-12 25 40}; do
    phase "optimize_auto_$lines" "${BENCH_CAP:-70}" "$PY" manage.py bench_optimize \
        --series auto --lines "$lines" --runs "${BENCH_RUNS:-30}" --warmup 3 \
        --json "$OUT/optimize_auto_$lines.json"
done
"$PY" - "$OUT" <<'PYEOF' 2>&1 | tee -a "$LOG"
import json, pathlib, sys
for path in sorted(pathlib.Path(sys.argv[1]).glob("optimize_auto_*.json")):
    for series in json.loads(path.read_text())["series"]:
        stats = series["stats_ms"]
        print(series["name"], "runs", series["runs"], "failures", len(series["failures"]),
              "routes", series["routes"], "round_trip p50/p95 ms",
              [round(stats["round_trip"][k], 1) for k in ("p50", "p95")] if "round_trip" in stats
              else stats)
PYEOF

# (d) Zone resolution for many carts (the radix-tree index), built on the CPU twin and on the GPU.
for device in cpu $DEVICE; do
    # shellcheck disable=SC2086
    phase "cart_pricing_$device" "${PRICING_CAP:-100}" env STOREFRONT_ZONE_INDEX_DEVICE=$device \
        "$PY" manage.py bench_cart_pricing --create-missing ${PRICING_ARGS:---carts 1000 --repeat 2}
done
grep -h "succeeded in\|ERROR\|Traceback" "$OUT"/worker_*.log | sort | uniq -c | sort -rn \
    | head -20 | tee -a "$LOG"
