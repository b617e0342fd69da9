"""The planner's tuned constants, one line each. Why each has its value, and the benchmarks
behind it, is in BENCHMARKS.md ("Planner constants: history").

The planning modules read them as ``tuning.NAME`` when they run, so that a benchmark's A/B or a
test can change one for a run."""

# The budget of a solve that names none (ms).
DEFAULT_BUDGET_MS = 2000.0
# Share of the budget an uninterruptible exact method (the subset DPs) may be predicted to take.
UNINTERRUPTIBLE_SHARE = 0.8
# The GA's share of the budget on the anytime routes.
GA_SHARE = 0.5
# The GPU GA's share stops growing at this budget (ms): past it the time goes to the proof.
GPU_GA_SHARE_UNTIL_MS = 400.0
# HiGHS first: the GA's time after HiGHS stops growing at this budget (ms).
HIGHS_FIRST_GA_UNTIL_MS = 1000.0
# The GA takes the whole budget unless the rest gives HiGHS this many times its floor.
GA_FLOOR_FACTOR = 2.0
# The LP bound after the GA (where HiGHS's MILP is not started) needs at least this long (ms).
MIN_LP_MS = 5.0
# The GPU GA runs only while the predicted wait for the GPU is at most this share of the budget.
GPU_GA_MAX_WAIT_SHARE = 0.25
# HiGHS's proof floor: at least this long (ms) ...
MIN_PROOF_MS = 20.0
# ... and this many times HiGHS's predicted time on a flat cart of the same size.
PROOF_FLOOR_FACTOR = 2.0
# Beyond this many free lines the subset DPs are not even estimated.
MAX_DP_FREE_LINES = 40
# The large-neighbourhood step after a CPU GA gets this share of the budget ...
LNS_SHARE = 0.5
# ... and at most this long (ms).
LNS_MAX_MS = 250.0
# The step runs on carts of at least this many lines ...
LNS_MIN_LINES = 30
# ... and at most this many (line, merchant) pairs.
LNS_MAX_PAIRS = 5000
# Below this many ms the LP and one neighbourhood cannot both run.
LNS_MIN_MS = 15.0
# The step ends this many ms before the budget does (a cut HiGHS run winds down after it).
LNS_FINISH_MS = 5.0
# HiGHS first runs both of the cart's formulations side by side on windows this long (ms).
PORTFOLIO_MIN_MS = 2000.0
# The GA's restarts run only on at least this much of the budget (ms).
MIN_REST_MS = 10.0
