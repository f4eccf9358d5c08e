/**
 * The demo's fundraising stories (fundraising.md §2 and §4): gifts from abroad in euros and
 * Canadian dollars, converted at the rates on file or at the bank's own, and gifts that honour
 * someone, one of them a memorial gift whose card to the family is still to be sent. They are
 * coded to the annual fund campaign (§3), so that its progress has appeals, funds and currencies
 * to show.
 */
import { daysAgo, type Body } from './data.js';
import type { DemoClient } from './money.js';

/** A year of monthly-ish rates would be realistic; three dates a currency show the lookup. */
export const exchangeRates: { currency: string; rate: number; ago: number }[] = [
  { currency: 'EUR', rate: 1.0812, ago: 400 },
  { currency: 'EUR', rate: 1.0934, ago: 180 },
  { currency: 'EUR', rate: 1.1021, ago: 30 },
  { currency: 'CAD', rate: 0.7405, ago: 400 },
  { currency: 'CAD', rate: 0.7318, ago: 180 },
  { currency: 'CAD', rate: 0.7163, ago: 30 },
];

/** The annual fund campaign, its year-end phase below it, and an appeal of each. */
export interface AnnualFundCodes {
  annual: number;
  yearEnd: number;
  springLetter: number;
  givingTuesday: number;
}

export async function recordFundraisingStories(
  client: DemoClient,
  donorIds: readonly number[],
  fundId: ReadonlyMap<string, number>,
  codes: AnnualFundCodes,
): Promise<void> {
  const donor = (index: number) => donorIds[index]!;
  const fund = (code: string) => fundId.get(code)!;

  for (const [i, { currency, rate, ago }] of exchangeRates.entries())
    await client.create(
      '/exchange-rates',
      { currency, rate, effective_on: daysAgo(ago), source: 'European Central Bank reference' },
      `rate-${i}`,
    );

  const gifts: { key: string; body: Body }[] = [
    // Eleanor Brennan, on sabbatical in Dublin, gives in euros: converted at the rate on file
    // for the gift's date (the one of 180 days ago). She answered the spring letter.
    {
      key: 'foreign-eur',
      body: {
        donor_id: donor(10),
        amount: 2000,
        currency: 'EUR',
        subject: 'Hartley Arts gift from Dublin',
        gift_date: daysAgo(90),
        type: 'bank_transfer',
        fund_id: fund('ARTS'),
        campaign_id: codes.annual,
        appeal_id: codes.springLetter,
      },
    },
    // Daniel Fitzgerald's Toronto office sends Canadian dollars: the latest rate applies. Coded
    // to the Giving Tuesday email alone, it counts toward that appeal's campaign, the year-end
    // phase, and so toward the annual fund above it.
    {
      key: 'foreign-cad',
      body: {
        donor_id: donor(9),
        amount: 500,
        currency: 'CAD',
        subject: 'Annual Fund gift from Toronto',
        gift_date: daysAgo(15),
        type: 'credit_card',
        fund_id: fund('ANNUAL'),
        appeal_id: codes.givingTuesday,
      },
    },
    // The Hartley Family Foundation's bank converted at its own rate: sent with the gift, it
    // wins over the rate on file; the split's base amounts add up to the gift's exactly. The
    // grant answered the spring letter, but the library's part was pledged on Giving Tuesday:
    // that line carries its own codes, which win over the gift's.
    {
      key: 'foreign-eur-split',
      body: {
        donor_id: donor(5),
        amount: 7500,
        currency: 'EUR',
        exchange_rate: 1.0987,
        subject: 'Foundation grant paid from the European account',
        gift_date: daysAgo(10),
        type: 'bank_transfer',
        campaign_id: codes.annual,
        appeal_id: codes.springLetter,
        designations: [
          { fund_id: fund('ARTS'), amount: 5000 },
          {
            fund_id: fund('LIBRARY'),
            amount: 2500,
            campaign_id: codes.yearEnd,
            appeal_id: codes.givingTuesday,
          },
        ],
      },
    },
  ];
  for (const gift of gifts) await client.create('/gifts', gift.body, gift.key);

  // Robert Alvarez gives in memory of his mentor; the family is to be told, and the card has
  // not gone out yet: GET /gifts?tribute_acknowledgement=pending lists it. It counts toward the
  // annual fund through no appeal.
  await client.create(
    '/gifts',
    {
      donor_id: donor(1),
      amount: 500,
      subject: 'In memory of Professor Helen Marsh',
      gift_date: daysAgo(6),
      type: 'credit_card',
      fund_id: fund('STEM-END'),
      campaign_id: codes.annual,
      tribute: {
        type: 'in_memory_of',
        honoree_name: 'Professor Helen Marsh',
        notify: {
          name: 'The Marsh family',
          email: 'marsh.family@example.org',
          address: {
            line1: '31 Elm Street',
            city: 'Cambridge',
            region: 'MA',
            postal_code: '02139',
            country: 'US',
          },
        },
        message: 'She taught me to love mathematics. With deepest sympathy.',
      },
    },
    'tribute-memory',
  );
  // Sofia Marquez honours her host family, donors themselves: the card went out a week later.
  const honour = await client.create(
    '/gifts',
    {
      donor_id: donor(11),
      amount: 150,
      subject: 'In honour of the Okafor family',
      gift_date: daysAgo(60),
      type: 'credit_card',
      fund_id: fund('ATHLETICS'),
      tribute: {
        type: 'in_honor_of',
        honoree_name: 'Samuel and Ruth Okafor',
        honoree_donor_id: donor(2),
        notify: { name: 'Samuel and Ruth Okafor', email: 'okafor.family@example.net' },
      },
    },
    'tribute-honour',
  );
  await client.create(
    `/gifts/${honour.id}/tribute-acknowledgement`,
    { sent_on: daysAgo(53) },
    'tribute-honour-sent',
  );
}
