import { currentCaseScope } from "../runtime/case-scope.ts";

/**
 * The `fetch` the built-in model clients hand their HTTP library (the `openai` client's `fetch`
 * option): the running case's cassette when it records or replays (`--record`, `--replay`), else
 * the global `fetch`. Read per call from the case's scope, since one client serves many cases.
 */
export const caseFetch = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const cassette = currentCaseScope()?.cassette;
  return cassette ? cassette.fetch((i, o) => fetch(i, o))(input, init) : fetch(input, init);
};
