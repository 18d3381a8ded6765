// The HTTP endpoint in-process (shared/process/health-server.ts): routes, status codes, HEAD. The metrics it
// serves are tested in test/worker/metrics.test.ts; process-level behaviour is in
// integration/deploy-*.test.ts.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EvalfleetError, ErrorCode } from "../../../shared/errors.ts";
import { HealthServer, type HealthCheck } from "../../../shared/process/health-server.ts";

test("the health endpoint: liveness, readiness, metrics, extra routes, 404, 405, HEAD", async () => {
  let readiness: HealthCheck = { ok: false, detail: "starting: connecting to NATS" };
  const server = new HealthServer({
    port: 0,
    host: "127.0.0.1",
    live: () => ({ ok: true, detail: "running" }),
    ready: () => readiness,
    metrics: async () => ({ contentType: "text/plain; version=0.0.4; charset=utf-8", body: "x_total 1\n" }),
    routes: { "/queue": async () => ({ status: 200, body: { lag: 3 } }), "/broken": async () => Promise.reject(new Error("nope")) },
  });
  const { port } = await server.start();
  const get = async (path: string, method = "GET") => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
  };
  try {
    assert.deepEqual(await get("/healthz"), { status: 200, type: "application/json", text: '{"status":"ok","detail":"running"}' });
    assert.deepEqual(await get("/readyz"), { status: 503, type: "application/json", text: '{"status":"unavailable","detail":"starting: connecting to NATS"}' });
    readiness = { ok: true, detail: "running" };
    assert.equal((await get("/readyz?verbose")).status, 200, "query strings are ignored");
    assert.deepEqual(await get("/metrics"), { status: 200, type: "text/plain; version=0.0.4; charset=utf-8", text: "x_total 1\n" });
    assert.deepEqual(await get("/queue"), { status: 200, type: "application/json", text: '{"lag":3}' });
    assert.deepEqual(await get("/broken"), { status: 500, type: "application/json", text: '{"error":"nope"}' });
    assert.equal((await get("/nope")).status, 404);
    assert.equal((await get("/healthz", "POST")).status, 405);
    const head = await get("/healthz", "HEAD");
    assert.deepEqual([head.status, head.text], [200, ""]);

    // A port in use is a clear usage error naming it.
    const clash = new HealthServer({ port, host: "127.0.0.1", live: () => readiness, ready: () => readiness });
    await assert.rejects(clash.start(), (err: unknown) => err instanceof EvalfleetError && err.code === ErrorCode.Usage && err.message === `cannot serve health and metrics on 127.0.0.1:${port}: the port is in use`);
  } finally {
    await server.close();
  }
  await assert.rejects(fetch(`http://127.0.0.1:${port}/healthz`), "closed");
});
