import type { SingleStatementCreate, WriteRequest } from '../../common/commands/command.js';
import { createGift } from '../../common/resources/gifts/commands.js';
import type { TestService } from './harness.js';
import { created } from './responses.js';

/** A new donor (no email, so keyed) of the tenant whose API key is `key`, the test tenant's by default. */
export const newDonor = (service: TestService, key?: string) =>
  created<{ id: number }>(
    service.call('POST', '/api/v1/donors', {
      key,
      body: { role: 'Individual', first_name: 'Mary', last_name: 'Somerville' },
      headers: { 'Idempotency-Key': `donor-${Math.random()}` },
    }),
  );

/** The single statement the worker would commit for a gift body of the test tenant; null when it takes the transaction. */
export const giftStatement = (
  service: TestService,
  body: Record<string, unknown>,
): SingleStatementCreate | null =>
  createGift.singleStatement?.(
    {
      institution: { id: service.tenant.institutionId, name: 'Test', currency: 'USD' },
      dryRun: false,
      now: new Date().toISOString(),
    },
    { params: {}, body: body as WriteRequest['body'] },
  ) ?? null;
