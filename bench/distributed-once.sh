#!/usr/bin/env bash
# One distributed measurement, outside bench/run.ts, for profiling and side-by-side comparisons of
# two checkouts: a nats-server on a free port, one worker (the compiled CLI of this checkout, 2
# threads), and the coordinator of bench/scenario.ts, which prints its JSON line (cpu_ms is the
# coordinator's; others_cpu_ms is [worker, nats-server]).
#   bench/distributed-once.sh [CASES=20000] [LATENCY_MS=0] [SLOTS=64]
#   WPROF=DIR also writes the worker's --cpu-prof profiles (main thread and threads) to DIR.
# Build first (npm run build): the worker runs dist/.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}; LAT=${2:-0}; SLOTS=${3:-64}
NATS=$(command -v nats-server || echo /usr/sbin/nats-server)
PORT=$(node -e 'const s=require("net").createServer().listen(0,()=>{console.log(s.address().port);s.close()})')
STORE=$(mktemp -d)
"$NATS" -js -a 127.0.0.1 -p "$PORT" -sd "$STORE" >/dev/null 2>&1 &
NP=$!
trap 'kill $NP 2>/dev/null || true; rm -rf "$STORE"' EXIT
sleep 0.5
BENCH_CASES=$N BENCH_LATENCY_MS=$LAT node ${WPROF:+--cpu-prof --cpu-prof-dir=$WPROF --cpu-prof-interval 200} bin/evalfleet.mjs worker bench/trivial-suite.ts \
  --nats "nats://127.0.0.1:$PORT" --concurrency "$SLOTS" --threads 2 --log-level error &
WP=$!
BENCH_CASES=$N BENCH_LATENCY_MS=$LAT node --expose-gc --conditions=evalfleet-source --import tsx bench/scenario.ts \
  --mode coordinator --nats "nats://127.0.0.1:$PORT" --warmup 500 --watch-pids "$WP,$NP"
kill -INT $WP 2>/dev/null || true
wait $WP 2>/dev/null || true
