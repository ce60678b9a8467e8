'use strict';
/**
 * One owner per table (issues 28 and 30), the second half of `npm run lint:data-access` (scripts/check-data-access.sh
 * runs it after its SQL-outside-repositories check). The "Owns (tables)" column of docs/architecture.md's table of modules
 * is the data: a row's backticked names are the tables its module (src/<module>) owns; a backticked `sub/folder/`
 * in the cell narrows the owner of the names after it to src/<module>/sub/folder (billing's `invoices/`, `ledger/`…).
 *
 * It fails, listing file:line,
 * - on every write to a table from a file outside the table's owner folder, and on every write to a table no row
 *   owns. Writes are read from the syntax of src/**\/*.ts (migrations and *.spec.ts left out): SQL text (INSERT INTO,
 *   UPDATE … SET, DELETE FROM, TRUNCATE, MERGE INTO, COPY … FROM; an upsert is its INSERT) in string and template
 *   literals and `+` chains of them, and TypeORM writes (insert, update, delete, save, upsert, remove, softDelete,
 *   restore, increment, decrement, clear) on an entity class (`manager.insert(Invoice, …)`, a query builder's
 *   `.update(Invoice)`, `.insert().into(Invoice)`, `.delete().from(Invoice)`, `getRepository(Invoice).delete(…)`, a
 *   `Repository<Invoice>` property), an entity's table being its @Entity name. A table name that is a template
 *   placeholder is followed to the string literals it can be (a constant, a literal-union parameter type, the array a
 *   for-of walks, a function parameter through every call of that function: the write is then the call's, so a shared
 *   helper in src/database counts where it is called). A write whose table it cannot tell fails too.
 * - on every read of a table from outside its owner's module (src/<module>, whatever sub-folder owns it for writes:
 *   any folder of billing reads billing's tables). Reads are SQL text naming the table after FROM, JOIN or USING, or
 *   in a `FROM a x, b y` list (a join and a subquery are reads too), placeholders followed as for writes; and TypeORM
 *   reads on its entity class (find*, count*, exists*, createQueryBuilder, getRepository, a query builder's from and
 *   join*, @InjectRepository, a `Repository<Entity>` property). Another module's table is read through what that
 *   module's src/<module>/index.ts exports: a repository or service method, or, for a join inside one statement, a
 *   fragment the owner builds (`subscribersTable('s')`), so the text naming the table stays in the owner's folder.
 *   A name that is no table (a CTE, a function such as jsonb_to_recordset, a column in EXTRACT(… FROM col)) is no
 *   read; a DELETE FROM is its write.
 * - on the doc: a table of an @Entity or of a migration (CREATE TABLE, less DROP TABLE and renames, in their `up`
 *   order) that no row owns, a table two rows own, a backticked token that is neither a table nor a `sub-folder/`.
 * Tables the doc lists that no entity or migration creates yet are only noted.
 *
 * Usage: node scripts/check-data-access.js [--root <dir>] [--verbose] (--verbose lists every write and read found).
 */
const { readFileSync, readdirSync } = require('node:fs');
const { join, resolve } = require('node:path');
const ts = require('typescript');
const { splitRow } = require('./markdown-table');

const DOC = 'docs/architecture.md';
const OWNS = 'Owns (tables)';
const MIGRATIONS = 'src/database/migrations/';

const argv = process.argv.slice(2);
const rootArg = argv.indexOf('--root');
const root = rootArg >= 0 ? resolve(argv[rootArg + 1]) : join(__dirname, '..');
const verbose = argv.includes('--verbose');

const problems = [];
const notes = [];

// ---------------------------------------------------------------------------------------------------------------
// Files

function listTs(dir, base = dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') {
        listTs(path, base, out);
      }
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) {
      out.push(
        path
          .slice(base.length + 1)
          .split('\\')
          .join('/'),
      );
    }
  }
  return out;
}

const files = listTs(join(root, 'src'))
  .map((path) => `src/${path}`)
  .filter((path) => !path.endsWith('.spec.ts'))
  .sort()
  .map((path) => {
    const sf = ts.createSourceFile(
      path,
      readFileSync(join(root, path), 'utf8'),
      ts.ScriptTarget.Latest,
      true,
    );
    return { path, sf, imports: importsOf(sf), migration: path.startsWith(MIGRATIONS) };
  });
const code = files.filter((file) => !file.migration);

/** Local name → exported name, for `import { A as B }`. */
function importsOf(sf) {
  const imports = new Map();
  for (const statement of sf.statements) {
    const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : undefined;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        imports.set(element.name.text, (element.propertyName ?? element.name).text);
      }
    }
  }
  return imports;
}

