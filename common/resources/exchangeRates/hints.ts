/**
 * The rates this process last found in effect, by institution, currency and date: hints that
 * let a gift in another currency commit in one statement (giftInOneStatement), whose guard
 * confirms the hinted rate is still the one in effect (rateInEffect). A wrong or stale hint
 * costs only the full path, which looks the rate up and hints it again.
 */
const MAX_HINTS = 10_000;
const hints = new Map<string, string>();

const keyOf = (institutionId: number, currency: string, on: string) =>
  `${institutionId}:${currency}:${on}`;

export function hintRate(institutionId: number, currency: string, on: string, rate: string): void {
  const key = keyOf(institutionId, currency, on);
  hints.delete(key);
  // Oldest first out: a Map iterates in insertion order.
  if (hints.size >= MAX_HINTS) hints.delete(hints.keys().next().value!);
  hints.set(key, rate);
}

export const hintedRate = (institutionId: number, currency: string, on: string) =>
  hints.get(keyOf(institutionId, currency, on));
