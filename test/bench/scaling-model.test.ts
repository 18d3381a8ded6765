import { test } from "node:test";
import assert from "node:assert/strict";
import { scalingModel } from "../../bench/scaling-model.ts";

const costs = { coordinatorMs: 0.05, workerMs: 0.2, brokerMs: 0.1 };

test("100,000 cases of 5 s within an hour: 139 in flight, one machine of 500 slots, tiny coordinator and broker load", () => {
  const p = scalingModel(costs, { cases: 100_000, caseSeconds: 5, withinSeconds: 3600, slotsPerMachine: 500, coresPerMachine: 2 });
  assert.ok(Math.abs(p.casesPerSecond - 27.78) < 0.01);
  assert.ok(Math.abs(p.inFlight - 138.9) < 0.1);
  assert.equal(p.workerMachines, 1);
  assert.ok(Math.abs(p.coordinatorCores - 0.00139) < 1e-5);
  assert.equal(p.coordinatorLimitPerCore, 20_000);
  assert.equal(p.brokerLimitPerCore, 10_000);
});

test("machines follow the slots, or the agents' CPU when that is larger", () => {
  const bySlots = scalingModel(costs, { cases: 100_000, caseSeconds: 60, withinSeconds: 3600, slotsPerMachine: 500, coresPerMachine: 2 });
  assert.equal(bySlots.workerMachines, 4); // 1,667 in flight / 500
  const byCpu = scalingModel(costs, { cases: 100_000, caseSeconds: 5, withinSeconds: 3600, slotsPerMachine: 500, coresPerMachine: 2, agentCpuMs: 500 });
  assert.equal(byCpu.workerMachines, 7); // 27.8 cases/s x 0.5002 s of CPU = 13.9 cores
});

test("nonsense is refused with the field named", () => {
  assert.throws(() => scalingModel({ ...costs, workerMs: Number.NaN }, { cases: 1, caseSeconds: 1, withinSeconds: 1, slotsPerMachine: 1, coresPerMachine: 1 }), /workerMs/);
  assert.throws(() => scalingModel(costs, { cases: 1, caseSeconds: 1, withinSeconds: 0, slotsPerMachine: 1, coresPerMachine: 1 }), /withinSeconds/);
});
