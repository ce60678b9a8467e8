import { ApiError } from '../common/errors/api-error';
import { ImportFormat, ImportKind } from './import.entity';
import { RowReader } from './row-reader';

function read(format: ImportFormat, chunks: (string | Buffer)[]) {
  const reader = new RowReader(ImportKind.Subscribers, format);
  const rows = chunks.flatMap((chunk) => reader.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  return [...rows, ...reader.end()];
}

function refusal(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('not refused');
}

describe('RowReader', () => {
  it('maps CSV columns to a create body: nested paths, typed booleans, empty cells left out', () => {
    const rows = read(ImportFormat.Csv, [
      'external_id,full_name,address.city,metadata.plan,tax_exempt\n',
      'a-1,Ada,London,fiber,TRUE\nb-2,Bob,,,maybe\n',
    ]);
    expect(rows).toEqual([
      {
        row: 1,
        data: {
          external_id: 'a-1',
          full_name: 'Ada',
          address: { city: 'London' },
          metadata: { plan: 'fiber' },
          tax_exempt: true,
        },
        problem: null,
      },
      { row: 2, data: { external_id: 'b-2', full_name: 'Bob', tax_exempt: 'maybe' }, problem: null },
    ]);
  });

  it('decodes UTF-8 split across chunks and drops a BOM; refuses bytes that are not UTF-8', () => {
    const text = Buffer.from('\uFEFFexternal_id,full_name\nz-1,Zoë\n');
    const cut = text.indexOf(0xc3) + 1; // inside the two bytes of ë
    expect(read(ImportFormat.Csv, [text.subarray(0, cut), text.subarray(cut)])[0].data).toEqual({
      external_id: 'z-1',
      full_name: 'Zoë',
    });
    const latin1 = Buffer.from('external_id,full_name\nz-1,Zoë\n', 'latin1');
    expect(refusal(() => read(ImportFormat.Csv, [latin1])).code).toBe('invalid_import_file');
  });

  it('refuses unknown, repeated or missing key columns, and an empty file', () => {
    expect(refusal(() => read(ImportFormat.Csv, ['external_id,shoe\n'])).message).toMatch(
      /Unknown column "shoe"/,
    );
    expect(refusal(() => read(ImportFormat.Csv, ['external_id,external_id\n'])).message).toMatch(/twice/);
    expect(refusal(() => read(ImportFormat.Csv, ['full_name\nAda\n'])).message).toMatch(/no external_id/);
    expect(refusal(() => read(ImportFormat.Csv, [''])).message).toMatch(/empty/);
  });

  it('refuses a record with another number of fields, or NUL text, row by row', () => {
    const rows = read(ImportFormat.Csv, ['external_id,full_name\na,b,c\nd,e\u0000f\n']);
    expect(rows.map(({ row, problem }) => ({ row, problem }))).toEqual([
      {
        row: 1,
        problem: {
          code: 'validation_failed',
          field: null,
          message: 'The record has 3 fields; the header has 2.',
        },
      },
      { row: 2, problem: expect.objectContaining({ code: 'validation_failed', field: 'full_name' }) },
    ]);
  });

  it('reads JSON Lines across chunks, CRLF and blank lines, refusing lines that are not objects', () => {
    const rows = read(ImportFormat.Jsonl, ['{"external_id":"a"}\r\n\r\n{"exter', 'nal_id":"b"}\n[1]\n{oops']);
    expect(rows.map(({ row, data, problem }) => [row, data, problem?.code ?? null])).toEqual([
      [1, { external_id: 'a' }, null],
      [2, { external_id: 'b' }, null],
      [3, null, 'invalid_json'],
      [4, null, 'invalid_json'],
    ]);
  });
});
