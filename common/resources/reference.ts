import type { FieldErrorCode } from '../errors.js';

/**
 * How other records refer to a resource, stated by that resource (its schema.ts): its table, the
 * noun of messages, and the statuses that make a record unusable as a new reference (product.md
 * §4: a deactivated user, a closed fund or a retired scholarship is `reference_inactive`; an
 * award needs a cycle that is open or closed, so a draft or archived one is `invalid_value`).
 */
export interface Reference {
  table: string;
  /** With its article: `a fund`, `an award cycle`. */
  noun: string;
  unusable?: { statuses: readonly string[]; code: FieldErrorCode };
}