const lineOf = (file, node) => file.sf.getLineAndCharacterOfPosition(node.getStart(file.sf)).line + 1;

function walk(node, visit) {
  const recurse = (child) => {
    if (visit(child) !== false) {
      ts.forEachChild(child, recurse);
    }
  };
  ts.forEachChild(node, recurse);
}

// ---------------------------------------------------------------------------------------------------------------
// The doc's ownership

/** table → [{ owner, line }] from the "Owns (tables)" column. */
function readOwnership() {
  const owners = new Map();
  let lines;
  try {
    lines = readFileSync(join(root, DOC), 'utf8').split('\n');
  } catch {
    problems.push(`${DOC}: not found; its table of modules says which folder owns which table.`);
    return owners;
  }
  const header = lines.findIndex((line) => line.startsWith('|') && splitRow(line).includes(OWNS));
  if (header < 0) {
    problems.push(`${DOC}: no table with an "${OWNS}" column.`);
    return owners;
  }
  const column = splitRow(lines[header]).indexOf(OWNS);
  for (let i = header + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    const cells = splitRow(lines[i]);
    const module = (cells[0] ?? '').replace(/`/g, '');
    if (!/^[a-z][a-z0-9-]*$/.test(module)) {
      problems.push(`${DOC}:${i + 1}: the module "${module}" is not a folder name of src/.`);
      continue;
    }
    let owner = `src/${module}`;
    for (const [, token] of (cells[column] ?? '').matchAll(/`([^`]*)`/g)) {
      if (/^[a-z0-9-]+(\/[a-z0-9-]+)*\/$/.test(token)) {
        owner = `src/${module}/${token.slice(0, -1)}`;
      } else if (/^[a-z_][a-z0-9_]*$/.test(token)) {
        owners.set(token, [...(owners.get(token) ?? []), { owner, line: i + 1 }]);
      } else {
        problems.push(
          `${DOC}:${i + 1}: \`${token}\` in the "${OWNS}" column is neither a table nor a sub-folder (\`name/\`).`,
        );
      }
    }
  }
  return owners;
}

// ---------------------------------------------------------------------------------------------------------------
// Following a name to the string literals it can be

const callsByName = new Map();
const topConsts = new Map();
for (const file of code) {
  walk(file.sf, (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee)
        ? callee.text
        : ts.isPropertyAccessExpression(callee)
          ? callee.name.text
          : undefined;
      if (name) {
        callsByName.set(name, [...(callsByName.get(name) ?? []), { file, call: node }]);
      }
    }
  });
  for (const statement of file.sf.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const decl of statement.declarationList.declarations) {
        if (ts.isIdentifier(decl.name)) {
          topConsts.set(decl.name.text, [...(topConsts.get(decl.name.text) ?? []), { file, decl }]);
        }
      }
    }
  }
}

function unwrap(expr) {
  while (
    expr &&
    (ts.isParenthesizedExpression(expr) ||
      ts.isAsExpression(expr) ||
      ts.isSatisfiesExpression(expr) ||
      ts.isTypeAssertionExpression(expr) ||
      ts.isNonNullExpression(expr) ||
      ts.isAwaitExpression(expr))
  ) {
    expr = expr.expression;
  }
  return expr;
}

function bindsName(name, text) {
  if (ts.isIdentifier(name)) {
    return name.text === text;
  }
  return name.elements.some((element) => !ts.isOmittedExpression(element) && bindsName(element.name, text));
}

/** The variable declaration or parameter that `id` names, looking out through the scopes around it. */
function findDeclaration(id, file) {
  const text = id.text;
  for (let node = id.parent; node; node = node.parent) {
    if (ts.isFunctionLike(node) && node.parameters) {
      const index = node.parameters.findIndex((p) => bindsName(p.name, text));
      if (index >= 0) {
        return { kind: 'parameter', fn: node, index, file };
      }
    }
    let lists = [];
    if (
      ts.isBlock(node) ||
      ts.isSourceFile(node) ||
      ts.isModuleBlock(node) ||
      ts.isCaseOrDefaultClause(node)
    ) {
      lists = node.statements.filter(ts.isVariableStatement).map((s) => s.declarationList);
    } else if (
      (ts.isForOfStatement(node) || ts.isForInStatement(node) || ts.isForStatement(node)) &&
      node.initializer &&
      ts.isVariableDeclarationList(node.initializer)
    ) {
      lists = [node.initializer];
    }
    for (const list of lists) {
      const decl = list.declarations.find((d) => bindsName(d.name, text));
      if (decl) {
        return { kind: 'variable', decl, file };
      }
    }
  }
  const exported = file.imports.get(text) ?? text;
  const elsewhere = (topConsts.get(exported) ?? []).filter((c) => c.file !== file);
  return elsewhere.length === 1
    ? { kind: 'variable', decl: elsewhere[0].decl, file: elsewhere[0].file }
    : null;
}

