import { z } from 'zod';

/** A JSON Schema (draft 2020-12, the dialect of OpenAPI 3.1) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

/** Where component schemas live in the document. */
export const schemaRef = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

/** zod adds `$schema` (and `$id` for registered schemas); inside an OpenAPI document they are noise. */
function withoutRootKeywords(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

export type Override = (zodSchema: z.core.$ZodType) => JsonSchema | undefined;

/**
 * One zod schema as JSON Schema. `io: 'input'` describes what a request may send (the input side
 * of transforms and pipes); `override` adds what a refinement checks but JSON Schema cannot see.
 */
export function toJsonSchema(
  schema: z.ZodType,
  io: 'input' | 'output',
  override?: Override,
): JsonSchema {
  const converted = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    override: (ctx) => {
      const extra = override?.(ctx.zodSchema);
      if (extra) Object.assign(ctx.jsonSchema, extra);
    },
  }) as JsonSchema;
  return withoutRootKeywords(converted);
}

/**
 * Named response schemas, converted together so that one may refer to another by `$ref`
 * (e.g. a list's items to its resource).
 */
export function componentSchemas(
  named: ReadonlyMap<string, z.ZodType>,
): Record<string, JsonSchema> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of named) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'output',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  });
  return Object.fromEntries(
    [...named.keys()].map((id) => [id, withoutRootKeywords(schemas[id] as JsonSchema)]),
  );
}
