import { createHash } from 'node:crypto';
import PDFDocument from 'pdfkit';
import { documentFonts, type DocumentFont, keepWordLayouts, printable, sharedWordLayouts } from './fonts';

/**
 * The page the documents are drawn on (pdfkit, A4): the embedded fonts, text blocks that measure themselves, a table
 * whose header repeats on every page it runs onto, and a footer with "Page n/N" on every page.
 *
 * The same input gives the same bytes: the info dictionary (CreationDate and ModDate included) is set from the
 * document, pdfkit derives the trailer /ID from it (an MD5 of the info), font subsets are named from their order
 * of use, the fonts shared by every document keep nothing of the documents drawn before (fonts.ts), and nothing reads
 * the clock or a random source.
 */

const MARGIN = 50;
/** Room kept at the bottom of each page for the footer. */
const FOOTER_ROOM = 64;
const CELL_PADDING_X = 4;
const CELL_PADDING_Y = 4;

export const COLORS = {
  text: '#1f2328',
  muted: '#5b636e',
  rule: '#c9ced6',
  band: '#eef1f5',
} as const;

export interface PdfInfo {
  title: string;
  subject: string;
  author: string;
  /** CreationDate and ModDate: the document's own date, never the time of rendering. */
  created: Date;
  /** BCP 47: the catalog's /Lang. */
  lang: string;
}

export interface TextStyle {
  font?: DocumentFont;
  size?: number;
  color?: string;
  align?: 'left' | 'right' | 'center';
}

export interface TableColumn<R> {
  header: string;
  width: number;
  align?: 'left' | 'right';
  cell: (row: R) => string;
  /** A second, smaller, muted line under the cell's text (e.g. a line's service period). */
  detail?: (row: R) => string | null | undefined;
}

export interface TableOptions<R> {
  size?: number;
  /** Rows drawn in bold with a band behind them (e.g. a statement's opening and closing balances). */
  emphasis?: (row: R) => boolean;
}

/** A strong ETag of a rendered document: a hash of its bytes, in the form etagOf (src/common/http/etag.ts) gives. */
export function pdfEtag(pdf: Buffer | Uint8Array): string {
  const digest = createHash('sha256').update(pdf).digest('base64url');
  return `"${digest.slice(0, 27)}"`;
}

export class PdfCanvas {
  readonly pdf: PDFKit.PDFDocument;
  readonly left = MARGIN;
  readonly width: number;
  readonly right: number;
  /** Where the next block starts. */
  y: number;
  private readonly bottom: number;
  /** Each font's word-layout cache in this document, which reads through to the shared one (fonts.ts). */
  private readonly wordLayouts = new Map<DocumentFont, Record<string, unknown>>();

  /** @param continuation printed at the top of every page after the first, e.g. "Invoice INV-2026-000001 (continued)". */
  constructor(
    info: PdfInfo,
    private readonly continuation: string,
  ) {
    this.pdf = new PDFDocument({
      size: 'A4',
      margins: { top: MARGIN, left: MARGIN, right: MARGIN, bottom: FOOTER_ROOM },
      bufferPages: true,
      compress: true,
      pdfVersion: '1.7',
      lang: info.lang,
      displayTitle: true,
      // No default font: pdfkit's (Helvetica) would be parsed for nothing, and never drawn with.
      font: null as unknown as string,
      info: {
        Title: info.title,
        Subject: info.subject,
        Author: info.author,
        Creator: 'isp-api',
        Producer: 'isp-api (PDFKit)',
        CreationDate: info.created,
        ModDate: info.created,
      },
    });
    const fonts = documentFonts();
    // pdfkit takes a parsed fontkit font as a source too (PDFFontFactory.open); its types only list bytes and paths.
    this.pdf.registerFont('regular', fonts.regular as unknown as PDFKit.Mixins.PDFFontSource);
    this.pdf.registerFont('bold', fonts.bold as unknown as PDFKit.Mixins.PDFFontSource);
    this.pdf.font('regular');
    this.width = this.pdf.page.width - 2 * MARGIN;
    this.right = this.left + this.width;
    this.bottom = this.pdf.page.height - FOOTER_ROOM;
    this.y = MARGIN;
  }

  private style(style: TextStyle): void {
    const font = style.font ?? 'regular';
    this.pdf
      .font(font)
      .fontSize(style.size ?? 9)
      .fillColor(style.color ?? COLORS.text);
    if (!this.wordLayouts.has(font)) {
      // pdfkit's font object of this document (EmbeddedFont), made by font() above; its cache is a plain object.
      const embedded = (this.pdf as unknown as { _font: { layoutCache?: Record<string, unknown> } })._font;
      const own = Object.create(sharedWordLayouts(font)) as Record<string, unknown>;
      embedded.layoutCache = own;
      this.wordLayouts.set(font, own);
    }
  }

  /** The height `text` takes in `width` with `style`. */
  measure(text: string, width: number, style: TextStyle = {}): number {
    if (text === '') {
      return 0;
    }
    this.style(style);
    return this.pdf.heightOfString(printable(text, style.font ?? 'regular'), { width, lineGap: 1 });
  }

  /** Draws `text` at (x, y) wrapped to `width`; answers its height. Does not move `this.y`. */
  text(text: string, x: number, y: number, width: number, style: TextStyle = {}): number {
    if (text === '') {
      return 0;
    }
    this.style(style);
    const page = this.pdf.page;
    this.pdf.text(printable(text, style.font ?? 'regular'), x, y, {
      width,
      align: style.align ?? 'left',
      lineGap: 1,
    });
    // pdfkit moved its y down by each line as heightOfString (measure) counts them: the height, without laying the
    // text out a second time. Unless it started a page inside the text (the canvas places its blocks so it does not).
    return this.pdf.page === page ? this.pdf.y - y : this.measure(text, width, style);
  }