/** The steps from a declaration's name to `text` inside a binding pattern ([] for a plain identifier). */
function bindingPath(name, text) {
  if (ts.isIdentifier(name)) {
    return name.text === text ? [] : null;
  }
  for (let i = 0; i < name.elements.length; i++) {
    const element = name.elements[i];
    if (ts.isOmittedExpression(element)) {
      continue;
    }
    const rest = bindingPath(element.name, text);
    if (rest) {
      const step = ts.isArrayBindingPattern(name)
        ? { index: i }
        : { property: (element.propertyName ?? element.name).getText() };
      return [step, ...rest];
    }
  }
  return null;
}

/** The element expressions of an array literal `expr` is, or null. */
function elementsOf(expr, file, depth) {
  expr = unwrap(expr);
  if (!expr || depth > 8) {
    return null;
  }
  if (ts.isArrayLiteralExpression(expr)) {
    return expr.elements.map((element) => ({ expr: element, file }));
  }
  if (ts.isIdentifier(expr)) {
    const found = findDeclaration(expr, file);
    if (found?.kind === 'variable' && ts.isIdentifier(found.decl.name) && found.decl.initializer) {
      return elementsOf(found.decl.initializer, found.file, depth + 1);
    }
  }
  return null;
}

function step(expr, file, path, depth) {
  for (const s of path) {
    expr = unwrap(expr);
    if ('index' in s) {
      const elements = elementsOf(expr, file, depth);
      if (!elements || !elements[s.index]) {
        return null;
      }
      ({ expr, file } = elements[s.index]);
    } else {
      if (!ts.isObjectLiteralExpression(expr)) {
        return null;
      }
      const property = expr.properties.find(
        (p) => ts.isPropertyAssignment(p) && p.name.getText() === s.property,
      );
      if (!property) {
        return null;
      }
      expr = property.initializer;
    }
  }
  return { expr, file };
}

function literalUnion(type) {
  if (!type) {
    return null;
  }
  if (ts.isParenthesizedTypeNode(type)) {
    return literalUnion(type.type);
  }
  if (ts.isLiteralTypeNode(type) && ts.isStringLiteral(type.literal)) {
    return [type.literal.text];
  }
  if (ts.isUnionTypeNode(type)) {
    const parts = type.types.map(literalUnion);
    return parts.every(Boolean) ? parts.flat() : null;
  }
  return null;
}

function functionName(fn) {
  if ((ts.isFunctionDeclaration(fn) || ts.isMethodDeclaration(fn)) && fn.name) {
    return fn.name.getText();
  }
  const parent = fn.parent;
  if (
    (ts.isVariableDeclaration(parent) || ts.isPropertyDeclaration(parent)) &&
    ts.isIdentifier(parent.name)
  ) {
    return parent.name.text;
  }
  if (ts.isPropertyAssignment(parent)) {
    return parent.name.getText();
  }
  return null;
}

/**
 * The strings `expr` can be, each with the site a write through it is counted at (`site`, or the call that passes
 * the string to a function's parameter). `value: null` when it cannot tell.
 */
