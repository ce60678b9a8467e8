import { renderInvoicePdf } from './documents';
import { keepWordLayouts, MAX_WORDS, sharedWordLayouts } from './fonts';
import { sampleInvoice } from './sample-documents';

describe('word layouts shared by the documents (fonts.ts)', () => {
  it('keeps the words a document laid out for the documents after it', async () => {
    await renderInvoicePdf({ ...sampleInvoice(), notes: 'Zyxwvut-shared-word' });
    expect('Zyxwvut-shared-word' in sharedWordLayouts('regular')).toBe(true);
  });

  it('starts a font over with an empty set past MAX_WORDS, and keeps the other font', () => {
    keepWordLayouts('bold', { 'bold-kept ': { advanceWidth: 1 } });
    const own = (from: number, count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`w${from + i} `, { advanceWidth: i }]));
    keepWordLayouts('regular', own(0, MAX_WORDS - 1));
    const full = sharedWordLayouts('regular');
    expect('w0 ' in full).toBe(true);

    keepWordLayouts('regular', own(MAX_WORDS, 10));
    const fresh = sharedWordLayouts('regular');
    expect(fresh).not.toBe(full);
    expect(Object.keys(fresh)).toEqual(Object.keys(own(MAX_WORDS, 10)));
    expect('bold-kept ' in sharedWordLayouts('bold')).toBe(true);
  });
});
