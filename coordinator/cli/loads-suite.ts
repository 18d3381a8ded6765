/**
 * Whether a command line runs a command that loads a suite file in this process (`run`, `list`,
 * `regrade`, `worker`, `queue-metrics`, `coordinator run|resume`), and is not asking for help.
 * Pure: looks at the words only, before commander parses them (see coordinator/main.ts).
 */
export function loadsSuite(argv: readonly string[]): boolean {
  if (argv.some((a) => a === "--help" || a === "-h" || a === "--version")) return false;
  const [command, sub] = argv;
  if (command === "coordinator") return sub === "run" || sub === "resume";
  return command === "run" || command === "list" || command === "regrade" || command === "worker" || command === "queue-metrics";
}
