import type { SubjectFilter } from '../billing';
import { SWEEP_BATCH, SWEEP_PAGES, SweepCursors } from './sweep-cursors';

const FILTER = {} as SubjectFilter;
const KEY_A = { dueDate: '2026-03-01', id: 'inv_a' };
const KEY_B = { dueDate: '2026-03-09', id: 'inv_b' };

describe('SweepCursors', () => {
  it('should start every sweep from the oldest due, with its bounds', () => {
    const cursors = new SweepCursors<'overdue' | 'reminders'>(50);
    expect(cursors.request('overdue', '2026-03-10', FILTER)).toEqual({
      today: '2026-03-10',
      from: null,
      limit: SWEEP_BATCH,
      pageSize: 50,
      pages: SWEEP_PAGES,
      filter: FILTER,
    });
  });

  it('should resume each sweep where its last pass stopped, apart from the others', () => {
    const cursors = new SweepCursors<'overdue' | 'reminders'>(50);
    cursors.moved('overdue', KEY_A);
    expect(cursors.request('overdue', '2026-03-10', FILTER).from).toEqual(KEY_A);
    expect(cursors.request('reminders', '2026-03-10', FILTER).from).toBeNull();
    cursors.moved('overdue', KEY_B);
    expect(cursors.request('overdue', '2026-03-11', FILTER).from).toEqual(KEY_B);
  });

  it('should go back to the oldest due once a sweep reached the end', () => {
    const cursors = new SweepCursors<'overdue'>(50);
    cursors.moved('overdue', KEY_A);
    cursors.moved('overdue', null);
    expect(cursors.request('overdue', '2026-03-10', FILTER).from).toBeNull();
  });

  it("should keep each worker's cursors its own", () => {
    const one = new SweepCursors<'overdue'>(50);
    const other = new SweepCursors<'overdue'>(50);
    one.moved('overdue', KEY_A);
    expect(other.request('overdue', '2026-03-10', FILTER).from).toBeNull();
  });
});
