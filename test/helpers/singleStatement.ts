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
