import { SqlParams } from './sql-params';

describe('SqlParams', () => {
  it('answers $1, $2, … in the order values are added, and hands the values over in that order', () => {
    const params = new SqlParams();
    expect(params.add('ten_1')).toBe('$1');
    expect(params.add(42)).toBe('$2');
    expect(params.add(null)).toBe('$3');
    expect(params.values).toEqual(['ten_1', 42, null]);
    expect(params.size).toBe(3);
  });

  it('casts a placeholder when asked', () => {
    const params = new SqlParams();
    params.add('first');
    expect(params.add(['a', 'b'], 'text[]')).toBe('$2::text[]');
    expect(params.add('2026-01-31', 'date')).toBe('$3::date');
  });

  it('adds a list as one comma-separated run of placeholders', () => {
    const params = new SqlParams();
    params.add('before');
    expect(params.list(['x', 'y', 'z'])).toBe('$2, $3, $4');
    expect(params.list([])).toBe('');
    expect(params.add('after')).toBe('$5');
    expect(params.values).toEqual(['before', 'x', 'y', 'z', 'after']);
  });

  it('numbers fragments that each add their own values after the ones before them', () => {
    const params = new SqlParams();
    const write = (id: string) => `row AS (INSERT INTO t (id) VALUES (${params.add(id)}))`;
    const claim = (key: string) => {
      const placeholder = params.add(key);
      // One value, written twice: the number is the value's, not the place's.
      return `claim AS (SELECT ${placeholder} WHERE ${placeholder} IS NOT NULL)`;
    };
    const sql = `WITH ${write('r1')}, ${claim('k1')} SELECT ${params.add(7, 'int')}`;
    expect(sql).toBe(
      'WITH row AS (INSERT INTO t (id) VALUES ($1)), claim AS (SELECT $2 WHERE $2 IS NOT NULL) SELECT $3::int',
    );
    expect(params.values).toEqual(['r1', 'k1', 7]);
  });

  it('keeps its values to itself: a copy is handed over, and two statements never share numbers', () => {
    const a = new SqlParams();
    const b = new SqlParams();
    a.add(1);
    const handed = a.values;
    handed.push('not a parameter');
    expect(a.values).toEqual([1]);
    expect(b.add('x')).toBe('$1');
  });
});
