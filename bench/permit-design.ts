// Why the fleet's provider permits come from the coordinator over request/reply rather than from
// a token bucket kept in a KV bucket with compare-and-set (docs/providers.md). Both designs grant
// the same permits; this measures what one permit costs with `CLIENTS` requesters at once on a real
// nats-server: the round trips per permit, the CAS conflicts, and the latency.
//
//   node --import tsx bench/permit-design.ts
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { startNatsServer } from "../integration/harness/nats-server.ts";

const CLIENTS = 30;
const PERMITS = 3000;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))]!;
}

const server = await startNatsServer();
try {
  // Request/reply: one responder (the coordinator) grants from its in-memory state.
  const coordinator = await connect({ servers: server.url });
  let granted = 0;
  coordinator.subscribe("bench.permit", {
    callback: (_err, msg) => {
      granted++;
      msg.respond(String(granted));
    },
  });
  const clients = await Promise.all(Array.from({ length: CLIENTS }, () => connect({ servers: server.url })));
  const rr: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async (nc) => {
      while (next++ < PERMITS) {
        const t = performance.now();
        await nc.request("bench.permit", "", { timeout: 10_000 });
        rr.push(performance.now() - t);
      }
    }),
  );
  const rrSeconds = (performance.now() - t0) / 1000;

  // KV compare-and-set: each permit reads the bucket's state and writes it back at that revision;
  // a conflict (another client wrote first) reads and tries again.
  const kv = await new Kvm(jetstream(coordinator)).create("BENCH_PERMITS", { history: 1 });
  await kv.put("bucket", JSON.stringify({ granted: 0 }));
  const kvs = await Promise.all(clients.map((nc) => new Kvm(jetstream(nc)).open("BENCH_PERMITS")));
  const cas: number[] = [];
  let conflicts = 0;
  let roundTrips = 0;
  next = 0;
  const t1 = performance.now();
  await Promise.all(
    kvs.map(async (b) => {
      while (next++ < PERMITS) {
        const t = performance.now();
        for (;;) {
          const e = await b.get("bucket");
          roundTrips++;
          const state = JSON.parse(e!.string()) as { granted: number };
          try {
            roundTrips++;
            await b.update("bucket", JSON.stringify({ granted: state.granted + 1 }), e!.revision);
            break;
          } catch {
            conflicts++;
          }
        }
        cas.push(performance.now() - t);
      }
    }),
  );
  const casSeconds = (performance.now() - t1) / 1000;
  console.log(
    JSON.stringify({
      clients: CLIENTS,
      permits: PERMITS,
      request_reply: { permits_per_s: Math.round(PERMITS / rrSeconds), round_trips_per_permit: 1, p50_ms: +percentile(rr, 50).toFixed(2), p99_ms: +percentile(rr, 99).toFixed(2) },
      kv_cas: { permits_per_s: Math.round(PERMITS / casSeconds), round_trips_per_permit: +(roundTrips / PERMITS).toFixed(2), conflicts_per_permit: +(conflicts / PERMITS).toFixed(2), p50_ms: +percentile(cas, 50).toFixed(2), p99_ms: +percentile(cas, 99).toFixed(2) },
    }),
  );
  for (const c of clients) await c.close();
  await coordinator.close();
} finally {
  await server.stop();
}
process.exit(0);
