import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_CATALOG } from './error-catalog';
import { renderErrorsDoc } from './error-docs';

const ROOT = join(__dirname, '..', '..', '..');
const ERRORS_DOC = join(ROOT, 'docs', 'errors.md');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return sourceFiles(path);
    }
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The code of every ApiError constructed in src (specs aside), with the file that makes it. */
function thrownCodes(): { code: string; file: string }[] {
  return sourceFiles(join(ROOT, 'src')).flatMap((file) =>
    [...readFileSync(file, 'utf8').matchAll(/new ApiError\(\s*'([^']*)'/g)].map((match) => ({
      code: match[1],
      file: file.slice(ROOT.length + 1),
    })),
  );
}

describe('error catalog', () => {
  it('should match docs/errors.md (run `npm run docs:errors` after changing the catalog)', () => {
    expect(readFileSync(ERRORS_DOC, 'utf8')).toBe(renderErrorsDoc());
  });

  it('should hold every code the source throws', () => {
    const thrown = thrownCodes();
    expect(thrown.length).toBeGreaterThan(10); // the scan itself works
    const unknown = thrown.filter(({ code }) => !(code in ERROR_CATALOG));
    expect(unknown).toEqual([]);
  });

  it('should document every code with its status', () => {
    const doc = readFileSync(ERRORS_DOC, 'utf8');
    const documented = new Map(
      [...doc.matchAll(/^\| (\d{3}) +\| `([a-z_]+)` +\|/gm)].map((match) => [match[2], Number(match[1])]),
    );
    const catalog = Object.entries(ERROR_CATALOG).map(([code, { status }]) => [code, status]);
    expect(catalog.filter(([code, status]) => documented.get(code as string) !== status)).toEqual([]);
    expect(documented.size).toBe(catalog.length);
  });

  it('should render a row per code, in status order, escaping pipes', () => {
    const doc = renderErrorsDoc({
      b_code: { status: 422, description: 'second | with a pipe' },
      a_code: { status: 400, description: 'first' },
    });
    const rows = doc.split('\n').filter((line) => /^\| \d{3}/.test(line));
    expect(rows).toEqual([
      '| 400    | `a_code` | first                 |',
      '| 422    | `b_code` | second \\| with a pipe |',
    ]);
  });
});
