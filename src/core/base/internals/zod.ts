import type { z } from 'zod';

/*
 * What zod (4) declares only on its concrete schema classes: a schema's kind and what it wraps.
 * test/unit/core/base/internals/zod.test.ts fails when a new zod changes it.
 */

/** A schema's definition: its JSON-ish type (`string`, `optional`, …) and, for a wrapper, the schema inside. */
export interface SchemaDef {
  readonly type: string;
  readonly innerType?: z.ZodType;
}

/** The definition of any schema (`def`). */
export function schemaDefOf(schema: z.ZodType): SchemaDef {
  return (schema as unknown as { def: SchemaDef }).def;
}
