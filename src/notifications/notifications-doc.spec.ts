import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { alwaysSent, type NotificationKind, NOTIFICATION_KIND_SPECS, TEMPLATE_VARIABLES } from './kinds';

/** docs/notifications.md is the reference templates are written against: it must say what kinds.ts says. */
const doc = readFileSync(join(__dirname, '..', '..', 'docs', 'notifications.md'), 'utf8');

/** The text of the `### \`kind\`` section, up to the next heading. */
function section(kind: string): string {
  const start = doc.indexOf(`### \`${kind}\`\n`);
  if (start < 0) {
    return '';
  }
  const next = doc.slice(start + 1).search(/\n##/);
  return next < 0 ? doc.slice(start) : doc.slice(start, start + 1 + next);
}

describe('docs/notifications.md', () => {
  it.each(Object.entries(NOTIFICATION_KIND_SPECS))(
    'has %s with its trigger and every variable',
    (kind, spec) => {
      const text = section(kind);
      expect(text).not.toBe('');
      expect(text).toContain(`**Trigger**: \`${spec.trigger.event}\`.`);
      const listed = /\*\*Variables\*\*: (.*)/.exec(text)?.[1] ?? '';
      expect(listed.split(', ').map((each) => each.replace(/`/g, ''))).toEqual([...spec.variables]);
      expect(text.includes('cannot switch it off')).toBe(alwaysSent(kind as NotificationKind));
    },
  );

  it('lists every variable in its table with its type, and no other', () => {
    const rows = [...doc.matchAll(/^\| `([a-z_.]+)` \| ([a-z]+)/gm)].map((match) => [match[1], match[2]]);
    expect(rows).toEqual(Object.entries(TEMPLATE_VARIABLES).map(([name, variable]) => [name, variable.type]));
  });
});
