// The streaming splitter of JSON import bodies: the same rows, however the text is cut.
import { JsonRowsSplitter } from '../../api/jsonRows.js';
import { ApiError } from '../../common/errors.js';

const rows = [
  { role: 'Household', last_name: 'O"Brien, [the elder]', email: 'ob@example.org' },
  { nested: { list: [1, [2, { three: '}' }]], text: 'a\\\\"b' } },
  'a row that is no object',
  42,
  null,
  [],
];
const body = `  { "rows" :\n [ ${rows.map((row) => JSON.stringify(row)).join(' ,\n ')} ] }\n`;

function split(text: string, size: number) {
  const splitter = new JsonRowsSplitter();
  const found = [];
  for (let at = 0; at < text.length; at += size)
    found.push(...splitter.feed(text.slice(at, at + size)));
  splitter.end();
  return found;
}

test.each([1, 2, 3, 7, 64, 10_000])('cut every %i characters, the rows are the same', (size) => {
  expect(split(body, size)).toEqual(rows);
});

test('no rows is no rows', () => {
  expect(split('{"rows": []}', 3)).toEqual([]);
});

test.each([
  '{"rows": 5}',
  '[1, 2]',
  '{"rows": [1, 2',
  '{"rows": [1,, 2]}',
  '{"rows": [1, 2,]}',
  '{"rows": [1], "more": 2}',
  '{"other": [1]}',
  '{"rows": [{"a": tru}]}',
])('%s is 400 invalid_json', (text) => {
  let caught: unknown;
  try {
    split(text, 4);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ApiError);
  expect((caught as ApiError).body.code).toBe('invalid_json');
});
