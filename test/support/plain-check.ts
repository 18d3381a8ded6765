// The property every plain-code check of a wire message is held to (shared/wire/*-check.ts): over
// generated messages, what the plain check accepts the zod schema accepts and returns unchanged,
// and the generator exercises both sides (some messages plainly valid, some valid only by the schema).
import assert from "node:assert/strict";
import { seededRandom } from "../../shared/seeded-random.ts";

/** What {@link assertPlainCheckAgrees} is given. */
export interface PlainCheckProperty<T> {
  /** Messages generated, from seed 29. */
  count: number;
  /** One message, drawing from `random` (numbers in [0, 1)). */
  generate: (random: () => number) => unknown;
  /** The plain check under test. */
  plain: (message: unknown) => boolean;
  /** The schema the plain check stands in for (zod or zod/mini: only its `safeParse` is used). */
  schema: { safeParse(message: unknown): { success: true; data: T } | { success: false; error: { issues: readonly unknown[] } } };
  /** More than this many messages must be plainly valid. */
  minPlain: number;
  /** More than this many must be valid only by the schema. */
  minSchemaOnly: number;
  /** Further assertions on a plainly valid message and the schema's output for it. Optional. */
  onPlain?: (message: unknown, parsed: T) => void;
}

/** Asserts the property above over `count` generated messages. */
export function assertPlainCheckAgrees<T>(p: PlainCheckProperty<T>): void {
  const random = seededRandom(29);
  let plain = 0;
  let schemaOnly = 0;
  for (let i = 0; i < p.count; i++) {
    const m = p.generate(random);
    const parsed = p.schema.safeParse(m);
    if (p.plain(m)) {
      plain++;
      assert.ok(parsed.success, `plainly valid, refused by the schema: ${JSON.stringify(m)} ${parsed.success ? "" : JSON.stringify(parsed.error.issues[0])}`);
      assert.deepEqual(parsed.data, m, "the schema would not change it");
      p.onPlain?.(m, parsed.data);
    } else if (parsed.success) schemaOnly++;
  }
  // Both sides are exercised: the generator is no use if either count is at its bound.
  assert.ok(plain > p.minPlain, `${plain} plainly valid`);
  assert.ok(schemaOnly > p.minSchemaOnly, `${schemaOnly} valid only by the schema`);
}
