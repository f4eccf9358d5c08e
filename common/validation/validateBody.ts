import type { z } from 'zod';
import type { FieldError, FieldErrorCode } from '../errors.js';

export interface FieldSpec {
  /** Validates a present, non-null value. */
  schema: z.ZodType;
  /** null (or an empty string) clears the field. */
  nullable?: boolean;
  /** Always required: null or blank is reported as `required` by the resource's rules. */
  required?: boolean;
}

export type Shape = Record<string, FieldSpec>;

export interface BodyValidation {
  /** Parsed values of the fields that were sent and are valid; null where a field was cleared. */
  values: Record<string, unknown>;
  errors: FieldError[];
  /** Fields that were sent, valid or not. */
  sent: Set<string>;
  /** Fields that failed their own validation; later rules skip them. */
  invalid: Set<string>;
}

const isBlank = (value: unknown) =>
  value === null || (typeof value === 'string' && value.trim() === '');

/**
 * Validates each field of a JSON object on its own, collecting every problem rather than the
 * first. Requiredness and rules across fields belong to the resource, which sees `values`.
 */
export function validateBody(
  shape: Shape,
  body: Record<string, unknown>,
  readOnly: readonly string[] = [],
): BodyValidation {
  const values: Record<string, unknown> = {};
  const errors: FieldError[] = [];
  const sent = new Set<string>();
  const invalid = new Set<string>();

  for (const [name, value] of Object.entries(body)) {
    sent.add(name);
    const spec = Object.hasOwn(shape, name) ? shape[name] : undefined;
    if (!spec) {
      invalid.add(name);
      errors.push({
        param: name,
        code: 'unknown_field',
        message: readOnly.includes(name)
          ? 'is read-only and cannot be set'
          : 'is not a recognised field',
      });
      continue;
    }
    if (isBlank(value) && (spec.nullable || spec.required)) {
      // A blank required field is reported as `required` by the resource's rules.
      values[name] = null;
      continue;
    }
    if (value === null) {
      invalid.add(name);
      errors.push({ param: name, code: 'invalid_type', message: 'cannot be null' });
      continue;
    }
    const result = spec.schema.safeParse(value, { reportInput: true });
    if (result.success) {
      values[name] = result.data;
    } else {
      invalid.add(name);
      errors.push(...result.error.issues.flatMap((issue) => toFieldErrors(name, issue)));
    }
  }
  return { values, errors, sent, invalid };
}

function toFieldErrors(field: string, issue: z.core.$ZodIssue): FieldError[] {
  const param = [field, ...issue.path.map(String)].join('.');
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      param: `${param}.${key}`,
      code: 'unknown_field',
      message: 'is not a recognised field',
    }));
  }
  return [{ param, code: codeOf(issue), message: issue.message }];
}

function codeOf(issue: z.core.$ZodIssue): FieldErrorCode {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined ? 'required' : 'invalid_type';
    case 'too_big':
      return issue.origin === 'string' ? 'too_long' : 'out_of_range';
    case 'too_small':
      return issue.origin === 'string' ? 'required' : 'out_of_range';
    case 'invalid_format':
      return 'invalid_format';
    case 'invalid_value':
      return 'invalid_value';
    case 'custom': {
      const code = (issue.params as { code?: FieldErrorCode } | undefined)?.code;
      return code ?? 'invalid_value';
    }
    default:
      return 'invalid_value';
  }
}

const requiredError = (param: string): FieldError => ({
  param,
  code: 'required',
  message: 'is required',
});

/** Adds `required` for each named field that is missing or blank in the merged record and was not already reported. */
export function requireFields(
  record: Record<string, unknown>,
  names: readonly string[],
  validation: BodyValidation,
): void {
  for (const name of names) {
    if (validation.invalid.has(name)) continue;
    if (record[name] === undefined || record[name] === null) {
      validation.invalid.add(name);
      validation.errors.push(requiredError(name));
    }
  }
}
