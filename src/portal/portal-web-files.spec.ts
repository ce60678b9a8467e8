import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { PORTAL_WEB_ROOT } from './portal-web';

/** The portal's files (plain ES modules, no build step): what no compiler checks for them is checked here. */
function files(dir = PORTAL_WEB_ROOT): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? files(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

const scripts = files().filter((file) => file.endsWith('.js'));
const source = (file: string) => readFileSync(file, 'utf8');

/** The keys of one language's messages (`  key: '…'` lines of messages/<lang>.js). */
function keysOf(language: string): string[] {
  return [...source(join(PORTAL_WEB_ROOT, 'messages', `${language}.js`)).matchAll(/^ {2}(\w+):/gm)].map(
    (match) => match[1],
  );
}

describe('portal web files', () => {
  it('should import only files that exist, by relative paths (a browser resolves no package name)', () => {
    const broken: string[] = [];
    for (const file of scripts) {
      for (const [, target] of source(file).matchAll(/^import [^;]*? from '([^']+)';$/gms)) {
        if (!target.startsWith('./') && !target.startsWith('../')) {
          broken.push(`${relative(PORTAL_WEB_ROOT, file)}: ${target} is not relative`);
        } else if (!existsSync(join(dirname(file), target))) {
          broken.push(`${relative(PORTAL_WEB_ROOT, file)}: ${target} does not exist`);
        }
      }
    }
    expect(scripts.length).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it('should have every message in every language, and every message a page asks for', () => {
    const english = keysOf('en');
    for (const language of ['de', 'fr', 'es']) {
      expect({ language, keys: keysOf(language).sort() }).toEqual({ language, keys: [...english].sort() });
    }
    const asked = scripts.flatMap((file) =>
      [...source(file).matchAll(/\bt\('(\w+)'/g)].map((match) => match[1]),
    );
    expect(asked.length).toBeGreaterThan(50);
    expect(asked.filter((key) => !english.includes(key))).toEqual([]);
  });

  it('should build elements with the DOM API only: no HTML from strings, no eval, no inline styles', () => {
    const found = scripts.flatMap((file) =>
      [
        ...source(file).matchAll(
          /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(|new Function|\.style\b/g,
        ),
      ].map((match) => `${relative(PORTAL_WEB_ROOT, file)}: ${match[0]}`),
    );
    expect(found).toEqual([]);
  });
});