function resolveStrings(expr, file, site, depth = 0) {
  expr = unwrap(expr);
  if (!expr || depth > 8) {
    return [{ value: null, site }];
  }
  if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) {
    return [{ value: expr.text, site }];
  }
  if (ts.isConditionalExpression(expr)) {
    return [
      ...resolveStrings(expr.whenTrue, file, site, depth + 1),
      ...resolveStrings(expr.whenFalse, file, site, depth + 1),
    ];
  }
  if (!ts.isIdentifier(expr)) {
    return [{ value: null, site }];
  }
  const found = findDeclaration(expr, file);
  if (!found) {
    return [{ value: null, site }];
  }
  if (found.kind === 'variable') {
    const { decl } = found;
    const path = bindingPath(decl.name, expr.text);
    const loop = decl.parent.parent;
    const sources =
      ts.isForOfStatement(loop) && loop.initializer === decl.parent
        ? elementsOf(loop.expression, found.file, depth + 1)
        : decl.initializer
          ? [{ expr: decl.initializer, file: found.file }]
          : null;
    if (!sources || !path) {
      return [{ value: null, site }];
    }
    return sources.flatMap((source) => {
      const target = step(source.expr, source.file, path, depth + 1);
      return target ? resolveStrings(target.expr, target.file, site, depth + 1) : [{ value: null, site }];
    });
  }
  const parameter = found.fn.parameters[found.index];
  const literals = ts.isIdentifier(parameter.name) ? literalUnion(parameter.type) : null;
  if (literals) {
    return literals.map((value) => ({ value, site }));
  }
  const name = functionName(found.fn);
  const calls = (name && callsByName.get(name)) || [];
  const callers = calls.filter(({ call }) => call.arguments.length > found.index || parameter.initializer);
  if (!ts.isIdentifier(parameter.name)) {
    return [{ value: null, site }];
  }
  // No caller: the helper writes nothing today (a caller of it is checked where it calls).
  return callers.flatMap(({ file: callFile, call }) => {
    const argument = call.arguments[found.index] ?? parameter.initializer;
    const at = { file: callFile, node: call, via: site };
    return resolveStrings(argument, call.arguments[found.index] ? callFile : found.file, at, depth + 1);
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Entities and migrations: the tables there are

const snake = (name) => name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();

/** Entity class name → table. */
const entityTables = new Map();
const entitySites = new Map();
for (const file of code) {
  walk(file.sf, (node) => {
    if (!ts.isClassDeclaration(node) || !node.name) {
      return;
    }
    for (const decorator of ts.getDecorators(node) ?? []) {
      const call = decorator.expression;
      if (
        !ts.isCallExpression(call) ||
        !ts.isIdentifier(call.expression) ||
        call.expression.text !== 'Entity'
      ) {
        continue;
      }
      const [arg] = call.arguments;
      let table = snake(node.name.text);
      if (arg && ts.isStringLiteralLike(arg)) {
        table = arg.text;
      } else if (arg && ts.isObjectLiteralExpression(arg)) {
        const name = arg.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText() === 'name');
        if (name && ts.isStringLiteralLike(name.initializer)) {
          table = name.initializer.text;
        }
      }
      entityTables.set(node.name.text, table);
      entitySites.set(table, `${file.path}:${lineOf(file, node)}`);
    }
  });
}

// SQL text: a name is a quoted identifier, a bare one, or a template placeholder (\u0001n\u0001).
const NAME = String.raw`(?:"(?:\u0001\d+\u0001|[^"\u0001]+)"|\u0001\d+\u0001|[A-Za-z_][\w$]*)`;
const TABLE = String.raw`(?:${NAME}\s*\.\s*)?(${NAME})`;
const WRITES = [
  String.raw`\b(INSERT\s+INTO)\s+${TABLE}`,
  String.raw`\b(UPDATE)\s+(?:ONLY\s+)?(?!SET\b)${TABLE}(?:\s*\*)?(?:\s+(?:AS\s+)?(?!SET\b)[A-Za-z_]\w*)?\s+SET\b`,
  String.raw`\b(DELETE\s+FROM)\s+(?:ONLY\s+)?${TABLE}`,
  String.raw`\b(TRUNCATE)\s+(?:TABLE\s+)?(?:ONLY\s+)?${TABLE}`,
  String.raw`\b(MERGE\s+INTO)\s+(?:ONLY\s+)?${TABLE}`,
  String.raw`\b(COPY)\s+${TABLE}(?:\s*\([^)]*\))?\s+FROM\b`,
].map((source) => new RegExp(source, 'gi'));
const CREATES = new RegExp(
  String.raw`\b(CREATE\s+(?:UNLOGGED\s+)?TABLE)\s+(?:IF\s+NOT\s+EXISTS\s+)?${TABLE}`,
  'gi',
);
const DROPS = new RegExp(String.raw`\b(DROP\s+TABLE)\s+(?:IF\s+EXISTS\s+)?${TABLE}`, 'gi');
const RENAMES = new RegExp(
  String.raw`\b(ALTER\s+TABLE)\s+(?:IF\s+EXISTS\s+)?(?:ONLY\s+)?${TABLE}\s+RENAME\s+TO\s+(${NAME})`,
  'gi',
);

const isPlus = (node) =>
  node && ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken;
const isStringish = (node) =>
  ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node);

/**
 * Every string text of a file, as segments: { text, node } for literal text, { expr } for what a template or a `+`
 * chain puts between. `skip(node)` leaves out a subtree (a migration's `down`).
 */
