/**
 * The scaling model of issue 6: from the CPU each layer spends per case (measured by the bench),
 * how many worker machines a suite needs to finish in time, and at what rate the coordinator or
 * the broker would run out of a core. Pure arithmetic, so the projection in bench/README.md can be
 * recomputed from any bench run.
 */

/** CPU per case of each layer, in ms (from `bench/results.json`). */
export interface LayerCosts {
  coordinatorMs: number;
  /** Runner overhead on the worker side (main thread and threads), without the agent's own work. */
  workerMs: number;
  brokerMs: number;
}

/** The suite to plan for. */
export interface SuiteShape {
  cases: number;
  /** Wall time of one case (mostly model latency), in seconds. */
  caseSeconds: number;
  /** Deadline for the whole suite, in seconds. */
  withinSeconds: number;
  /** Cases one worker machine keeps in flight (`--concurrency`). */
  slotsPerMachine: number;
  coresPerMachine: number;
  /** CPU the agent and its checks spend per case on the worker, in ms. Default 0 (I/O-bound). */
  agentCpuMs?: number;
}

/** What the model projects. */
export interface ScalingProjection {
  /** Cases per second the suite must sustain. */
  casesPerSecond: number;
  /** Cases in flight that rate needs (Little's law). */
  inFlight: number;
  /** Worker machines: enough slots for `inFlight`, and enough cores for runner plus agent CPU. */
  workerMachines: number;
  /** Cores the coordinator, the broker and the workers' runner overhead use at that rate. */
  coordinatorCores: number;
  brokerCores: number;
  workerOverheadCores: number;
  /** Rates at which the coordinator and the broker would each fill one core, in cases/s. */
  coordinatorLimitPerCore: number;
  brokerLimitPerCore: number;
}

export function scalingModel(costs: LayerCosts, shape: SuiteShape): ScalingProjection {
  for (const [k, v] of Object.entries({ ...costs, ...shape })) {
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`scalingModel: ${k} must be a finite number >= 0, got ${v}`);
  }
  if (shape.withinSeconds <= 0 || shape.slotsPerMachine <= 0 || shape.coresPerMachine <= 0) {
    throw new RangeError("scalingModel: withinSeconds, slotsPerMachine and coresPerMachine must be > 0");
  }
  const rate = shape.cases / shape.withinSeconds;
  const inFlight = rate * shape.caseSeconds;
  const workerCpuCores = (rate * (costs.workerMs + (shape.agentCpuMs ?? 0))) / 1000;
  return {
    casesPerSecond: rate,
    inFlight,
    workerMachines: Math.max(1, Math.ceil(inFlight / shape.slotsPerMachine), Math.ceil(workerCpuCores / shape.coresPerMachine)),
    coordinatorCores: (rate * costs.coordinatorMs) / 1000,
    brokerCores: (rate * costs.brokerMs) / 1000,
    workerOverheadCores: (rate * costs.workerMs) / 1000,
    coordinatorLimitPerCore: costs.coordinatorMs > 0 ? 1000 / costs.coordinatorMs : Infinity,
    brokerLimitPerCore: costs.brokerMs > 0 ? 1000 / costs.brokerMs : Infinity,
  };
}
