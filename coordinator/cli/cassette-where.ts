import { resolve as resolvePath } from "node:path";
import { EvalfleetError, ErrorCode } from "../../shared/errors.ts";
import { FLEET_CASSETTES } from "../../shared/cassette/cassette.ts";

/**
 * Where `--record` / `--replay` keep cassettes: a folder (absolute) in a local run; in a distributed
 * run the fleet's bucket, `nats`, the one place every worker reaches (a folder of the coordinator's
 * machine is on no worker's). {@link FLEET_CASSETTES} stands for the bucket.
 */
export function cassetteWhere(value: string, flag: string, distributed: boolean): string {
  if (distributed) {
    if (value.trim() === FLEET_CASSETTES) return FLEET_CASSETTES;
    throw new EvalfleetError(ErrorCode.Usage, `${flag} must be nats in a distributed run (the fleet's EVALFLEET_CASSETTES bucket, which every worker reaches), got '${value}'`, { field: flag.slice(2), value });
  }
  if (value.trim() === FLEET_CASSETTES) {
    throw new EvalfleetError(ErrorCode.Usage, `${flag} nats keeps cassettes in the fleet's bucket, which needs a distributed run (evalfleet coordinator run); for a folder named nats write ./nats`, { field: flag.slice(2), value });
  }
  if (value.trim() === "") throw new EvalfleetError(ErrorCode.Usage, `${flag} must be a folder, got ''`, { field: flag.slice(2), value });
  return resolvePath(value);
}
