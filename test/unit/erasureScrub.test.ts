import { rowNamesPerson, scrubJson, type Person } from '../../common/resources/donors/erasure.js';

/**
 * What erasure makes of stored copies (events, idempotency answers, import rows), on its own:
 * which strings name the person and which only look like them. What erasure writes is tested
 * through the service (test/donors.erase.test.ts).
 */
const person: Person = {
  ids: new Set([7, 9]),
  emails: new Set(['zelda@example.org']),
  phones: new Set(['1001']),
  externalIds: new Set(['1001', 'ZQ-1']),
  names: new Set(['zelda\u0000quill']),
};

test('a donor object of the person is erased, keys kept; another donor’s is not', () => {
  const donor = {
    id: 9,
    object: 'donor',
    first_name: 'Zelda',
    last_name: 'Quill',
    organization_name: null,
    display_name: 'Zelda Quill',
    email: 'ZELDA@example.org',
    phones: [{ number: '1001', type: 'mobile', status: 'active' }],
    status: 'active',
    dropped: { emails: [{ address: 'x@example.org' }], phones: [], addresses: [] },
  };
  expect(scrubJson(donor, person)).toEqual({
    id: 9,
    object: 'donor',
    first_name: 'Erased',
    last_name: 'Erased',
    organization_name: null,
    display_name: 'Erased',
    email: null,
    phones: [],
    status: 'active',
    dropped: { emails: [], phones: [], addresses: [] },
  });
  const other = { ...donor, id: 8, email: 'other@example.org', phones: [] };
  expect(scrubJson(other, person)).toEqual(other);
});

test('digits that are the person’s phone or external id count only under a key that holds one', () => {
  const gift = {
    id: 3,
    object: 'gift',
    donor_id: 8,
    check_number: '1001',
    subject: 'ZQ-1',
    tribute: { honoree_donor_id: 7, honoree_name: 'Zelda Quill', notify: null },
    note_to: 'zelda@example.org',
    donor_external_id: '1001',
  };
  expect(scrubJson(gift, person)).toEqual({
    ...gift,
    tribute: { honoree_donor_id: 7, honoree_name: 'Erased', notify: null },
    note_to: null,
    donor_external_id: null,
  });
});

test('a copy of a receipt to the person loses its frozen name; a consent its statement', () => {
  expect(
    scrubJson(
      { object: 'receipt', donor_id: 7, donor_name: 'Zelda Quill', donor_address: { city: 'X' } },
      person,
    ),
  ).toEqual({ object: 'receipt', donor_id: 7, donor_name: 'Erased', donor_address: null });
  expect(scrubJson({ object: 'consent', donor_id: 9, statement: 'I agree' }, person)).toEqual({
    object: 'consent',
    donor_id: 9,
    statement: 'Erased',
  });
});

test.each([
  [{ donor_id: '7', amount: '10' }, true],
  [{ donor_id: 8, amount: '1001' }, false],
  [{ first_name: ' zelda ', last_name: 'QUILL' }, true],
  [{ first_name: 'Zelda', last_name: 'Other' }, false],
  [{ 'phones.0.number': '1001' }, true],
  [{ check_number: '1001' }, false],
  [{ external_id: 'ZQ-1' }, true],
  [{ emails: [{ address: 'Zelda@Example.org', type: 'home' }] }, true],
  [{}, false],
])('import row %j names the person: %s', (row, expected) => {
  expect(rowNamesPerson(row, person)).toBe(expected);
});
