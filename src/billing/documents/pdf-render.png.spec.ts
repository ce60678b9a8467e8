import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { renderInvoicePdf } from './documents';
import { sampleInvoice } from './sample-documents';

/**
 * Page 1 of the sample invoice rendered to PNG by poppler's pdftoppm (Debian: poppler-utils), as a viewer would draw
 * it: a picture of the right size with ink on it where the layout puts it. Runs where pdftoppm is installed; with
 * REQUIRE_PDFTOPPM=1 (CI, .ci/run) it runs always and fails when pdftoppm is missing.
 */

function hasPdftoppm(): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && existsSync(join(dir, 'pdftoppm')));
}

const required = process.env.REQUIRE_PDFTOPPM === '1';
const available = hasPdftoppm();

interface Picture {
  width: number;
  height: number;
  /** Luminance 0 (black) to 255 (white), row by row. */
  gray: Uint8Array;
}

/** A PNG as pdftoppm writes it (8 bits per channel, gray, RGB or RGBA, not interlaced), to gray pixels. */
function decodePng(png: Buffer): Picture {
  expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  let width = 0;
  let height = 0;
  let channels = 0;
  const data: Buffer[] = [];
  for (let at = 8; at < png.length;) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const body = png.subarray(at + 8, at + 8 + length);
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      expect(body[8]).toBe(8); // bit depth
      expect(body[12]).toBe(0); // not interlaced
      channels = ({ 0: 1, 2: 3, 4: 2, 6: 4 } as Record<number, number>)[body[9]];
    } else if (type === 'IDAT') {
      data.push(body);
    }
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(data));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    for (let x = 0; x < stride; x++) {
      const left = x >= channels ? pixels[y * stride + x - channels] : 0;
      const up = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const upLeft = y > 0 && x >= channels ? pixels[(y - 1) * stride + x - channels] : 0;
      let predictor = 0;
      if (filter === 1) {
        predictor = left;
      } else if (filter === 2) {
        predictor = up;
      } else if (filter === 3) {
        predictor = (left + up) >> 1;
      } else if (filter === 4) {
        const p = left + up - upLeft;
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)];
        predictor = pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      pixels[y * stride + x] = (row[x] + predictor) & 0xff;
    }
  }
  const gray = new Uint8Array(width * height);
  for (let i = 0; i < width * height; i++) {
    const p = i * channels;
    gray[i] =
      channels >= 3
        ? Math.round(0.299 * pixels[p] + 0.587 * pixels[p + 1] + 0.114 * pixels[p + 2])
        : pixels[p];
  }
  return { width, height, gray };
}

/** The share of dark pixels (luminance < 160) in a band of rows, 0 to 1. */
function ink(picture: Picture, fromRow = 0, toRow = picture.height): number {
  let dark = 0;
  for (let i = fromRow * picture.width; i < toRow * picture.width; i++) {
    if (picture.gray[i] < 160) {
      dark++;
    }
  }
  return dark / ((toRow - fromRow) * picture.width);
}

(available || required ? describe : describe.skip)('an invoice page rendered by pdftoppm', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'invoice-png-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives a picture of an A4 page with the invoice on it', async () => {
    expect(available).toBe(true); // REQUIRE_PDFTOPPM=1 and no pdftoppm: install poppler-utils
    const pdf = join(dir, 'invoice.pdf');
    writeFileSync(pdf, await renderInvoicePdf(sampleInvoice()));
    execFileSync('pdftoppm', ['-png', '-r', '50', '-f', '1', '-l', '1', pdf, join(dir, 'page')]);
    const files = readdirSync(dir).filter((file) => file.startsWith('page') && file.endsWith('.png'));
    expect(files).toHaveLength(1);
    const png = readFileSync(join(dir, files[0]));
    expect(png.length).toBeGreaterThan(5_000);

    const picture = decodePng(png);
    // A4 (595.28 × 841.89 pt) at 50 dpi.
    expect(Math.abs(picture.width - 413)).toBeLessThanOrEqual(1);
    expect(Math.abs(picture.height - 585)).toBeLessThanOrEqual(1);
    // Text on a white page: some ink, mostly paper; not blank, not a black box.
    const page = ink(picture);
    expect(page).toBeGreaterThan(0.01);
    expect(page).toBeLessThan(0.3);
    // Where the layout puts things: the header (issuer, title) at the top, the lines in the upper half, nothing in the
    // strip between the last block and the footer, and the footer at the bottom.
    const row = (pt: number) => Math.round((pt / 841.89) * picture.height);
    expect(ink(picture, row(45), row(130))).toBeGreaterThan(0.02);
    expect(ink(picture, row(300), row(420))).toBeGreaterThan(0.01);
    expect(ink(picture, row(720), row(770))).toBe(0);
    expect(ink(picture, row(790), row(805))).toBeGreaterThan(0.003);
  });
});
