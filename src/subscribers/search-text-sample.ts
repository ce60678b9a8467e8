import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { SubscriberSearchRepository } from './subscriber-search.repository';

/**
 * Which words of a search are rare, from data: the values of the search text PostgreSQL keeps for the planner
 * (pg_stats of ix_subscribers_search_trgm's expression: its most common values, with their frequencies, and its
 * histogram's bounds, an even sample of the rest). docs/decisions.md, "Search", "Only the rare words go through the
 * index".
 */

/** One value of the search text (lower-cased, as the index has it) and the share of the table's rows it stands for. */
export interface SampledText {
  text: string;
  share: number;
}

/** The sample, or null when the table has no statistics yet (never analyzed). */
export type SearchTextSample = SampledText[] | null;

/** A word in at least this share of the rows is common: reading its trigrams' posting lists costs more than the rows. */
export const COMMON_WORD_SHARE = 0.2;

/** The smallest sample that says anything: fewer values (a tiny table) and every word counts as rare, as today. */
const MIN_SAMPLE = 20;

/** Letters, digits and combining marks: a word of the text, as a maximal run. */
const WORD = /[\p{L}\p{N}\p{M}]+/gu;

/** Three letters or digits in a row: pg_trgm draws at least one trigram from the word, so the index can take it. */
const TRIGRAM = /[\p{L}\p{Nd}]{3}/u;

/**
 * Greek sigma lower-cases by its context under ICU (final `ς` or `σ`): a word holding one is never looked up alone,
 * so the word lower-cased by itself is always part of the whole text lower-cased (lower() maps each character on its
 * own otherwise; a word is a maximal run of letters and marks, so the Turkish and Lithuanian dotted-i rules stay
 * inside it).
 */
const CONTEXT_CASED = /[Σσς]/u;

/** The share of the sampled rows whose text holds `word` (lower-cased). */
export function wordShare(word: string, sample: SampledText[]): number {
  const needle = word.toLowerCase();
  let share = 0;
  for (const value of sample) {
    if (value.text.includes(needle)) {
      share += value.share;
    }
  }
  return share;
}

/**
 * What the trigram index looks up for `text` (as `%word%word%`, lower-cased in SQL): the text's rare words in their
 * order, when at least one of its words is common and at least one rare word gives the index a trigram; the rows
 * found are then checked against the whole text. Null means the whole text goes through the index, as it always
 * did: no statistics yet, no common word, or only common or short words. Every row holding the text holds each of
 * its words in that order, so the rows found are a superset of the matches and the check keeps exactly the matches:
 * the choice changes the cost, never the result.
 */
export function rareWords(text: string, sample: SearchTextSample): string[] | null {
  if (sample === null || sample.length < MIN_SAMPLE) {
    return null;
  }
  const words = text.match(WORD) ?? [];
  const rare: string[] = [];
  let common = false;
  for (const word of words) {
    if (wordShare(word, sample) >= COMMON_WORD_SHARE) {
      common = true;
    } else if (TRIGRAM.test(word) && !CONTEXT_CASED.test(word)) {
      rare.push(word);
    }
  }
  return common && rare.length > 0 ? rare : null;
}

/** How long a process keeps the sample: statistics change when the table is analyzed, not per request. */
export const SAMPLE_TTL_MS = 5 * 60 * 1000;

/** Reads the sample from pg_stats, kept per process for SAMPLE_TTL_MS (one statement per process and period). */
@Injectable()
export class SearchTextStatistics {
  private cached: { sample: SearchTextSample; until: number } | null = null;
  private reading: Promise<SearchTextSample> | null = null;

  constructor(private readonly search: SubscriberSearchRepository) {}

  /** The sample, read at most once per SAMPLE_TTL_MS; concurrent callers share one read. */
  async sample(manager: EntityManager): Promise<SearchTextSample> {
    const now = performance.now();
    if (this.cached && this.cached.until > now) {
      return this.cached.sample;
    }
    this.reading ??= this.read(manager)
      .then((sample) => {
        this.cached = { sample, until: performance.now() + SAMPLE_TTL_MS };
        return sample;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }

  /** The sample as pg_stats has it now: most common values with their frequencies, then the histogram's bounds. */
  async read(manager: EntityManager): Promise<SearchTextSample> {
    const [row] = await this.search.textStatistics(manager);
    if (!row || (!row.mcv && !row.bounds)) {
      return null;
    }
    const mcv = row.mcv ?? [];
    const freqs = row.freqs ?? [];
    const sample: SampledText[] = mcv.map((text, i) => ({ text, share: Number(freqs[i] ?? 0) }));
    const bounds = row.bounds ?? [];
    if (bounds.length > 0) {
      const rest = Math.max(0, 1 - sample.reduce((sum, value) => sum + value.share, 0));
      sample.push(...bounds.map((text) => ({ text, share: rest / bounds.length })));
    }
    return sample;
  }
}
