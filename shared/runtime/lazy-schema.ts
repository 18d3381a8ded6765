// runs in: both
/**
 * A zod schema built the first time it is used, not when its module loads. Every worker thread
 * loads the whole public API, and with it every schema evalfleet has (the NATS protocol, datasets,
 * Exulu's exports, the store's records...), of which a thread starting needs a handful; building a
 * zod schema costs about 30 microseconds a call (`z.string().min(1)` is two), and what it builds
 * outlives the young generation, so a thread paid for them in building and in garbage collection.
 *
 * The value stands in for the schema everywhere: same type (so `z.infer<typeof X>`, `.shape`,
 * `.extend()` and composition work unchanged), and every property read, `instanceof` check and
 * call goes to the one schema built on first use. Composing it into another lazy schema builds it
 * when that one is built. Comparing it with `===` against the schema it stands for tells them
 * apart, and so does a registry keyed by schema: `z.toJSONSchema` sees the fields' descriptions
 * but not one given to the outermost schema (`lazySchema(() => z.object(...).describe("x"))`), so
 * describe fields, as the judge's response schemas do.
 *
 * @param build makes the schema; called at most once, on the first use of the returned value.
 */
export function lazySchema<T extends object>(build: () => T): T {
  let schema: T | undefined;
  const real = (): T => (schema ??= build());
  // Every trap answers from the real schema; the target only satisfies the proxy's invariants.
  return new Proxy({} as T, {
    get: (_t, key) => {
      const s = real();
      return Reflect.get(s, key, s);
    },
    set: (_t, key, value) => Reflect.set(real(), key, value),
    has: (_t, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_t, key) => {
      const d = Reflect.getOwnPropertyDescriptor(real(), key);
      // A proxy may not report a property as non-configurable unless its target has it so.
      return d ? { ...d, configurable: true } : undefined;
    },
    defineProperty: (_t, key, d) => Reflect.defineProperty(real(), key, d),
    deleteProperty: (_t, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}
