import { readFileSync } from 'node:fs';
import * as fontkit from 'fontkit';

/**
 * The documents' fonts: DejaVu Sans and DejaVu Sans Bold from the `dejavu-fonts-ttf` npm package (Latin with accents,
 * Cyrillic, Greek and more), found with require.resolve and embedded (subset) in every PDF. Never a host font, and
 * never one of PDF's standard 14 (which a viewer would substitute).
 *
 * Each is read and parsed (fontkit, the parser pdfkit uses) once per process and handed to every document: parsing
 * and first laying out DejaVu Sans is most of the cost of a one-page invoice otherwise (about 20 ms a font). Each
 * document makes its own subset of it.
 *
 * Shared, a fontkit font must not remember what earlier documents drew: it caches one glyph object per glyph id,
 * holding the code points of the call that first created it, and pdfkit writes those into the document's ToUnicode
 * map. A glyph first met as a component of a composite glyph (υ inside ύ, when a subset is written) would carry no
 * code point, and every later document would print it as text nobody can copy or search, and differ in its bytes
 * from a document rendered in a fresh process. So every glyph object is created at load, in a fixed order: each
 * glyph the cmap maps a character to, with that character (the lowest one when several map to it), a Latin ligature
 * (ﬁ, ﬃ, …, which the layout substitutes for "fi") with the letters it stands for, the rest with none.
 */
export const DOCUMENT_FONT_FILES = {
  regular: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
  bold: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
} as const;

export type DocumentFont = keyof typeof DOCUMENT_FONT_FILES;

let parsed: Record<DocumentFont, fontkit.Font> | null = null;

/** Alphabetic Presentation Forms, Latin ligatures: ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ. */
const LATIN_LIGATURE = /^[\ufb00-\ufb06]$/;

function parse(file: string): fontkit.Font {
  const font = fontkit.create(readFileSync(file));
  if (!('layout' in font)) {
    throw new Error(`${file} is a font collection, not a font`);
  }
  if (font.variationAxes && Object.keys(font.variationAxes).length > 0) {
    throw new Error(`${file} is a variable font: its glyphs' outlines could not be kept once decoded`);
  }
  for (const codePoint of [...font.characterSet].sort((a, b) => a - b)) {
    const char = String.fromCodePoint(codePoint);
    const codePoints = LATIN_LIGATURE.test(char)
      ? [...char.normalize('NFKC')].map((c) => c.codePointAt(0) as number)
      : [codePoint];
    const glyph = font.glyphForCodePoint(codePoint);
    // glyphForCodePoint passes [codePoint] to the glyph it creates; a ligature gets its letters instead.
    if (glyph.codePoints.length === 1 && glyph.codePoints[0] === codePoint && codePoints.length > 1) {
      glyph.codePoints = codePoints;
    }
  }
  for (let id = 0; id < font.numGlyphs; id++) {
    keepDecoded(font.getGlyph(id) as unknown as DecodableGlyph);
  }
  return font;
}

interface DecodableGlyph {
  id: number;
  _decode(): unknown;
}

/**
 * fontkit's subset encoder decodes every glyph it writes (its whole outline, to learn whether it is a composite)
 * each time a document's subset is written, and that was the largest single cost of a one-page invoice
 * (docs/performance.md, Invoice PDFs). The glyph objects are shared by every document (above), so each keeps its
 * decoded outline once made. fontkit reads it and never changes it for a font without variations (only the
 * variation processor moves points, inside the decode itself); at most every glyph of both fonts, ~12 MB each, and
 * in practice the few hundred glyphs documents use.
 */
function keepDecoded(glyph: DecodableGlyph): void {
  const decode = glyph._decode;
  let decoded: { value: unknown } | null = null;
  glyph._decode = function (this: DecodableGlyph) {
    decoded ??= { value: decode.call(this) };
    return decoded.value;
  };
}

/** The parsed fonts, for PDFKit's registerFont. */
export function documentFonts(): Record<DocumentFont, fontkit.Font> {
  if (!parsed) {
    parsed = { regular: parse(DOCUMENT_FONT_FILES.regular), bold: parse(DOCUMENT_FONT_FILES.bold) };
  }
  return parsed;
}

/**
 * Word layouts shared by every document, per font. pdfkit lays out (fontkit shaping: glyphs, kerning, ligatures) each
 * word once per document and keeps it in the document's font (`layoutCache`, a plain object keyed by the word); most
 * of the words of one invoice (labels, headings, units, the issuer's details, amounts) are those of the one before.
 * A document's cache gets this object as its prototype, so it reads every word an earlier document laid out, and what
 * it lays out itself is added here when it is finished (keepWordLayouts). A layout depends on the font and the word
 * alone, and pdfkit only reads it once made (the justified path copies what it changes), so sharing it changes no
 * byte of any document. Bounded: past MAX_WORDS a font starts over with an empty set.
 */
export const MAX_WORDS = 20_000;
const wordLayouts: Record<DocumentFont, { words: Record<string, unknown>; count: number }> = {
  regular: { words: Object.create(null) as Record<string, unknown>, count: 0 },
  bold: { words: Object.create(null) as Record<string, unknown>, count: 0 },
};

/** The word layouts earlier documents made with `font`: the prototype of a new document's cache. */
export function sharedWordLayouts(font: DocumentFont): Record<string, unknown> {
  return wordLayouts[font].words;
}

/** Adds the words a document laid out itself (its cache's own keys) to the shared layouts of `font`. */
export function keepWordLayouts(font: DocumentFont, own: Record<string, unknown>): void {
  const words = Object.keys(own);
  if (words.length === 0) {
    return;
  }
  let shared = wordLayouts[font];
  if (shared.count + words.length > MAX_WORDS) {
    shared = wordLayouts[font] = { words: Object.create(null) as Record<string, unknown>, count: 0 };
  }
  for (const word of words) {
    if (!(word in shared.words)) {
      shared.words[word] = own[word];
      shared.count++;
    }
  }
}

const substitutes = new Map<string, string>();

/**
 * `text` with each character `font` has no glyph for replaced by its compatibility form (NFKC) when the font has
 * that: ja-JP formats yen as the fullwidth "￥" (U+FFE5), which DejaVu lacks, and prints "¥" instead. Other characters
 * the font lacks are left as they are (drawn as the font's empty box, still extractable as text).
 */
export function printable(text: string, font: DocumentFont): string {
  // Both fonts cover Latin (to Latin Extended-B), general punctuation to U+2064 and the euro sign: most strings need
  // no look-up.
  if (/^[\t\n\u0020-\u007e\u00a0-\u024f\u2000-\u2064\u20ac]*$/.test(text)) {
    return text;
  }
  const fonts = documentFonts();
  let result = '';
  for (const char of text) {
    const key = `${font}|${char}`;
    let substitute = substitutes.get(key);
    if (substitute === undefined) {
      substitute = char;
      if (!fonts[font].hasGlyphForCodePoint(char.codePointAt(0) as number)) {
        const compatible = char.normalize('NFKC');
        const covered = [...compatible].every((c) =>
          fonts[font].hasGlyphForCodePoint(c.codePointAt(0) as number),
        );
        if (covered) {
          substitute = compatible;
        }
      }
      substitutes.set(key, substitute);
    }
    result += substitute;
  }
  return result;
}
