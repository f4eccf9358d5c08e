import { errors } from '../common/errors.js';
import type { JsonValue } from '../common/json.js';

const shapeProblem = () => errors.invalidJson('The request body must be {"rows": [{...}, ...]}.');
const PREFIX = /^\s*\{\s*"rows"\s*:\s*\[$/;
/** Longer than any prefix `{ "rows": [` can be, whitespace included. */
const MAX_PREFIX = 1_000;

/**
 * Splits `{"rows": [ ... ]}` into its rows as the text streams in, so that a JSON upload, like a
 * CSV one, is never whole in memory: each row is parsed on its own (JSON.parse) once its text is
 * complete. Anything else around the rows is 400 `invalid_json`.
 */
export class JsonRowsSplitter {
  private phase: 'prefix' | 'rows' | 'suffix' = 'prefix';
  private prefix = '';
  private suffix = '';
  /** The text of the row being read, so far. */
  private row = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Rows read so far. */
  private seen = 0;

  /** The rows completed by this piece of text. */
  feed(text: string): JsonValue[] {
    const rows: JsonValue[] = [];
    if (this.phase === 'suffix') {
      this.suffix += text;
      if (this.suffix.length > MAX_PREFIX) throw shapeProblem();
      return rows;
    }
    let at = 0;
    if (this.phase === 'prefix') {
      const open = text.indexOf('[');
      if (open < 0) {
        this.prefix += text;
        if (this.prefix.length > MAX_PREFIX) throw shapeProblem();
        return rows;
      }
      this.prefix += text.slice(0, open + 1);
      if (!PREFIX.test(this.prefix)) throw shapeProblem();
      this.phase = 'rows';
      at = open + 1;
    }
    let start = at;
    for (let index = at; index < text.length && this.phase === 'rows'; index += 1) {
      const char = text[index]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (char === '\\') this.escaped = true;
        else if (char === '"') this.inString = false;
        continue;
      }
      if (char === '"') this.inString = true;
      else if (char === '{' || char === '[') this.depth += 1;
      else if ((char === '}' || char === ']') && this.depth > 0) this.depth -= 1;
      else if (this.depth === 0 && (char === ',' || char === ']')) {
        const value = (this.row + text.slice(start, index)).trim();
        this.row = '';
        start = index + 1;
        if (value !== '') {
          rows.push(parseRow(value));
          this.seen += 1;
        } else if (char === ',' || this.seen) throw shapeProblem();
        if (char === ']') {
          this.phase = 'suffix';
          this.suffix = text.slice(index + 1);
        }
      }
    }
    if (this.phase === 'rows') this.row += text.slice(start);
    return rows;
  }

  /** The body ended: it must have closed the rows and the object. */
  end(): void {
    if (this.phase !== 'suffix' || !/^\s*\}\s*$/.test(this.suffix)) throw shapeProblem();
  }
}

function parseRow(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    throw errors.invalidJson('The request body is not valid JSON.');
  }
}