function textsOf(file, skip = () => false) {
  const texts = [];
  const segmentsOf = (node) => {
    if (ts.isTemplateExpression(node)) {
      return [
        { text: node.head.text, node: node.head },
        ...node.templateSpans.flatMap((span) => [
          { expr: span.expression },
          { text: span.literal.text, node: span.literal },
        ]),
      ];
    }
    return [{ text: node.text, node }];
  };
  const visit = (node) => {
    if (skip(node)) {
      return false;
    }
    if (isPlus(node) && !isPlus(node.parent)) {
      const parts = [];
      const flatten = (n) => (isPlus(n) ? (flatten(n.left), flatten(n.right)) : parts.push(unwrap(n) ?? n));
      flatten(node);
      if (parts.some(isStringish)) {
        texts.push(parts.flatMap((part) => (isStringish(part) ? segmentsOf(part) : [{ expr: part }])));
        for (const part of parts) {
          if (isStringish(part)) {
            part.templateSpans?.forEach((span) => walk(span, visit));
          } else {
            walk(part, visit);
            visit(part);
          }
        }
        return false;
      }
      return true;
    }
    if (
      ts.isTemplateExpression(node) ||
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node)
    ) {
      const parent = node.parent;
      if (
        !ts.isImportDeclaration(parent) &&
        !ts.isExportDeclaration(parent) &&
        !ts.isLiteralTypeNode(parent)
      ) {
        texts.push(segmentsOf(node));
      }
    }
    return true;
  };
  walk(file.sf, visit);
  return texts;
}

/** Matches of `regex` in a text: { keyword, names: [{ value, site }] per group after the keyword }. */
function matchesIn(file, segments, regex) {
  let full = '';
  const starts = [];
  const exprs = [];
  for (const segment of segments) {
    starts.push(full.length);
    if ('expr' in segment) {
      full += `\u0001${exprs.length}\u0001`;
      exprs.push(segment.expr);
    } else {
      full += segment.text;
    }
  }
  const found = [];
  regex.lastIndex = 0;
  for (let m = regex.exec(full); m; m = regex.exec(full)) {
    let at = 0;
    while (at + 1 < starts.length && starts[at + 1] <= m.index) {
      at++;
    }
    const segment = segments[at];
    let line;
    if ('expr' in segment) {
      line = lineOf(file, segment.expr);
    } else {
      const before = segment.text.slice(0, m.index - starts[at]);
      const multiline = ts.isStringLiteral(segment.node) ? 0 : before.split('\n').length - 1;
      line = file.sf.getLineAndCharacterOfPosition(segment.node.getStart(file.sf)).line + 1 + multiline;
    }
    const site = { file, line };
    const names = m.slice(2).map((raw) => {
      const quoted = raw.startsWith('"');
      const name = quoted ? raw.slice(1, -1) : raw;
      const placeholder = /^\u0001(\d+)\u0001$/.exec(name);
      if (placeholder) {
        return resolveStrings(exprs[Number(placeholder[1])], file, site);
      }
      return [{ value: quoted ? name : name.toLowerCase(), site }];
    });
    found.push({ keyword: m[1], names, site });
  }
  return found;
}

/** table → where a migration creates it, applying the migrations' `up` in order. */
function migrationTables() {
  const tables = new Map();
  const inDown = (node) => ts.isMethodDeclaration(node) && node.name.getText() === 'down';
  for (const file of files.filter((f) => f.migration && !f.path.endsWith('/index.ts'))) {
    for (const segments of textsOf(file, inDown)) {
      for (const { names, site } of matchesIn(file, segments, CREATES)) {
        for (const { value } of names[0]) {
          if (value) {
            tables.set(value, `${file.path}:${site.line}`);
          }
        }
      }
      for (const { names } of matchesIn(file, segments, DROPS)) {
        names[0].forEach(({ value }) => tables.delete(value));
      }
      for (const { names } of matchesIn(file, segments, RENAMES)) {
        const [from] = names[0];
        const [to] = names[1];
        if (from.value && to.value && tables.has(from.value)) {
          tables.set(to.value, tables.get(from.value));
          tables.delete(from.value);
        }
      }
    }
  }
  return tables;
}

// ---------------------------------------------------------------------------------------------------------------
// Writes

const TYPEORM_WRITES = new Set([
  'insert',
  'update',
  'delete',
  'save',
  'upsert',
  'remove',
  'softDelete',
  'softRemove',
  'restore',
  'recover',
  'increment',
  'decrement',
  'clear',
]);
const MANAGERS = new Set(['manager', 'entityManager', 'em', 'dataSource', 'queryRunner']);
const REPOSITORY_SOURCES = new Set(['getRepository', 'getTreeRepository', 'createQueryBuilder']);

