import { SYSTEM_SCOPE } from '../common/request-context';
import { distinctData } from './distinct-data';
import { eventRecord } from './new-event';

describe('distinctData (EventsRepository.appendMany)', () => {
  const at = new Date('2026-12-01T12:00:00.000Z');
  const record = (object: object, details?: Record<string, unknown>) =>
    eventRecord(
      { tenantId: 'ten_x', type: 'invoice.created', subjectId: 'inv_1', object, details },
      SYSTEM_SCOPE,
      at,
    );

  it("should send one document's events' data once, and give every event back its own data", () => {
    const invoice = { id: 'inv_1', total: 100 };
    const other = { id: 'inv_2', total: 200 };
    const records = [record(invoice), record(invoice), record(other), record(invoice)];
    const { indexOf, documents } = distinctData(records);
    expect(documents).toEqual([{ object: invoice }, { object: other }]);
    expect(indexOf).toEqual([0, 0, 1, 0]);
    records.forEach((each, index) => expect(documents[indexOf[index]]).toEqual(each.data));
  });

  it('should never share data with details, nor equal objects that are not the same one', () => {
    const invoice = { id: 'inv_1', total: 100 };
    const records = [record(invoice), record(invoice, { changed_fields: ['total'] }), record({ ...invoice })];
    const { indexOf, documents } = distinctData(records);
    expect(indexOf).toEqual([0, 1, 2]);
    records.forEach((each, index) => expect(documents[indexOf[index]]).toEqual(each.data));
  });
});
