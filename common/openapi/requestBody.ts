import type { z } from 'zod';
import type { JsonValue } from '../json.js';
import { calendarDate, currencyCode, email, money, rate } from '../validation/fields.js';
import type { Shape } from '../validation/validateBody.js';
import { toJsonSchema, type JsonSchema, type Override } from './jsonSchema.js';

/**
 * What the shared field schemas of common/validation/fields.ts check in refinements, which JSON
 * Schema cannot infer from zod: added to the generated schema wherever that field schema is used.
 */
const refinements = new Map<z.core.$ZodType, JsonSchema>([
  [calendarDate, { format: 'date', description: 'A real calendar date written YYYY-MM-DD.' }],
  [email, { format: 'email' }],
  [currencyCode, { pattern: '^[A-Z]{3}$', description: 'An ISO 4217 currency code, e.g. USD.' }],
  [money, { description: 'A JSON number (not a string) with at most 2 decimal places.' }],
  [rate, { description: 'A JSON number (not a string) with at most 6 decimal places.' }],
]);
const refinementsOf: Override = (schema) => refinements.get(schema);

export interface BodyDoc {
  shape: Shape;
  /** What a create stores for a field it does not send. */
  defaults: Record<string, JsonValue>;
  /** Per-field notes, e.g. a uniqueness or reference rule. */
  notes: Record<string, string>;
}

/** Blank text: what clears a nullable field besides null (validateBody reads it as null). */
const blank = { type: 'string', pattern: '^\\s*$' };

function fieldSchema(name: string, doc: BodyDoc, create: boolean): JsonSchema {
  const spec = doc.shape[name]!;
  const value = toJsonSchema(spec.schema, 'input', refinementsOf);
  const said = [value.description, doc.notes[name]].filter(Boolean) as string[];
  if (spec.nullable) said.push('`null` or an empty string clears it.');
  // The default is said in words, not as `default`: generated clients would make a field with a
  // `default` one they must send.
  if (create && Object.hasOwn(doc.defaults, name))
    said.push(`Default: \`${JSON.stringify(doc.defaults[name])}\`.`);
  const { description: _description, ...rest } = value;
  const schema: JsonSchema = spec.nullable ? { anyOf: [rest, { type: 'null' }, blank] } : rest;
  if (said.length) schema.description = said.join(' ');
  return schema;
}

/**
 * The JSON body of a create or an update, from the resource's Shape (the schemas that validate
 * it). Strings are trimmed; unknown and read-only fields are refused (422 unknown_field). A create
 * must send the always-required fields; an update sends any subset of the writable fields.
 */
export function requestBodySchema(doc: BodyDoc, create: boolean, description: string): JsonSchema {
  for (const name of Object.keys(doc.notes)) {
    if (!Object.hasOwn(doc.shape, name)) throw new Error(`a note names the unknown field ${name}`);
  }
  const names = Object.keys(doc.shape);
  const required = create ? names.filter((name) => doc.shape[name]!.required) : [];
  return {
    type: 'object',
    description,
    properties: Object.fromEntries(names.map((name) => [name, fieldSchema(name, doc, create)])),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}
