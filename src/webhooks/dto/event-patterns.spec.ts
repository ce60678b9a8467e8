import { validateSync } from 'class-validator';
import { IsEventPatterns } from './event-patterns';

class Subscription {
  @IsEventPatterns()
  events: unknown;
}

const problems = (events: unknown) =>
  validateSync(Object.assign(new Subscription(), { events })).flatMap((error) =>
    Object.values(error.constraints ?? {}),
  );

describe('IsEventPatterns', () => {
  it('should take known types, families and *', () => {
    expect(problems(['invoice.paid', 'subscriber.*', '*'])).toEqual([]);
    expect(problems([])).toEqual([]);
  });

  it('should name the first entry that is not a known pattern, by its index', () => {
    expect(problems(['invoice.paid', 'subscriber.craeted', 'nope'])).toEqual([
      'events.1 "subscriber.craeted" is not a known event type, a known prefix ending in .*, or *; GET /api/v1/event-types lists the types',
    ]);
  });

  it('should name an entry that is not a string', () => {
    expect(problems(['invoice.paid', 42])).toEqual(['events.1 must be a string']);
  });

  it('should leave a value that is not a list to the list check', () => {
    expect(problems('invoice.paid')).toEqual([]);
  });
});
