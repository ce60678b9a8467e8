import { SYSTEM_SCOPE } from '../common/request-context';
import { ulid } from '../common/ids';
import { eventRecord } from './new-event';

describe('eventRecord', () => {
  it("should encode created_at in the event id's time, so the deliveries made from created_at share it", () => {
    // Many records, each on another millisecond: two readings of the time would disagree on some of them.
    const start = Date.parse('2026-12-01T12:00:00.000Z');
    for (let i = 0; i < 2000; i++) {
      const record = eventRecord(
        { tenantId: 'ten_x', type: 'subscriber.created', subjectId: null, object: {} },
        SYSTEM_SCOPE,
        new Date(start + i),
      );
      expect(record.id.slice(4, 14)).toBe(ulid(record.createdAt.getTime()).slice(0, 10));
    }
  });
});
