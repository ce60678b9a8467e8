// @ts-check
/**
 * Module boundaries (docs/architecture.md), spread into eslint.config.mjs and run alone by scripts/check-boundaries.sh.
 *
 * - A file under src/<domain>/ imports another domain only through its public entry src/<other>/index.ts
 *   (`from '../billing'`), never a file inside it; and its own domain's files directly, never its own index.ts.
 * - Shared infrastructure (src/common, src/config, src/database) imports no domain at all; only the entity registries
 *   (src/database/entities.ts, src/database/migrations/**) may import a domain's `*.entity` files.
 * - `house/no-domain-cycle`: no import cycle between domains (subscribers → billing → subscribers), counted on the
 *   runtime imports (`import type` is erased, so it never closes a cycle).
 *
 * `no-restricted-imports` options do not merge across config objects (the last one that matches a file wins), so each
 * folder depth of each folder gets one object with everything it may not import; the patterns count the `../` up to
 * src/ exactly, so a domain's own subfolder that happens to share another domain's name is never mistaken for it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import tseslint from 'typescript-eslint';

/** Every domain, including those not written yet, so the rule holds the day they land. */
export const DOMAINS = [
  'subscribers',
  'billing',
  'events',
  'webhooks',
  'gateway',
  'cli',
  'tickets',
  'provisioning',
  'automation',
  'notifications',
  'test-clocks',
];
/** Shared infrastructure: used by every domain, uses none. */
export const SHARED = ['common', 'config', 'database'];
/** Deepest folder nesting under src/<folder>/ the globs cover (src/billing/invoices/dto/x.ts is 2). */
const MAX_DEPTH = 6;

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** `../` as many times as it takes to climb from a file `depth` folders below src/<folder>/ to src/. */
const up = (depth) => '../'.repeat(depth + 1);
const filesAt = (folder, depth) => [`src/${folder}/${'*/'.repeat(depth)}*.ts`];

/**
 * What a file of domain `own`, `depth` folders deep, may not import: other domains' insides, and its own entry (a
 * cycle through its own barrel hands a class that is still loading over as undefined).
 */
function domainPatterns(own, depth) {
  const ownEntry = depth === 0 ? '\\.' : `\\.\\.(?:/\\.\\.){${depth - 1}}`;
  const self = {
    regex: `^(?:${ownEntry}/?|${escape(up(depth))}${own}/?|src/${own}/?)(?:index)?$`,
    message: `Inside src/${own}, import its files directly, never its own entry src/${own}/index.ts.`,
  };
  return [
    self,
    ...DOMAINS.filter((other) => other !== own).map((other) => ({
      regex: `^(?:${escape(up(depth))}|src/)${other}/(?!index$)`,
      message: `${other} is used only through its public entry src/${other}/index.ts: import from '${up(depth)}${other}'.`,
    })),
  ];
}

/** What shared infrastructure may not import: any domain, its entry included (or, for the registries, but entities). */
function sharedPatterns(folder, depth, entitiesOnly) {
  return DOMAINS.map((other) => ({
    regex: entitiesOnly
      ? `^(?:${escape(up(depth))}|src/)${other}(?:$|/(?!.*\\.entity$))`
      : `^(?:${escape(up(depth))}|src/)${other}(?:$|/)`,
    message: entitiesOnly
      ? `The entity registry imports only a domain's *.entity files, not ${other}'s other code.`
      : `src/${folder} is shared infrastructure and imports no domain (${other}): move what both need into src/common, or let the domain hand it in.`,
  }));
}

const restrict = (files, patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});

const depths = [...Array(MAX_DEPTH + 1).keys()];
const folderConfigs = [
  ...DOMAINS.flatMap((domain) => depths.map((d) => restrict(filesAt(domain, d), domainPatterns(domain, d)))),
  ...SHARED.flatMap((folder) =>
    depths.map((d) => restrict(filesAt(folder, d), sharedPatterns(folder, d, false))),
  ),
  // After the src/database objects, so they win for these files.
  restrict(['src/database/entities.ts'], sharedPatterns('database', 0, true)),
  // The wiring at the top of src/ (app.module, app.factory, main, openapi, swagger) uses domains through their entries.
  restrict(
    ['src/*.ts'],
    DOMAINS.map((other) => ({
      regex: `^(?:\\./|src/)${other}/(?!index$)`,
      message: `${other} is used only through its public entry src/${other}/index.ts: import from './${other}'.`,
    })),
  ),
  ...depths
    .slice(1)
    .map((d) =>
      restrict(filesAt(`database/migrations${'/*'.repeat(d - 1)}`, 0), sharedPatterns('database', d, true)),
    ),
];