/** Properties typed Repository<Entity> of the file's classes: name → entity class name. */
function repositoryProperties(file) {
  const properties = new Map();
  walk(file.sf, (node) => {
    if ((ts.isPropertyDeclaration(node) || ts.isParameter(node)) && node.type && ts.isIdentifier(node.name)) {
      const type = node.type;
      if (
        ts.isTypeReferenceNode(type) &&
        /Repository$/.test(type.typeName.getText()) &&
        type.typeArguments?.length === 1 &&
        ts.isTypeReferenceNode(type.typeArguments[0])
      ) {
        properties.set(node.name.text, type.typeArguments[0].typeName.getText());
      }
    }
  });
  return properties;
}

/** The table an entity-class (or table-name string, when `strings`) argument names, or null. */
function entityArgument(arg, file, strings) {
  arg = unwrap(arg);
  if (!arg) {
    return null;
  }
  if (ts.isIdentifier(arg)) {
    return entityTables.get(file.imports.get(arg.text) ?? arg.text) ?? null;
  }
  if (strings && ts.isStringLiteralLike(arg)) {
    return entityTables.get(arg.text) ?? arg.text;
  }
  return null;
}

/** What the receiver of a write call is: a TypeORM manager, repository or query builder, and of which entity. */
function receiverOf(expr, file, repositories, depth = 0) {
  let typeorm = false;
  for (let e = unwrap(expr); e && depth < 8; e = unwrap(e)) {
    if (ts.isCallExpression(e)) {
      const callee = e.expression;
      const name = ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : ts.isIdentifier(callee)
          ? callee.text
          : '';
      if (REPOSITORY_SOURCES.has(name)) {
        typeorm = true;
        const table = entityArgument(e.arguments[0], file, true);
        if (table) {
          return { typeorm, table };
        }
      }
      if (!ts.isPropertyAccessExpression(callee)) {
        break;
      }
      e = callee.expression;
    } else if (ts.isPropertyAccessExpression(e)) {
      if (MANAGERS.has(e.name.text)) {
        typeorm = true;
      }
      if (e.expression.kind === ts.SyntaxKind.ThisKeyword && repositories.has(e.name.text)) {
        return {
          typeorm: true,
          table: entityArgument(ts.factory.createIdentifier(repositories.get(e.name.text)), file),
        };
      }
      e = e.expression;
    } else if (ts.isIdentifier(e)) {
      if (MANAGERS.has(e.text)) {
        return { typeorm: true, table: null };
      }
      const found = findDeclaration(e, file);
      if (found?.kind === 'variable' && ts.isIdentifier(found.decl.name) && found.decl.initializer) {
        const inner = receiverOf(found.decl.initializer, found.file, repositories, depth + 1);
        return { typeorm: typeorm || inner.typeorm, table: inner.table };
      }
      if (found?.kind === 'parameter') {
        const parameter = found.fn.parameters[found.index];
        const type = parameter.type?.getText() ?? '';
        const match = /^(?:Repository|TreeRepository)<(\w+)>$/.exec(type);
        if (match) {
          return { typeorm: true, table: entityTables.get(file.imports.get(match[1]) ?? match[1]) ?? null };
        }
        if (/EntityManager|QueryRunner|DataSource|QueryBuilder/.test(type)) {
          return { typeorm: true, table: null };
        }
      }
      break;
    } else {
      break;
    }
  }
  return { typeorm, table: null };
}

/** A query builder's `.into(Entity)` / `.from(Entity)` further along the chain of `call`. */
function laterTarget(call, file) {
  for (
    let node = call;
    ts.isPropertyAccessExpression(node.parent) && ts.isCallExpression(node.parent.parent);
  ) {
    const next = node.parent.parent;
    if (['into', 'from'].includes(node.parent.name.text)) {
      return entityArgument(next.arguments[0], file, true);
    }
    node = next;
  }
  return null;
}

function writesOf(file) {
  const writes = [];
  const add = (table, site, how) => writes.push({ table, site, how });
  for (const segments of textsOf(file)) {
    for (const regex of WRITES) {
      for (const { keyword, names } of matchesIn(file, segments, regex)) {
        const upper = keyword === keyword.toUpperCase();
        for (const { value, site } of names[0]) {
          add(value, site, `${keyword.replace(/\s+/g, ' ').toUpperCase()}${upper ? '' : ' (lower case)'}`);
        }
      }
    }
  }
  const repositories = repositoryProperties(file);
  walk(file.sf, (node) => {
    if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) {
      return;
    }
    const method = node.expression.name.text;
    if (!TYPEORM_WRITES.has(method)) {
      return;
    }
    const receiver = receiverOf(node.expression.expression, file, repositories);
    const table =
      entityArgument(node.arguments[0], file, receiver.typeorm) ??
      receiver.table ??
      (receiver.typeorm ? laterTarget(node, file) : null);
    if (table || receiver.typeorm) {
      add(table, { file, line: lineOf(file, node) }, `TypeORM .${method}()`);
    }
  });
  return writes;
}