  /** Draws a block across the page at `this.y` (a new page first when it does not fit) and moves below it. */
  block(text: string, style: TextStyle = {}, gapAfter = 4): void {
    const height = this.measure(text, this.width, style);
    this.ensure(height);
    this.text(text, this.left, this.y, this.width, style);
    this.y += height + gapAfter;
  }

  /** Starts a new page when `height` does not fit below `this.y` (a block taller than a page starts a page). */
  ensure(height: number): void {
    if (this.y + height > this.bottom) {
      this.newPage();
    }
  }

  newPage(): void {
    this.pdf.addPage();
    this.y = MARGIN;
    const height = this.text(this.continuation, this.left, this.y, this.width, {
      size: 8,
      color: COLORS.muted,
    });
    this.y += height + 10;
  }

  rule(y: number, x1 = this.left, x2 = this.right, color: string = COLORS.rule): void {
    this.pdf.moveTo(x1, y).lineTo(x2, y).lineWidth(0.5).strokeColor(color).stroke();
  }

  /** Label/value pairs, the label on the left and the value on the right of `width`; answers their height. */
  pairs(pairs: [string, string][], x: number, y: number, width: number, style: TextStyle = {}): number {
    let top = y;
    const labelWidth = width * 0.45;
    for (const [label, value] of pairs) {
      const labelHeight = this.text(label, x, top, labelWidth, { ...style, color: COLORS.muted });
      const valueHeight = this.text(value, x + labelWidth, top, width - labelWidth, {
        ...style,
        align: 'right',
      });
      top += Math.max(labelHeight, valueHeight) + 2;
    }
    return top - y;
  }

  /** A table across the page from `this.y`: its header again at the top of every page it continues on. */
  table<R>(columns: TableColumn<R>[], rows: R[], options: TableOptions<R> = {}): void {
    const size = options.size ?? 8.5;
    const total = columns.reduce((sum, column) => sum + column.width, 0);
    const scale = this.width / total;
    const widths = columns.map((column) => column.width * scale);
    const inner = (i: number) => widths[i] - 2 * CELL_PADDING_X;

    const header = () => {
      const height =
        Math.max(
          ...columns.map((column, i) => this.measure(column.header, inner(i), { font: 'bold', size })),
        ) +
        2 * CELL_PADDING_Y;
      this.ensure(height + 20);
      this.pdf.rect(this.left, this.y, this.width, height).fill(COLORS.band);
      let x = this.left;
      columns.forEach((column, i) => {
        this.text(column.header, x + CELL_PADDING_X, this.y + CELL_PADDING_Y, inner(i), {
          font: 'bold',
          size,
          align: column.align ?? 'left',
        });
        x += widths[i];
      });
      this.y += height;
    };

    header();
    for (const row of rows) {
      const emphasis = options.emphasis?.(row) ?? false;
      const font: DocumentFont = emphasis ? 'bold' : 'regular';
      const cells = columns.map((column) => ({
        text: column.cell(row),
        detail: column.detail?.(row) ?? '',
      }));
      const height =
        Math.max(
          ...cells.map(({ text, detail }, i) => {
            const main = this.measure(text, inner(i), { font, size });
            return detail ? main + 1 + this.measure(detail, inner(i), { size: size - 1 }) : main;
          }),
        ) +
        2 * CELL_PADDING_Y;
      if (this.y + height > this.bottom) {
        this.newPage();
        header();
      }
      if (emphasis) {
        this.pdf.rect(this.left, this.y, this.width, height).fill(COLORS.band);
      }
      let x = this.left;
      cells.forEach(({ text, detail }, i) => {
        const align = columns[i].align ?? 'left';
        const top = this.y + CELL_PADDING_Y;
        const main = this.text(text, x + CELL_PADDING_X, top, inner(i), { font, size, align });
        if (detail) {
          this.text(detail, x + CELL_PADDING_X, top + main + 1, inner(i), {
            size: size - 1,
            color: COLORS.muted,
            align,
          });
        }
        x += widths[i];
      });
      this.y += height;
      this.rule(this.y);
    }
  }

  /** Footers on every page ("Page n/N" and `footer`), then the end of the document: it can be read from `pdf`. */
  finish(footer: string | null | undefined, pageLabel: string): PDFKit.PDFDocument {
    const range = this.pdf.bufferedPageRange();
    const count = range.count;
    for (let i = 0; i < count; i++) {
      this.pdf.switchToPage(range.start + i);
      // The footer sits in the bottom margin: lift the margin so pdfkit does not break the page for it.
      this.pdf.page.margins.bottom = 0;
      const top = this.pdf.page.height - FOOTER_ROOM + 16;
      this.rule(top - 6);
      const numberWidth = 80;
      this.text(`${pageLabel} ${i + 1}/${count}`, this.right - numberWidth, top, numberWidth, {
        size: 7.5,
        color: COLORS.muted,
        align: 'right',
      });
      if (footer) {
        this.text(footer, this.left, top, this.width - numberWidth - 10, {
          size: 7.5,
          color: COLORS.muted,
        });
      }
    }
    for (const [font, own] of this.wordLayouts) {
      keepWordLayouts(font, own);
    }
    this.pdf.end();
    return this.pdf;
  }
}

/** The bytes of a finished document. */
export function pdfBytes(pdf: PDFKit.PDFDocument): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    pdf.on('data', (chunk: Buffer) => chunks.push(chunk));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
}