// ---------------------------------------------------------------------------------------------------------------
// house/no-domain-cycle: the domain graph is read from the files on disk (a regex over their import lines, cached
// for a second), the file being linted contributes its own imports from its AST.

/** Runtime imports of a source text (`import type` / `export type` are erased and left out). */
const IMPORT_LINE = /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s*)?['"]([^'"]+)['"]/gm;

function domainOf(root, domains, file) {
  const [first] = relative(root, file).split(sep);
  return domains.includes(first) ? first : null;
}

function targetOf(root, file, source) {
  if (source.startsWith('.')) {
    return resolve(dirname(file), source);
  }
  if (source.startsWith('src/')) {
    return join(root, source.slice('src/'.length));
  }
  return null;
}

function* tsFiles(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      yield* tsFiles(path);
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
      yield path;
    }
  }
}

/** domain -> Map(other domain -> one file that makes the edge), from the files on disk. */
function buildGraph(root, domains) {
  const graph = new Map(domains.map((d) => [d, new Map()]));
  for (const domain of domains) {
    let files;
    try {
      files = [...tsFiles(join(root, domain))];
    } catch {
      continue; // a domain not written yet
    }
    for (const file of files) {
      for (const [, source] of readFileSync(file, 'utf8').matchAll(IMPORT_LINE)) {
        const target = targetOf(root, file, source);
        const other = target && domainOf(root, domains, target);
        if (other && other !== domain && !graph.get(domain)?.has(other)) {
          graph.get(domain)?.set(other, relative(root, file));
        }
      }
    }
  }
  return graph;
}

const graphCache = new Map();
function graphOf(root, domains) {
  const key = `${root}|${domains.join(',')}`;
  const cached = graphCache.get(key);
  if (cached && Date.now() - cached.at < 1000) {
    return cached.graph;
  }
  const graph = buildGraph(root, domains);
  graphCache.set(key, { graph, at: Date.now() });
  return graph;
}

/** A path from `from` to `to` in the graph (breadth first, so the shortest), or null. */
function pathBetween(graph, from, to) {
  const previous = new Map([[from, null]]);
  const queue = [from];
  while (queue.length > 0) {
    const node = /** @type {string} */ (queue.shift());
    if (node === to) {
      const path = [];
      for (let at = node; at !== null; at = previous.get(at)) {
        path.unshift(at);
      }
      return path;
    }
    for (const next of graph.get(node)?.keys() ?? []) {
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return null;
}

/** @type {import('eslint').Rule.RuleModule} */
const noDomainCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'No import cycle between domains (src/<domain>/)' },
    schema: [
      {
        type: 'object',
        properties: { root: { type: 'string' }, domains: { type: 'array', items: { type: 'string' } } },
        additionalProperties: false,
      },
    ],
    messages: {
      cycle:
        '{{own}} imports {{other}}, which imports {{own}} back ({{path}}; e.g. {{via}}): a cycle between domains.',
    },
  },
  create(context) {
    const options = context.options[0] ?? {};
    const root = resolve(context.cwd, options.root ?? 'src');
    const domains = options.domains ?? DOMAINS;
    const own = domainOf(root, domains, context.filename);
    if (!own) {
      return {};
    }
    const check = (node) => {
      if (!node.source || node.importKind === 'type' || node.exportKind === 'type') {
        return;
      }
      const target = targetOf(root, context.filename, String(node.source.value));
      const other = target && domainOf(root, domains, target);
      if (!other || other === own) {
        return;
      }
      const graph = graphOf(root, domains);
      const back = pathBetween(graph, other, own);
      if (back) {
        const via = graph.get(back[back.length - 2])?.get(own) ?? '?';
        context.report({
          node: node.source,
          messageId: 'cycle',
          data: { own, other, path: [own, ...back].join(' → '), via },
        });
      }
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check };
  },
};

export const housePlugin = { meta: { name: 'house' }, rules: { 'no-domain-cycle': noDomainCycle } };

/** The boundary rules, as eslint.config.mjs spreads them. */
export const boundaryConfigs = [
  { files: ['src/**/*.ts'], plugins: { house: housePlugin } },
  ...folderConfigs,
  {
    files: DOMAINS.map((domain) => `src/${domain}/**/*.ts`),
    ignores: ['**/*.spec.ts'],
    rules: { 'house/no-domain-cycle': 'error' },
  },
];

/**
 * The boundary rules alone (scripts/check-boundaries.sh, test/lint/boundaries.spec.ts): the TypeScript parser without
 * type information (fast), and no report of `eslint-disable` comments left unused because their rules are not run.
 */
export default [
  {
    files: ['src/**/*.ts'],
    languageOptions: { parser: tseslint.parser },
    linterOptions: { reportUnusedDisableDirectives: 'off' },
  },
  ...boundaryConfigs,
];
