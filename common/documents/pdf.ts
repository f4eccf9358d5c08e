import PDFDocument from 'pdfkit';
import { fontData, runsOf, type Weight } from './fonts.js';

type Doc = PDFKit.PDFDocument;
type Struct = PDFKit.PDFStructureElement;

export interface TextStyle {
  size?: number;
  weight?: Weight;
  color?: string;
  align?: 'left' | 'right' | 'center';
}

/** One column of a table: its heading, width in points and alignment. */
export interface Column {
  heading: string;
  width: number;
  align?: 'left' | 'right';
}

const MARGIN = 56;
const ROW_GAP = 4;

/**
 * A printable document (a receipt, a giving statement) made with pdfkit: A4, tagged for screen
 * readers (headings, paragraphs and table cells are structure elements, the language and title
 * are set), every text in Noto Sans of the script it is written in, so that text is extractable
 * and names in any of those scripts render.
 */
export class PrintableDocument {
  private readonly doc: Doc;
  private readonly root: Struct;
  private readonly registered = new Set<string>();
  private readonly done: Promise<Buffer>;

  constructor(title: string) {
    this.doc = new PDFDocument({
      size: 'A4',
      margin: MARGIN,
      tagged: true,
      lang: 'en',
      displayTitle: true,
      pdfVersion: '1.7',
      info: { Title: title, Creator: 'Donor and Gift Management Service' },
    });
    const chunks: Buffer[] = [];
    this.doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    this.done = new Promise((resolve, reject) => {
      this.doc.on('end', () => resolve(Buffer.concat(chunks)));
      this.doc.on('error', reject);
    });
    this.root = this.doc.struct('Document');
    this.doc.addStructure(this.root);
  }

  /** The text in runs of one face each, continuing on one line as one paragraph. */
  private write(text: string, style: TextStyle, at?: { x: number; y: number; width: number }) {
    const runs = runsOf(text === '' ? ' ' : text, style.weight ?? 400);
    this.doc.fillColor(style.color ?? 'black').fontSize(style.size ?? 10);
    runs.forEach((run, index) => {
      if (!this.registered.has(run.face.name)) {
        this.doc.registerFont(run.face.name, fontData(run.face));
        this.registered.add(run.face.name);
      }
      this.doc.font(run.face.name);
      const options: PDFKit.Mixins.TextOptions = {
        continued: index < runs.length - 1,
        align: style.align ?? 'left',
        ...(at ? { width: at.width } : {}),
      };
      if (index === 0 && at) this.doc.text(run.text, at.x, at.y, options);
      else this.doc.text(run.text, options);
    });
  }

  private element(tag: string, draw: () => void) {
    this.root.add(this.doc.struct(tag, {}, draw));
  }

  heading(text: string, level: 1 | 2 = 1): this {
    this.element(`H${level}`, () => this.write(text, { size: level === 1 ? 18 : 13, weight: 700 }));
    this.doc.moveDown(0.3);
    return this;
  }

  /** A paragraph of lines (a name and an address). */
  paragraph(lines: readonly string[], style: TextStyle = {}): this {
    this.element('P', () => {
      for (const line of lines) this.write(line, style);
    });
    this.doc.moveDown(0.6);
    return this;
  }

  /** A large mark across the page (VOID), drawn behind nothing and read as text too. */
  stamp(text: string): this {
    const { doc } = this;
    const y = doc.y;
    this.element('P', () => {
      doc.save();
      doc.rotate(-30, { origin: [doc.page.width / 2, doc.page.height / 2] });
      this.write(
        text,
        { size: 96, weight: 700, color: '#c0392b', align: 'center' },
        { x: MARGIN, y: doc.page.height / 2 - 60, width: doc.page.width - 2 * MARGIN },
      );
      doc.restore();
    });
    doc.y = y;
    doc.x = MARGIN;
    return this;
  }

  /** A table with a heading row; rows go on to the next page when a page is full. */
  table(columns: readonly Column[], rows: readonly (readonly string[])[]): this {
    const { doc } = this;
    const table = doc.struct('Table');
    this.root.add(table);
    const bottom = () => doc.page.height - doc.page.margins.bottom;
    const row = (cells: readonly string[], tag: 'TH' | 'TD', weight: Weight) => {
      if (doc.y + 16 > bottom()) doc.addPage();
      const y = doc.y;
      let x = MARGIN;
      let lowest = y;
      const tr = doc.struct('TR');
      table.add(tr);
      columns.forEach((column, index) => {
        tr.add(
          doc.struct(tag, {}, () =>
            this.write(
              cells[index] ?? '',
              { size: 9, weight, align: column.align ?? 'left' },
              { x, y, width: column.width - 6 },
            ),
          ),
        );
        lowest = Math.max(lowest, doc.y);
        x += column.width;
      });
      doc.y = lowest + ROW_GAP;
      doc.x = MARGIN;
    };
    row(
      columns.map((column) => column.heading),
      'TH',
      700,
    );
    for (const cells of rows) row(cells, 'TD', 400);
    table.end();
    doc.moveDown(0.6);
    return this;
  }

  async finish(): Promise<Buffer> {
    this.root.end();
    this.doc.end();
    return this.done;
  }
}

/** Money as printed: digits grouped, two decimals, the currency code after. */
const amounts = new Intl.NumberFormat('en-US', {
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});

export const money = (amount: number, currency: string) => `${amounts.format(amount)} ${currency}`;

/** An address's non-empty parts, one line each (city, region and postal code on one). */
export function addressLines(
  address: {
    line1: string | null;
    line2: string | null;
    city: string | null;
    region: string | null;
    postal_code: string | null;
    country: string | null;
  } | null,
): string[] {
  if (!address) return [];
  const locality = [address.city, address.region, address.postal_code].filter(Boolean).join(' ');
  return [address.line1, address.line2, locality, address.country].filter((line): line is string =>
    Boolean(line),
  );
}