// ---------------------------------------------------------------------------------------------------------------
// Reads

// SQL text: a table after FROM, JOIN or USING (a join is a read of the table joined), and every further table of a
// `FROM a x, b y` list. A name followed by `(` is a function (jsonb_to_recordset, unnest), not a table; a name that is
// no table (a CTE, a column in `EXTRACT(… FROM col)`) is left alone by the check.
const TABLE_NC = String.raw`(?:${NAME}\s*\.\s*)?${NAME}`;
const ALIAS = String.raw`(?:\s+(?:AS\s+)?[A-Za-z_]\w*)?`;
const READS = [
  String.raw`\b(FROM|JOIN|USING)\s+(?:ONLY\s+)?(?:LATERAL\s+)?${TABLE}(?!\s*[(.])`,
  String.raw`(?<=\bFROM\s+(?:ONLY\s+)?${TABLE_NC}${ALIAS}(?:\s*,\s*${TABLE_NC}${ALIAS})*\s*)(,)\s*${TABLE}(?!\s*[(.])`,
].map((source) => new RegExp(source, 'gi'));

// TypeORM calls that read the table of the entity (or table name) they are given.
const TYPEORM_READS = new Set([
  'find',
  'findOne',
  'findOneBy',
  'findOneOrFail',
  'findOneByOrFail',
  'findBy',
  'findAndCount',
  'findAndCountBy',
  'count',
  'countBy',
  'exists',
  'existsBy',
  'sum',
  'average',
  'minimum',
  'maximum',
  'preload',
  'getRepository',
  'getTreeRepository',
  'createQueryBuilder',
  'from',
  'addFrom',
  'join',
  'leftJoin',
  'innerJoin',
  'leftJoinAndSelect',
  'innerJoinAndSelect',
  'leftJoinAndMapOne',
  'innerJoinAndMapOne',
  'leftJoinAndMapMany',
  'innerJoinAndMapMany',
]);

/** The tables a file reads: SQL text and TypeORM calls on an entity class or a `Repository<Entity>` it holds. */
function readsOf(file) {
  const reads = [];
  const add = (table, site, how) => reads.push({ table, site, how });
  for (const segments of textsOf(file)) {
    for (const regex of READS) {
      for (const { keyword, names } of matchesIn(file, segments, regex)) {
        if (keyword !== keyword.toUpperCase()) {
          continue; // "from the invoice" in a description is English, not SQL
        }
        for (const { value, site } of names[0]) {
          add(value, site, `${keyword === ',' ? 'FROM …,' : keyword}`);
        }
      }
    }
  }
  walk(file.sf, (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const method = ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : ts.isIdentifier(callee)
          ? callee.text
          : '';
      const joins = /join/i.test(method);
      if (TYPEORM_READS.has(method) || method === 'InjectRepository') {
        // A join's first argument may be a relation path ('s.subscriber'): only an entity class counts there.
        const table = entityArgument(node.arguments[0], file, !joins && method !== 'find');
        if (table) {
          add(
            table,
            { file, line: lineOf(file, node) },
            `TypeORM ${method === 'InjectRepository' ? '@' : '.'}${method}()`,
          );
        }
      }
    }
  });
  for (const [property, entity] of repositoryProperties(file)) {
    const table = entityTables.get(file.imports.get(entity) ?? entity);
    if (table) {
      const declaration = findProperty(file, property);
      add(table, { file, line: declaration ? lineOf(file, declaration) : 1 }, `Repository<${entity}>`);
    }
  }
  return reads;
}

function findProperty(file, name) {
  let found = null;
  walk(file.sf, (node) => {
    if (!found && (ts.isPropertyDeclaration(node) || ts.isParameter(node)) && ts.isIdentifier(node.name)) {
      if (node.name.text === name) {
        found = node;
      }
    }
    return !found;
  });
  return found;
}

// ---------------------------------------------------------------------------------------------------------------
// The check

