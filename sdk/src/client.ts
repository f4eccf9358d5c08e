import { Core, type ClientOptions } from './core.js';
import { Resources } from './resources.js';

/**
 * The client: one method per operation of the service, grouped by resource
 * (`client.gifts.create`, `client.gifts.refunds.list`, …).
 */
export class DonorGift extends Resources {
  constructor(options: ClientOptions) {
    super(new Core(options));
  }
}
