// Piscina loads this plain-JS file in each worker thread. It registers tsx first, so the
// thread can import TypeScript (our own sources and the user's .ts suite files).
import { register } from "tsx/esm/api";

register();
const mod = await import("./thread.ts");
mod.startThread();
export default mod.default;
