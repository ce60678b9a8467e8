import { EVENT_TYPES } from '../events';
import { isRuleId, RULE_IDS, RULES } from './rules';

/** What starts a rule that no event does: the dunning sweeps' clock, and billing's own run. */
const NOT_EVENTS = ['schedule', 'billing_run'];

describe('automation rules', () => {
  it('should name each rule once', () => {
    expect(new Set(RULE_IDS).size).toBe(RULES.length);
    expect(RULE_IDS).toEqual(RULES.map((rule) => rule.id));
  });

  it('should know the switchable rules only', () => {
    for (const id of RULE_IDS) {
      expect(isRuleId(id)).toBe(true);
    }
    // Built into subscribers and not switchable (src/subscribers/subscriber-rules.ts).
    expect(isRuleId('subscriber_follows_service')).toBe(false);
    expect(isRuleId('late_fees')).toBe(false);
    expect(isRuleId('LATE_FEE')).toBe(false);
    expect(isRuleId('')).toBe(false);
  });

  it('should be triggered by event types the service emits, or by the clock or the bill run', () => {
    for (const rule of RULES) {
      expect(rule.triggers.length).toBeGreaterThan(0);
      for (const trigger of rule.triggers) {
        expect([rule.id, NOT_EVENTS.includes(trigger) || trigger in EVENT_TYPES]).toEqual([rule.id, true]);
      }
    }
  });

  it('should emit only event types the catalogue lists', () => {
    for (const rule of RULES) {
      for (const emitted of rule.emits) {
        expect([rule.id, emitted in EVENT_TYPES]).toEqual([rule.id, true]);
      }
    }
  });

  it('should run the dunning rules on the clock and credit terminations in the bill run, not on events', () => {
    const triggers = Object.fromEntries(RULES.map((rule) => [rule.id, [...rule.triggers]]));
    expect(triggers.overdue_invoices).toEqual(['schedule']);
    expect(triggers.invoice_reminders).toEqual(['schedule']);
    expect(triggers.late_fee).toEqual(['schedule']);
    expect(triggers.termination_billing).toEqual(['billing_run']);
  });
});