const ownership = readOwnership();
const owned = new Map([...ownership].map(([table, rows]) => [table, rows[0].owner]));
for (const [table, rows] of ownership) {
  if (rows.length > 1) {
    problems.push(
      `${DOC}:${rows[1].line}: \`${table}\` has more than one owner (${rows.map((r) => r.owner).join(', ')}); a table has one.`,
    );
  }
}
const created = migrationTables();
const existing = new Map([...created, ...entitySites]);
for (const [table, where] of [...existing].sort(([a], [b]) => a.localeCompare(b))) {
  if (!owned.has(table)) {
    problems.push(`${DOC}: no row owns \`${table}\` (${where}); add it to one module's "${OWNS}".`);
  }
}
if (verbose) {
  for (const [table, where] of [...existing].sort(([a], [b]) => a.localeCompare(b))) {
    console.log(`table ${table} (${where}) [${owned.get(table) ?? 'no owner'}]`);
  }
}
const planned = [...owned.keys()].filter((table) => !existing.has(table)).sort();
if (planned.length > 0) {
  notes.push(`${DOC} owns tables no entity or migration creates yet: ${planned.join(', ')}.`);
}

const known = new Set([...owned.keys(), ...existing.keys()]);
const seen = new Set();
const wrong = [];
let writeCount = 0;
for (const file of code) {
  for (const { table, site, how } of writesOf(file)) {
    const lowerCaseProse = how.endsWith('(lower case)') && !(table && known.has(table));
    if (lowerCaseProse) {
      continue; // "update the profile set …" in a description is English, not SQL
    }
    const line = site.line ?? lineOf(site.file, site.node);
    const where = `${site.file.path}:${line}`;
    const via = site.via
      ? ` (SQL at ${site.via.file.path}:${site.via.line ?? lineOf(site.via.file, site.via.node)})`
      : '';
    const key = `${where} ${table}`;
    if (seen.has(key)) {
      continue;
    }
    seen.add(key);
    writeCount++;
    const owner = table && owned.get(table);
    const inside = owner && (site.file.path === owner || site.file.path.startsWith(`${owner}/`));
    if (verbose) {
      console.log(`${where}: ${how} ${table ?? '?'}${via} [${owner ?? 'no owner'}]`);
    }
    const report = (text) => wrong.push({ path: site.file.path, line, text: `${where}: ${text}` });
    if (!table) {
      report(`${how} on a table the check cannot tell${via}; name it literally or by its entity class.`);
    } else if (!owner) {
      report(`${how} ${table}${via}, a table no row of ${DOC} owns.`);
    } else if (!inside) {
      report(`${how} ${table}${via}, which ${owner} owns (${DOC}): write it through ${owner}.`);
    }
  }
}

// A read is the module's, not the sub-folder's: any folder of billing may read billing's tables. A read of another
// module's table fails: it goes through what that module's src/<module>/index.ts exports (its repository or service
// runs the SQL), so the SQL text naming the table stays in the owner's folder.
const moduleOf = (path) => path.split('/').slice(0, 2).join('/');
let readCount = 0;
for (const file of code) {
  for (const { table, site, how } of readsOf(file)) {
    const owner = table && owned.get(table);
    if (!owner) {
      continue; // a CTE, a function, a column: not a table of the doc (an unowned table fails above)
    }
    const line = site.line ?? lineOf(site.file, site.node);
    const where = `${site.file.path}:${line}`;
    const key = `${where} ${table}`;
    if (seen.has(key)) {
      continue; // DELETE FROM x is its write, checked above
    }
    seen.add(key);
    readCount++;
    const module = moduleOf(owner);
    const via = site.via
      ? ` (SQL at ${site.via.file.path}:${site.via.line ?? lineOf(site.via.file, site.via.node)})`
      : '';
    if (verbose) {
      console.log(`${where}: ${how} ${table}${via} [read, ${module}]`);
    }
    if (moduleOf(site.file.path) !== module) {
      wrong.push({
        path: site.file.path,
        line,
        text: `${where}: ${how} ${table}${via} reads a table of ${module} (${DOC}): call what ${module}/index.ts exports instead.`,
      });
    }
  }
}

wrong.sort((a, b) => (a.path === b.path ? a.line - b.line : a.path < b.path ? -1 : 1));
problems.push(...wrong.map((w) => w.text));

for (const note of notes) {
  console.log(`note: ${note}`);
}
if (problems.length > 0) {
  for (const problem of problems) {
    console.log(problem);
  }
  console.error(
    `check-data-access: ${problems.length} problem(s) with table ownership: a module writes only the tables its row of ${DOC} owns, and reads another module's only through that module's index.ts.`,
  );
  process.exit(1);
}
console.log(
  `check-data-access: ${writeCount} write(s), each from the folder that owns its table, and ${readCount} read(s), each from the module that owns its table (${DOC}).`,
);
