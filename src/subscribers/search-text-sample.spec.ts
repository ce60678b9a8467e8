import type { EntityManager } from 'typeorm';
import {
  COMMON_WORD_SHARE,
  rareWords,
  type SampledText,
  SAMPLE_TTL_MS,
  SearchTextStatistics,
  wordShare,
} from './search-text-sample';
import { SubscriberSearchRepository } from './subscriber-search.repository';

/** A sample like the bench's: `count` seeded rows, every one `seed subscriber <n>` in Springfield. */
function seeded(count: number, extra: string[] = []): SampledText[] {
  const texts = [
    ...Array.from(
      { length: count },
      (_, i) =>
        `seed subscriber ${i * 9901}\nseed-${i * 9901}@example.net\n${i * 9901} fiber way\nspringfield`,
    ),
    ...extra,
  ];
  return texts.map((text) => ({ text, share: 1 / texts.length }));
}

describe('wordShare', () => {
  it('should add up the shares of the sampled values holding the word, case-insensitively', () => {
    const sample = [
      { text: 'ada lovelace', share: 0.5 },
      { text: 'ada byron', share: 0.25 },
      { text: 'charles babbage', share: 0.25 },
    ];
    expect(wordShare('ADA', sample)).toBe(0.75);
    expect(wordShare('babbage', sample)).toBe(0.25);
    expect(wordShare('turing', sample)).toBe(0);
  });
});

describe('rareWords', () => {
  const sample = seeded(101);

  it('should send only the rare words to the index when the text holds a common one', () => {
    expect(rareWords('Subscriber 4711', sample)).toEqual(['4711']);
    expect(rareWords('Seed Subscriber 4711 Springfield', sample)).toEqual(['4711']);
    expect(rareWords('Lovelace subscriber 4711', sample)).toEqual(['Lovelace', '4711']);
  });

  it('should keep the whole text when no word is common, or no rare word gives the index a trigram', () => {
    expect(rareWords('Ada Lovelace', sample)).toBeNull();
    expect(rareWords('4711', sample)).toBeNull();
    expect(rareWords('Seed Subscriber', sample)).toBeNull();
    expect(rareWords('Subscriber 47', sample)).toBeNull();
    expect(rareWords('subscriber %_\\', sample)).toBeNull();
  });

  it('should keep the whole text without statistics, or with too few values to say anything', () => {
    expect(rareWords('Subscriber 4711', null)).toBeNull();
    expect(rareWords('Subscriber 4711', [])).toBeNull();
    expect(rareWords('Subscriber 4711', seeded(5))).toBeNull();
  });

  it('should count a word common from its share of the rows, most common values by their frequency', () => {
    const lovelaces = Array.from({ length: 10 }, (_, i) => ({ text: `ada lovelace ${i}`, share: 0.01 }));
    const weighted: SampledText[] = [
      { text: 'grace hopper', share: COMMON_WORD_SHARE },
      ...lovelaces,
      ...Array.from({ length: 20 }, (_, i) => ({
        text: `someone ${i}`,
        share: (0.9 - COMMON_WORD_SHARE) / 20,
      })),
    ];
    expect(rareWords('hopper lovelace', weighted)).toEqual(['lovelace']);
    expect(rareWords('hopper lovelace', weighted.slice(1))).toBeNull();
  });

  it('should take words of letters and marks in any script and case, never one whose sigma depends on context', () => {
    expect(rareWords('SUBSCRIBER Ærøskøbing', sample)).toEqual(['Ærøskøbing']);
    expect(rareWords('subscriber 東京都', sample)).toEqual(['東京都']);
    expect(rareWords('subscriber Ὀδυσσεύς', sample)).toBeNull();
    expect(rareWords('subscriber ΟΔΟΣ', sample)).toBeNull();
    expect(rareWords("subscriber O'Brien", sample)).toEqual(['Brien']);
  });
});

describe('SearchTextStatistics', () => {
  const statistics = () => new SearchTextStatistics(new SubscriberSearchRepository());
  /** A manager whose pg_stats row is `row` (none when null), counting the statements it answers. */
  function manager(row: object | null) {
    const query = jest.fn().mockResolvedValue(row ? [row] : []);
    return { manager: { query } as unknown as EntityManager, query };
  }

  it('should weigh the most common values by their frequency and the histogram bounds by the rest', async () => {
    const { manager: m } = manager({ mcv: ['a', 'b'], freqs: [0.3, 0.1], bounds: ['c', 'd', 'e'] });
    const sample = await statistics().read(m);
    expect(sample?.map((value) => value.text)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(sample?.map((value) => Number(value.share.toFixed(6)))).toEqual([0.3, 0.1, 0.2, 0.2, 0.2]);
  });

  it('should answer null for a table never analyzed', async () => {
    expect(await statistics().read(manager(null).manager)).toBeNull();
    expect(await statistics().read(manager({ mcv: null, freqs: null, bounds: null }).manager)).toBeNull();
  });

  it('should read once per period, concurrent callers sharing the read, then read again', async () => {
    const { manager: m, query } = manager({ mcv: null, freqs: null, bounds: ['x'] });
    const reader = statistics();
    const clock = jest.spyOn(performance, 'now').mockReturnValue(1_000);
    await Promise.all([reader.sample(m), reader.sample(m)]);
    await reader.sample(m);
    expect(query).toHaveBeenCalledTimes(1);
    clock.mockReturnValue(1_000 + SAMPLE_TTL_MS + 1);
    await reader.sample(m);
    expect(query).toHaveBeenCalledTimes(2);
    clock.mockRestore();
  });
});
