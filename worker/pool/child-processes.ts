import { installChildProcessTracking } from "../runtime/child-processes.ts";

/**
 * Imported first by the thread (worker/pool/thread.ts): wraps `node:child_process` before the
 * suite is imported, so a suite's `import { spawn } from "node:child_process"` sees the wrapper
 * and every process a case starts ends with the case (worker/runtime/child-processes.ts).
 */
installChildProcessTracking();
