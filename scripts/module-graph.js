'use strict';
/**
 * The module graph of docs/architecture.md, read from the real imports of src/ (`npm run docs:graph`; CI runs
 * `npm run docs:graph -- --check`, which fails when the committed block differs from what the code says).
 *
 * - A module is a top-level folder of src/ other than the shared infrastructure (src/common, src/config,
 *   src/database). The files at src/ root (main.ts, app.module.ts, app.factory.ts, openapi.ts, swagger.ts: the
 *   wiring that starts the server and builds the OpenAPI document) are one node, `app`.
 * - An edge `a --> b` is a file of src/a importing src/b (a relative `../b…` path resolved, or the `src/b…` base
 *   path), in an import or export declaration, an `import x = require()`, a `require()` or an `import()`. An edge
 *   whose every import is `import type` / `export type` (erased at run time) is drawn dotted, `a -.-> b`; one whose
 *   every import is in a `*.entity.ts` file (a relation to the other module's entity, e.g. every tenant-owned row's
 *   to gateway's `Tenant`) is labelled `entities`.
 *   *.spec.ts files are left out: the graph is the one the server runs.
 * - Edges to shared infrastructure are not drawn (every module uses it), nor are the shared folders' own imports of
 *   domains: the boundary lint (eslint.boundaries.mjs) allows only the entity registries (src/database/entities.ts,
 *   the migrations) to import a domain's `*.entity` files.
 * - The public surface of each module is what its `src/<module>/index.ts` exports, read from its export
 *   declarations (`export type` names are marked `type`).
 * - The "May call" column of the modules table (the row of each module, outside the generated block) must name
 *   exactly the modules its node imports; the script does not rewrite that column (its prose is hand written), it
 *   fails naming the row to fix.
 *
 * The block is written between `<!-- module-graph:start -->` and `<!-- module-graph:end -->`, sorted, so the same
 * code gives the same text. Usage: node scripts/module-graph.js [--check] [--root <dir>] (the tests use --root).
 */
const { existsSync, readFileSync, readdirSync, writeFileSync } = require('node:fs');
const { join, posix, resolve } = require('node:path');
const ts = require('typescript');
const { splitRow } = require('./markdown-table');

const DOC = 'docs/architecture.md';
const START = '<!-- module-graph:start -->';
const END = '<!-- module-graph:end -->';
const APP = 'app';
/** Shared infrastructure, drawn as one box with what each folder holds. */
const SHARED = {
  common:
    'common: errors, envelope, validation, auth decorators and scopes, clock, metadata, money, pagination, request context',
  config: 'config',
  database: 'database: data source, migrations, transaction runner, prepared queries',
};
const MAY_CALL = 'May call';

const argv = process.argv.slice(2);
const rootArg = argv.indexOf('--root');
const root = rootArg >= 0 ? resolve(argv[rootArg + 1]) : join(__dirname, '..');
const check = argv.includes('--check');

// ---------------------------------------------------------------------------------------------------------------
// Files and their imports

/** Every .ts file under `dir`, as a path relative to `root` with `/` separators, sorted. */
function listTs(dir) {
  const out = [];
  const walk = (at) => {
    for (const entry of readdirSync(join(root, at), { withFileTypes: true })) {
      const path = posix.join(at, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') {
          walk(path);
        }
      } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
        out.push(path);
      }
    }
  };
  walk(dir);
  return out.sort();
}

function parse(path) {
  return ts.createSourceFile(path, readFileSync(join(root, path), 'utf8'), ts.ScriptTarget.Latest, true);
}

