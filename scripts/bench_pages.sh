#!/usr/bin/env bash
# Load benchmark of the shop's pages and catalog API (issue 18). Not a test: it prints a table.
#
#   apt-get install -y wrk          # Debian's wrk 4.x (the load tool)
#   DATABASE_URL=postgres://postgres@127.0.0.1:5432/pagespeed \
#   REDIS_URL=redis://127.0.0.1:6379/10 bash scripts/bench_pages.sh [cached|uncached|both]
#
# It migrates and seeds the demo catalog when the database is empty, runs collectstatic, starts
# gunicorn (WORKERS x THREADS, gthread) on loopback with production settings (DEBUG off), then
# drives each path with wrk: CONNECTIONS connections, DURATION each, after a short warm-up.
# "cached" serves with the shared page cache on (the default): wrk's requests carry no cookie or
# token, so after the first request per URL and process they are answered by the page-cache
# middleware (storefront/caching/middleware.py: one Redis MGET, no session/auth middleware, no
# view), while the cart API's requests (a token) go through the whole stack. "uncached" starts
# the server with PAGE_CACHE=0, which renders every fragment and API list on each request (the
# same code path a cache miss takes; the shopper-independent cache is neither read nor written).
# PAGE_CACHE_TTL (600 s) outlives a run: entries are replaced only when a write bumps them.
# Environment: PORT (8018), WORKERS (2), THREADS (4), CONNECTIONS (16), DURATION (15s),
# SEARCH (speaker), PYTHON (/work/main/.venv/bin/python, else .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."

MODE=${1:-both}
PORT=${PORT:-8018}
WORKERS=${WORKERS:-2}
THREADS=${THREADS:-4}
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-15s}
SEARCH=${SEARCH:-speaker}
if [[ -z ${PYTHON:-} ]]; then
    if [[ -x .venv/bin/python ]]; then PYTHON=.venv/bin/python; else PYTHON=/work/main/.venv/bin/python; fi
fi
: "${DATABASE_URL:?set DATABASE_URL to a PostgreSQL database}"
: "${REDIS_URL:?set REDIS_URL (e.g. redis://127.0.0.1:6379/10)}"
command -v wrk >/dev/null || { echo "wrk not found: apt-get install -y wrk" >&2; exit 2; }

export DATABASE_URL REDIS_URL
export SECRET_KEY=${SECRET_KEY:-bench-only-not-secret-$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}
export ALLOWED_HOSTS=127.0.0.1 SECURE_SSL_REDIRECT=0 LOG_LEVEL=WARNING
unset DEBUG

"$PYTHON" manage.py migrate --noinput >/dev/null
if "$PYTHON" manage.py seed_demo --if-empty >/dev/null 2>&1; then :; fi
"$PYTHON" manage.py recompute_cheapest --all >/dev/null
# What autovacuum does to a freshly seeded catalog soon after, done now: the planner's
# statistics (until then a search's merchant facet ran 13 ms instead of 3) and the visibility
# map (until then the home page's merchant count scanned the offers' heap, 16 ms, instead of
# the partial index alone, 4 ms).
"$PYTHON" manage.py shell -c "from django.db import connection; connection.cursor().execute('VACUUM ANALYZE')" >/dev/null 2>&1
"$PYTHON" manage.py collectstatic --noinput >/dev/null

# The shopper's token, the product with the most offers, a search word that finds products.
read -r TOKEN PRODUCT OFFERS < <("$PYTHON" manage.py shell -c "
from django.contrib.auth import get_user_model
from django.db.models import Count, Q
from rest_framework.authtoken.models import Token
from storefront.models import Product
user = get_user_model().objects.get(username='demo')
token, _ = Token.objects.get_or_create(user=user)
p = Product.objects.annotate(n=Count('offers', filter=Q(offers__active=True))).order_by('-n', 'id').first()
print(token.key, p.slug, p.n)
" 2>/dev/null | tail -1)

SERVER_PID=""
stop_server() {
    if [[ -n $SERVER_PID ]]; then kill "$SERVER_PID" 2>/dev/null || true; wait "$SERVER_PID" 2>/dev/null || true; fi
    SERVER_PID=""
}
trap stop_server EXIT

start_server() {  # $1: PAGE_CACHE value
    PAGE_CACHE=$1 "$PYTHON" -m gunicorn storefront.config.wsgi:application \
        --bind "127.0.0.1:$PORT" --workers "$WORKERS" --threads "$THREADS" \
        --worker-class gthread --log-level warning &
    SERVER_PID=$!
    for _ in $(seq 1 240); do
        if curl -fsS -o /dev/null "http://127.0.0.1:$PORT/products/$PRODUCT/"; then return 0; fi
        sleep 0.5
    done
    echo "server did not come up" >&2
    exit 1
}

URL=http://127.0.0.1:$PORT
run_path() {  # $1 label, $2 path, then extra wrk args
    local label=$1 path=$2
    shift 2
    wrk -t2 -c"$CONNECTIONS" -d2s "$@" "$URL$path" >/dev/null  # warm-up
    wrk -t2 -c"$CONNECTIONS" -d"$DURATION" --latency "$@" "$URL$path" | awk -v label="$label" '
        /Requests\/sec/ { rps = $2 }
        /^ +50%/ { p50 = $2 }
        /^ +99%/ { p99 = $2 }
        /Non-2xx or 3xx/ { non2xx = $NF }
        /Socket errors/ { split($0, a, /[ ,]+/); for (i in a) if (a[i] ~ /^[0-9]+$/) sock += a[i] }
        END { printf "| %s | %s | %s | %s | %d |\n", label, rps, p50, p99, non2xx + sock }'
}

bench() {  # $1 cached|uncached
    local page_cache=1
    [[ $1 == uncached ]] && page_cache=0
    start_server "$page_cache"
    echo
    echo "### $1 (PAGE_CACHE=$page_cache), $WORKERS workers x $THREADS threads, $CONNECTIONS connections, $DURATION each, $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
    echo "| path | requests/s | p50 | p99 | errors |"
    echo "|---|---|---|---|---|"
    run_path "static file \`/static/web/shop.css\`" /static/web/shop.css
    run_path "\`GET /api/v1/categories/\`" /api/v1/categories/
    run_path "\`GET /api/v1/cart/\` (token)" /api/v1/cart/ -H "Authorization: Token $TOKEN"
    run_path "\`GET /api/v1/products/?search=$SEARCH\`" "/api/v1/products/?search=$SEARCH"
    run_path "product page ($OFFERS offers)" "/products/$PRODUCT/"
    run_path "home page" /
    stop_server
}

case $MODE in
    cached) bench cached ;;
    uncached) bench uncached ;;
    both) bench uncached; bench cached ;;
    *) echo "usage: $0 [cached|uncached|both]" >&2; exit 2 ;;
esac
