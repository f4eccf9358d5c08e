/**
 * One kind of event: the write that emits it. Apart from the list of them (./types.ts), so that
 * the modules declaring event types of their own (imports, the institution) name it without
 * importing the list, which is built from them.
 */
export interface EventType {
  /** `<object>.<what happened>`, e.g. `gift.voided`. */
  type: string;
  /** The `object` of the record in `data.object`: the type's first part. */
  objectType: string;
  /** The command whose committed write emits it, e.g. `gifts.void` (empty for a consequence). */
  command: string;
  /** The request that makes the write, for the OpenAPI document. */
  request: { method: 'POST' | 'PATCH' | 'DELETE'; path: string; label: string };
  /** The update's type when it changes this field (`award_cycle.status_changed`). */
  changes?: string;
  /**
   * Made by another record's write, beside that write's own event (`pledge.fulfilled`): never
   * the event of a command.
   */
  consequence?: true;
}
