/**
 * A strict reader of RFC 4180 (records end with CRLF; a quoted field may hold `"` doubled, commas, CR and LF):
 * anything else after a closing quote, a bare quote or LF in an unquoted field, or a last record without CRLF throws.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) {
          throw new Error('unterminated quoted field');
        }
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r') {
        if (text[i] === '"' || text[i] === '\n') {
          throw new Error(`bare ${JSON.stringify(text[i])} at ${i}`);
        }
        field += text[i++];
      }
    }
    record.push(field);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
      continue;
    }
    throw new Error(`expected , or CRLF at ${i}`);
  }
  if (record.length > 0) {
    throw new Error('the last record has no CRLF');
  }
  return records;
}

/** A CSV's records as objects keyed by its header record. */
export function csvObjects(text: string): Record<string, string>[] {
  const [header, ...rows] = parseCsv(text);
  return rows.map((row) => {
    expect(row).toHaveLength(header.length);
    return Object.fromEntries(header.map((name, i) => [name, row[i]]));
  });
}