/** The module specifiers a file imports: [{ specifier, typeOnly }]. */
function importsOf(sf) {
  const found = [];
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly = Boolean(
        clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((element) => element.isTypeOnly))),
      );
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const typeOnly =
        node.isTypeOnly ||
        Boolean(
          node.exportClause &&
          ts.isNamedExports(node.exportClause) &&
          node.exportClause.elements.length > 0 &&
          node.exportClause.elements.every((element) => element.isTypeOnly),
        );
      found.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      found.push({ specifier: node.moduleReference.expression.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
      node.arguments.length === 1 &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      found.push({ specifier: node.arguments[0].text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/** The src/-relative path an import of `file` points at (`billing/index`), or null for a package. */
function target(file, specifier) {
  if (specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..') {
    const path = posix.normalize(posix.join(posix.dirname(file), specifier));
    return path === 'src' || path.startsWith('src/') ? path.slice('src/'.length) : null;
  }
  if (specifier.startsWith('src/')) {
    return specifier.slice('src/'.length);
  }
  return null;
}

/** The node a src/-relative path belongs to: its top-level folder, or `app` for a file at src/ root. */
function nodeOf(srcPath, folders) {
  const [first, ...rest] = srcPath.split('/');
  if (rest.length > 0 || folders.has(first)) {
    return first;
  }
  return APP;
}

// ---------------------------------------------------------------------------------------------------------------
// The graph and the surface

function readGraph() {
  const folders = new Set(
    readdirSync(join(root, 'src'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name),
  );
  const modules = [...folders].filter((name) => !Object.hasOwn(SHARED, name)).sort();
  const files = listTs('src').filter((path) => !path.endsWith('.spec.ts'));
  /** `from>to` -> the edge: whether some import of it is a runtime one, whether all come from *.entity.ts files. */
  const edges = new Map();
  const appFiles = [];
  for (const file of files) {
    const from = nodeOf(file.slice('src/'.length), folders);
    if (Object.hasOwn(SHARED, from)) {
      continue;
    }
    if (from === APP) {
      appFiles.push(file.slice('src/'.length));
    }
    for (const { specifier, typeOnly } of importsOf(parse(file))) {
      const path = target(file, specifier);
      if (path === null || path === '') {
        continue;
      }
      const to = nodeOf(path, folders);
      if (to === from || Object.hasOwn(SHARED, to) || to === APP) {
        continue;
      }
      const key = `${from}>${to}`;
      const edge = edges.get(key) ?? { from, to, runtime: false, entities: true };
      edge.runtime ||= !typeOnly;
      edge.entities &&= file.endsWith('.entity.ts');
      edges.set(key, edge);
    }
  }
  const list = [...edges.values()].sort((a, b) => compare(a.from, b.from) || compare(a.to, b.to));
  return { modules, appFiles, edges: list };
}

const compare = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
const byName = (a, b) => compare(a.toLowerCase(), b.toLowerCase()) || compare(a, b);

/** What src/<module>/index.ts exports: sorted names, `type X` for type-only ones; null when there is no index.ts. */
function surfaceOf(module) {
  const path = `src/${module}/index.ts`;
  if (!existsSync(join(root, path))) {
    return null;
  }
  const names = new Set();
  const add = (name, typeOnly) => names.add(typeOnly ? `type ${name}` : name);
  const exported = (node) =>
    ts.canHaveModifiers(node) &&
    (ts.getModifiers(node) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
  for (const statement of parse(path).statements) {
    if (ts.isExportDeclaration(statement)) {
      if (!statement.exportClause) {
        add(`* from '${statement.moduleSpecifier.text}'`, statement.isTypeOnly);
      } else if (ts.isNamespaceExport(statement.exportClause)) {
        add(statement.exportClause.name.text, statement.isTypeOnly);
      } else {
        for (const element of statement.exportClause.elements) {
          add(element.name.text, statement.isTypeOnly || element.isTypeOnly);
        }
      }
    } else if (ts.isExportAssignment(statement)) {
      add('default', false);
    } else if (exported(statement)) {
      const typeOnly = ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement);
      if (ts.isVariableStatement(statement)) {
        for (const declaration of statement.declarationList.declarations) {
          add(declaration.name.getText(), false);
        }
      } else if (statement.name) {
        add(statement.name.text, typeOnly);
      }
    }
  }
  return [...names].sort((a, b) => byName(a.replace(/^type /, ''), b.replace(/^type /, '')));
}

function render({ modules, appFiles, edges }) {
  const nodes = appFiles.length > 0 ? [APP, ...modules] : modules;
  const out = [
    START,
    '<!-- Generated by `npm run docs:graph` (scripts/module-graph.js) from the imports of src/: do not edit by hand. -->',
    '',
    '```mermaid',
    'flowchart TD',
    ...nodes.map((node) => (node === APP ? `  ${APP}["${APP}: ${appFiles.join(', ')}"]` : `  ${node}`)),
    ...edges.map(
      ({ from, to, runtime, entities }) =>
        `  ${from} ${runtime ? '-->' : '-.->'}${entities ? '|entities|' : ''} ${to}`,
    ),
    '  subgraph shared [shared infrastructure: every module may use it, it uses none]',
    ...Object.entries(SHARED).map(([id, label]) => `    ${id}[${label}]`),
    '  end',
    '```',
    '',
    '| Module | Public surface: what `src/<module>/index.ts` exports |',
    '| --- | --- |',
    ...modules.map((module) => {
      const surface = surfaceOf(module);
      const cell =
        surface === null
          ? 'no `index.ts`: nothing imports it'
          : surface.length === 0
            ? 'nothing'
            : surface.map((name) => `\`${name}\``).join(', ');
      return `| ${module} | ${cell} |`;
    }),
    END,
  ];
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// The "May call" column

/** The modules a "May call" cell names: the first word of each comma-separated item, parentheses left out. */
function namedIn(cell) {
  let plain = cell;
  for (let previous = ''; previous !== plain;) {
    previous = plain;
    plain = plain.replace(/\([^()]*\)/g, '');
  }
  return plain
    .split(',')
    .map((item) => item.trim().split(/\s+/)[0].replace(/`/g, ''))
    .filter(Boolean);
}

/** Problems with the rows of the table that has a "May call" column, against the graph. */
function checkMayCall(lines, { modules, edges }) {
  const problems = [];
  const header = lines.findIndex((line) => line.startsWith('|') && splitRow(line).includes(MAY_CALL));
  if (header < 0) {
    return [`${DOC}: no table with a "${MAY_CALL}" column.`];
  }
  const column = splitRow(lines[header]).indexOf(MAY_CALL);
  const seen = new Set();
  for (let i = header + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const cells = splitRow(lines[i]);
    const module = (cells[0] ?? '').replace(/`/g, '');
    if (!modules.includes(module)) {
      problems.push(
        `${DOC}:${i + 1}: the row "${module}" is not a module (a folder of src/ other than shared ones).`,
      );
      continue;
    }
    seen.add(module);
    const named = new Set(namedIn(cells[column] ?? '').filter((name) => modules.includes(name)));
    const imports = new Set(edges.filter((edge) => edge.from === module).map((edge) => edge.to));
    const missing = [...imports].filter((name) => !named.has(name)).sort();
    const extra = [...named].filter((name) => !imports.has(name)).sort();
    if (missing.length > 0 || extra.length > 0) {
      const parts = [
        missing.length > 0 ? `add ${missing.join(', ')} (imported by src/${module})` : '',
        extra.length > 0 ? `drop ${extra.join(', ')} (src/${module} imports none of it)` : '',
      ].filter(Boolean);
      problems.push(`${DOC}:${i + 1}: the "${MAY_CALL}" cell of ${module}: ${parts.join('; ')}.`);
    }
  }
  for (const module of modules.filter((name) => !seen.has(name))) {
    problems.push(`${DOC}: the modules table has no row for ${module}.`);
  }
  return problems;
}

// ---------------------------------------------------------------------------------------------------------------

function lineDiff(committed, generated) {
  const before = new Set(committed.split('\n'));
  const after = new Set(generated.split('\n'));
  return [
    ...committed
      .split('\n')
      .filter((line) => !after.has(line))
      .map((line) => `  - ${line}`),
    ...generated
      .split('\n')
      .filter((line) => !before.has(line))
      .map((line) => `  + ${line}`),
  ];
}

function main() {
  const docPath = join(root, DOC);
  const text = readFileSync(docPath, 'utf8');
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) {
    process.stderr.write(`module-graph: ${DOC} has no ${START} … ${END} block to hold the module graph.\n`);
    process.exitCode = 1;
    return;
  }
  const graph = readGraph();
  const generated = render(graph);
  const committed = text.slice(start, end + END.length);
  const next = text.slice(0, start) + generated + text.slice(end + END.length);
  // Line numbers are those of the doc as it stands once this run is over.
  const problems = checkMayCall((check ? text : next).split('\n'), graph);
  if (check) {
    if (committed !== generated) {
      problems.unshift(
        `${DOC}: the module graph differs from the imports of src/; run \`npm run docs:graph\` and commit the result:\n${lineDiff(committed, generated).join('\n')}`,
      );
    }
  } else if (committed !== generated) {
    writeFileSync(docPath, next);
    process.stdout.write(`module-graph: wrote the module graph of ${DOC}.\n`);
  }
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`);
    process.stderr.write(
      `module-graph: ${problems.length} problem(s): ${DOC} does not match the imports of src/.\n`,
    );
    process.exitCode = 1;
    return;
  }
  process.stdout.write(
    `module-graph: ${DOC} matches the imports of src/ (${graph.modules.length} modules, ${graph.edges.length} edges).\n`,
  );
}

main();
