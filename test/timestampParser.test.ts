import fc from 'fast-check';
import { timestampToIso } from '../common/db/pool.js';

/** A timestamptz(3) as PostgreSQL writes it in a session in UTC: trailing zeros of the fraction dropped. */
function asPostgresWritesIt(instant: Date): string {
  const iso = instant.toISOString();
  const fraction = iso.slice(20, 23).replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}+00`;
}

describe('timestampToIso (the timestamptz type parser)', () => {
  test('a UTC timestamp, rewritten as text, is the instant Date would make of it', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('1000-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59.999Z'),
          noInvalidDate: true,
        }),
        (instant) => {
          expect(timestampToIso(asPostgresWritesIt(instant))).toBe(instant.toISOString());
        },
      ),
      { numRuns: 2_000 },
    );
  });

  test('other offsets and forms go through Date', () => {
    expect(timestampToIso('2026-11-21 15:30:00.25+05:30')).toBe('2026-11-21T10:00:00.250Z');
    expect(timestampToIso('2026-11-21 05:00:00-05')).toBe('2026-11-21T10:00:00.000Z');
    expect(timestampToIso('2026-11-21 10:00:00.123456+00')).toBe('2026-11-21T10:00:00.123Z');
  });
});
