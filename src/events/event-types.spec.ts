import { EVENT_TYPES, type EventType, isEventPattern } from './event-types';
import { patternsFor } from './new-event';

describe('patternsFor', () => {
  it('should match an event by its type, each dotted prefix with .*, and *', () => {
    expect(patternsFor('invoice.paid')).toEqual(['invoice.paid', 'invoice.*', '*']);
    expect(patternsFor('a.b.c')).toEqual(['a.b.c', 'a.*', 'a.b.*', '*']);
  });

  it('should match a type without a dot by itself and * only', () => {
    expect(patternsFor('ping')).toEqual(['ping', '*']);
  });

  it('should never match a prefix that is not whole words', () => {
    const patterns = patternsFor('provisioning_order.failed');
    expect(patterns).not.toContain('provisioning.*');
    expect(patterns).not.toContain('provisioning_order.fail*');
  });
});

describe('isEventPattern', () => {
  it('should take every event type, its family and *', () => {
    for (const type of Object.keys(EVENT_TYPES) as EventType[]) {
      expect([type, isEventPattern(type)]).toEqual([type, true]);
    }
    expect(isEventPattern('subscriber.*')).toBe(true);
    expect(isEventPattern('provisioning_order.*')).toBe(true);
    expect(isEventPattern('*')).toBe(true);
  });

  it('should refuse a typo, an unknown family, a bare prefix and other wildcards', () => {
    for (const pattern of [
      'subscriber.craeted',
      'customer.*',
      'subscriber',
      'subscriber.',
      '*.created',
      'subscriber.**',
      '**',
      'Subscriber.created',
      ' subscriber.created',
      '',
    ]) {
      expect([pattern, isEventPattern(pattern)]).toEqual([pattern, false]);
    }
  });

  it('should describe every event type in a sentence', () => {
    for (const [type, description] of Object.entries(EVENT_TYPES)) {
      expect([type, /^[A-Z].*\.$/.test(description)]).toEqual([type, true]);
    }
  });
});
