"""Settings of the smartcart app: routing, budgets and leases of optimisation runs, and the
price watch."""

import os

from storefront.config.settings.env import env_bool

# --- Smart cart ---------------------------------------------------------------------------
# A cart whose best exact CPU method is predicted within this many ms is solved in the request.
SMARTCART_INLINE_MAX_MS = float(os.environ.get("SMARTCART_INLINE_MAX_MS", "5"))
# Whether gpu-queue workers exist. Routing happens in the web process, so set this on the WEB
# hosts (SMARTCART_GPU_QUEUE=1) whenever `make worker-gpu` workers serve the gpu queue; unset,
# it falls back to whether the web process itself sees a GPU, which web hosts usually do not.
SMARTCART_GPU_QUEUE = (
    env_bool("SMARTCART_GPU_QUEUE") if os.environ.get("SMARTCART_GPU_QUEUE") else None
)
# More jobs than this waiting on the gpu queue: solve on the CPU with a budget instead of waiting.
SMARTCART_GPU_QUEUE_MAX = int(os.environ.get("SMARTCART_GPU_QUEUE_MAX", "8"))
SMARTCART_DEFAULT_BUDGET_MS = int(os.environ.get("SMARTCART_DEFAULT_BUDGET_MS", "2000"))
SMARTCART_CPU_FALLBACK_BUDGET_MS = int(os.environ.get("SMARTCART_CPU_FALLBACK_BUDGET_MS", "500"))
SMARTCART_MAX_ATTEMPTS = int(os.environ.get("SMARTCART_MAX_ATTEMPTS", "3"))
SMARTCART_REAPER_GRACE_S = int(os.environ.get("SMARTCART_REAPER_GRACE_S", "30"))
# A run no worker starts within this many seconds (of its creation, or of being queued again
# after a lapsed lease) is failed with the reason, by beat's reaper or the next poll of it; the
# cart page waits for it as long.
SMARTCART_QUEUED_MAX_S = int(os.environ.get("SMARTCART_QUEUED_MAX_S", "30"))
# Broker (Redis) down, as smartcart.routing's cached broker_state probe sees it: route_choose
# solves carts predicted within this many ms in the request; larger ones answer 503 with
# Retry-After (SMARTCART_OUTAGE_RETRY_S) before anything is written.
SMARTCART_OUTAGE_INLINE_MAX_MS = float(os.environ.get("SMARTCART_OUTAGE_INLINE_MAX_MS", "200"))
SMARTCART_OUTAGE_RETRY_S = int(os.environ.get("SMARTCART_OUTAGE_RETRY_S", "30"))
# A running run's lease (smartcart.services.lease): renewed every HEARTBEAT_S; lapsed LEASE_S
# after the last renewal (never before the run's budget is spent) -> queued once more, or failed.
SMARTCART_LEASE_S = int(os.environ.get("SMARTCART_LEASE_S", "10"))
SMARTCART_HEARTBEAT_S = float(os.environ.get("SMARTCART_HEARTBEAT_S", "2"))
# Checkout's cheaper-cart check reuses a finished run of the same cart version this young.
SMARTCART_CHECKOUT_REUSE_S = int(os.environ.get("SMARTCART_CHECKOUT_REUSE_S", "600"))
# Compile the solvers when a web or worker process starts (never inside a request).
SMARTCART_WARMUP = env_bool("SMARTCART_WARMUP", True)

# --- Price watch (smartcart.pricewatch) ------------------------------------------------------
# Re-optimise the open carts a change of offers affects, and tell their shoppers.
SMARTCART_PRICE_WATCH = env_bool("SMARTCART_PRICE_WATCH", True)
# Open carts: changed in the last this many days.
SMARTCART_PRICE_WATCH_ACTIVE_DAYS = int(os.environ.get("SMARTCART_PRICE_WATCH_ACTIVE_DAYS", "14"))
# A saving (or a rise) counts when at least this many cents AND this percent of the total.
SMARTCART_PRICE_WATCH_MIN_CENTS = int(os.environ.get("SMARTCART_PRICE_WATCH_MIN_CENTS", "100"))
SMARTCART_PRICE_WATCH_MIN_PERCENT = float(
    os.environ.get("SMARTCART_PRICE_WATCH_MIN_PERCENT", "1.0")
)
# With a broker: a burst of changes waits this long for more before one run handles it all.
SMARTCART_PRICE_WATCH_COUNTDOWN_S = float(os.environ.get("SMARTCART_PRICE_WATCH_COUNTDOWN_S", "5"))
# Carts read, solved and written per chunk (bounds memory and transaction size).
SMARTCART_PRICE_WATCH_CHUNK = int(os.environ.get("SMARTCART_PRICE_WATCH_CHUNK", "2000"))
