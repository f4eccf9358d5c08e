/**
 * The service's calendar day, in UTC: what "today" means for default dates (a receipt's
 * `issued_on`) and for what is due or late (pledge installments, recurring gifts). One clock, so
 * that an operator (`CLOCK_TODAY`) or a test can pin the day instead of waiting for a due date.
 * It is per process: the API and the worker each set it from their configuration at start.
 */
let pinned: string | null = null;

/** Pins today to a YYYY-MM-DD day; null follows the real date again. */
export function pinToday(day: string | null): void {
  pinned = day;
}

export function today(): string {
  return pinned ?? new Date().toISOString().slice(0, 10);
}
