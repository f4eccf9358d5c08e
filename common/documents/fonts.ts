import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { inflateSync } from 'node:zlib';

/**
 * The fonts documents are set in: Noto Sans as npm ships it (@fontsource), one file per script
 * range, and Noto Sans SC for Chinese, in about a hundred files of a few hundred characters each.
 * Their `unicode-range`s, read from the packages' own CSS, say which file draws a character, so
 * that a name in any of these scripts is drawn, and each page embeds only the glyphs it uses
 * (pdfkit subsets every font it embeds). Nothing is fetched from anywhere.
 */
export type Weight = 400 | 700;

export interface Face {
  /** The name a document registers the face under. */
  name: string;
  file: string;
  ranges: readonly (readonly [number, number])[];
}

const require = createRequire(import.meta.url);

const FACE = /@font-face\s*{([^}]*)}/g;

/** `U+0460-052F,U+20B4` → [[0x460, 0x52f], [0x20b4, 0x20b4]]. */
export function parseUnicodeRange(text: string): [number, number][] {
  return text.split(',').map((part) => {
    const [low, high] = part.trim().replace(/^U\+/i, '').split('-');
    const from = parseInt(low!.replace(/\?/g, '0'), 16);
    const to = high ? parseInt(high, 16) : parseInt(low!.replace(/\?/g, 'F'), 16);
    return [from, to];
  });
}

/** The faces of one package and weight, in the order its CSS lists them. */
function facesOf(pkg: string, weight: Weight): Face[] {
  const css = require.resolve(`${pkg}/${weight}.css`);
  const text = readFileSync(css, 'utf8');
  return [...text.matchAll(FACE)].flatMap(([, body]) => {
    const file = /url\(\.\/(files\/[^)]+\.woff)\)/.exec(body!)?.[1];
    const range = /unicode-range:\s*([^;]+);/.exec(body!)?.[1];
    if (!file || !range) return [];
    return [
      {
        name: file.replace(/^files\//, '').replace(/\.woff$/, ''),
        file: join(dirname(css), file),
        ranges: parseUnicodeRange(range),
      },
    ];
  });
}

const faces = new Map<Weight, readonly Face[]>();

/** Every face of a weight: Noto Sans's scripts first, then Chinese. */
export function facesFor(weight: Weight): readonly Face[] {
  let found = faces.get(weight);
  if (!found) {
    found = [
      ...facesOf('@fontsource/noto-sans', weight),
      ...facesOf('@fontsource/noto-sans-sc', weight),
    ];
    if (found.length === 0) throw new Error('no font of @fontsource/noto-sans was found');
    faces.set(weight, found);
  }
  return found;
}

const covers = (face: Face, codePoint: number) =>
  face.ranges.some(([from, to]) => codePoint >= from && codePoint <= to);

/** The face that draws a code point: the first whose range holds it, else the Latin one. */
export function faceFor(codePoint: number, weight: Weight): Face {
  // A few hundred faces' ranges to search per character: remembered once found.
  const key = codePoint * 1000 + weight;
  let face = chosen.get(key);
  if (!face) {
    face = facesFor(weight).find((candidate) => covers(candidate, codePoint)) ?? latinFace(weight);
    chosen.set(key, face);
  }
  return face;
}

const chosen = new Map<number, Face>();

function latinFace(weight: Weight): Face {
  const all = facesFor(weight);
  return (
    all.find((face) => face.ranges.some(([from, to]) => from <= 0x41 && 0x41 <= to)) ?? all[0]!
  );
}

/** A text cut where its face changes: each run is drawn in one face. */
export function runsOf(text: string, weight: Weight): { face: Face; text: string }[] {
  const runs: { face: Face; text: string }[] = [];
  for (const char of text) {
    const codePoint = char.codePointAt(0)!;
    const last = runs.at(-1);
    // A character the current face also draws (a space, a digit) stays in its run.
    if (last && covers(last.face, codePoint)) {
      last.text += char;
      continue;
    }
    const face = faceFor(codePoint, weight);
    if (last?.face === face) last.text += char;
    else runs.push({ face, text: char });
  }
  return runs;
}

/**
 * A WOFF 1.0 file as the plain TrueType/OpenType font it wraps (its tables inflated). fontkit
 * would inflate them itself, in JavaScript, for every document it embeds the font in: that cost
 * ten times the rest of a statement's rendering. Done once here, with zlib.
 */
export function sfntOfWoff(woff: Buffer): Buffer {
  if (woff.toString('latin1', 0, 4) !== 'wOFF') return woff;
  const count = woff.readUInt16BE(12);
  const tables = Array.from({ length: count }, (_, index) => {
    const at = 44 + index * 20;
    const offset = woff.readUInt32BE(at + 4);
    const compressed = woff.readUInt32BE(at + 8);
    const length = woff.readUInt32BE(at + 12);
    const raw = woff.subarray(offset, offset + compressed);
    return {
      tag: woff.subarray(at, at + 4),
      checksum: woff.readUInt32BE(at + 16),
      data: compressed < length ? inflateSync(raw) : raw,
    };
  });
  const power = 2 ** Math.floor(Math.log2(count));
  const header = Buffer.alloc(12 + 16 * count);
  header.writeUInt32BE(woff.readUInt32BE(4), 0);
  header.writeUInt16BE(count, 4);
  header.writeUInt16BE(power * 16, 6);
  header.writeUInt16BE(Math.log2(power), 8);
  header.writeUInt16BE(count * 16 - power * 16, 10);
  const parts: Buffer[] = [header];
  let offset = header.length;
  tables.forEach((table, index) => {
    const at = 12 + index * 16;
    table.tag.copy(header, at);
    header.writeUInt32BE(table.checksum, at + 4);
    header.writeUInt32BE(offset, at + 8);
    header.writeUInt32BE(table.data.length, at + 12);
    const padded = Buffer.alloc((table.data.length + 3) & ~3);
    table.data.copy(padded);
    parts.push(padded);
    offset += padded.length;
  });
  return Buffer.concat(parts);
}

const files = new Map<string, Buffer>();

/** A face's font, read and unwrapped once per process. */
export function fontData(face: Face): Buffer {
  let data = files.get(face.file);
  if (!data) {
    data = sfntOfWoff(readFileSync(face.file));
    files.set(face.file, data);
  }
  return data;
}
