import { ERROR_CATALOG } from './error-catalog';

type Catalog = Record<string, { status: number; description: string }>;

const INTRO = `# Errors

<!-- Generated from src/common/errors/error-catalog.ts by \`npm run docs:errors\`; do not edit by hand.
     A unit test (src/common/errors/error-catalog.spec.ts) fails when this file and the catalog drift apart. -->

Every failure, on every endpoint, is answered with the same envelope:

\`\`\`json
{
  "success": false,
  "error": {
    "code": "duplicate_subscriber",
    "message": "A subscriber with the supplied external_id already exists.",
    "field": "external_id"
  },
  "meta": { "request_id": "req_01JD3Z6W3R4T5Y6U7I8O9P0QAB", "api_version": "v1" }
}
\`\`\`

- \`error.code\` is stable and machine-readable: branch on it, never on \`message\`, which is for people and may change.
- \`error.field\` is the dotted path of the offending request field (\`address.postal_code\`), or \`null\`.
- \`meta.request_id\` is also sent as the \`X-Request-ID\` header; quote it when reporting a problem.
- 401 responses carry \`WWW-Authenticate: Bearer\`; 429 responses carry \`Retry-After\` (seconds).

**400 or 422?** 400 means the request's shape is wrong: the body is not JSON, a required field is absent (or
\`null\`), or a field the endpoint does not know is sent. 422 means the field is there but its value is wrong: type,
format, length, range, enum, or a reference to a record that does not exist.

## Codes
`;

/** A Markdown table with padded columns, laid out as Prettier would, so formatting the docs leaves it alone. */
function table(header: string[], rows: string[][]): string[] {
  const cells = [header, ...rows].map((row) => row.map((text) => text.replace(/\|/g, '\\|')));
  const widths = header.map((_, column) => Math.max(3, ...cells.map((row) => row[column].length)));
  const line = (row: string[]) => `| ${row.map((text, column) => text.padEnd(widths[column])).join(' | ')} |`;
  const [head, ...body] = cells;
  return [line(head), line(widths.map((width) => '-'.repeat(width))), ...body.map(line)];
}

/** docs/errors.md, rendered from the catalog: the envelope, the 400-vs-422 rule and one row per code. */
export function renderErrorsDoc(catalog: Catalog = ERROR_CATALOG): string {
  const rows = Object.entries(catalog)
    .map(([code, entry], order) => ({ code, ...entry, order }))
    .sort((a, b) => a.status - b.status || a.order - b.order)
    .map((entry) => [String(entry.status), `\`${entry.code}\``, entry.description]);
  return [INTRO, ...table(['Status', 'Code', 'Meaning'], rows), ''].join('\n');
}
