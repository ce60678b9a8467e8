import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './app-config';

/** The README's configuration table: each variable named in a row's first cell, with that row's text. */
function configurationRows(): Map<string, string> {
  const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
  const section = readme.slice(
    readme.indexOf('## Configuration'),
    readme.indexOf('\n## ', readme.indexOf('## Configuration') + 1),
  );
  const rows = new Map<string, string>();
  for (const line of section.split('\n').filter((text) => /^\| `/.test(text))) {
    const first = line.split('|')[1];
    for (const [, name] of first.matchAll(/`([A-Z0-9_]+)`/g)) {
      rows.set(name, line.replace(/(\d),(\d)/g, '$1$2'));
    }
  }
  return rows;
}

/** Every variable loadConfig reads, found by handing it an environment that records each name asked for. */
function variablesRead(): string[] {
  const read = new Set<string>();
  loadConfig(
    new Proxy<Record<string, string | undefined>>(
      {},
      {
        get: (_target, name) => {
          read.add(String(name));
          return undefined;
        },
      },
    ),
  );
  return [...read].sort();
}

/** The bounds a whole-number variable is checked against, from the error a far too large value gets. */
function integerBounds(name: string): [number, number] | null {
  try {
    loadConfig({ [name]: '99999999999999' });
  } catch (error) {
    const match = error instanceof ConfigError ? /must be between (\d+) and (\d+)/.exec(error.message) : null;
    return match ? [Number(match[1]), Number(match[2])] : null;
  }
  return null;
}

describe('README configuration table', () => {
  const rows = configurationRows();
  const variables = variablesRead();

  it('should find the variables the code reads', () => {
    expect(variables).toEqual(expect.arrayContaining(['PORT', 'HOST', 'CORS_ORIGINS', 'RATE_LIMIT_MAX']));
  });

  it.each(variables)('should document %s', (name) => {
    expect(rows.has(name)).toBe(true);
  });

  it.each(variables.filter((name) => integerBounds(name) !== null))(
    'should state the bounds the boot enforces on %s',
    (name) => {
      const [min, max] = integerBounds(name)!;
      expect(rows.get(name)).toContain(`${min}–${max}`);
    },
  );
});
