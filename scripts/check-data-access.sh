#!/usr/bin/env bash
# No SQL and no TypeORM call outside repositories and the database layer (docs/architecture.md): fails listing
# file:line for every one found in src/ outside *.repository.ts, src/database/** (data source, transaction runner,
# prepared-query infrastructure, migrations) and *.spec.ts. It looks for raw SQL (`.query(`), the query builder,
# repositories and entity managers (getRepository, @InjectRepository, manager./dataSource./queryRunner. calls), the
# prepared-statement and row-lock helpers (preparedQuery, lockForUpdate; a repository's own lockForUpdate method is
# fine) and SQL text (a string starting with SELECT, INSERT INTO, UPDATE … SET, DELETE FROM or WITH … AS). Calls on
# other objects (this.events.queued, a Map's .delete) and comment lines are not matched. Injecting the DataSource is
# allowed: a service passes `this.dataSource.manager` to a repository for reads outside a transaction.
# Then scripts/check-data-access.js: one owner per table (the "Owns (tables)" column of docs/architecture.md), failing
# on a write to a table from outside its owner's folder, and on a read of another module's table that does not go
# through what that module's index.ts exports. Both run, and it fails when either fails.
# Usage: scripts/check-data-access.sh [root] (the repository by default; the tests point it at fixture trees).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "${1:-$here/..}"

METHODS='find|findOne|findOneBy|findOneOrFail|findOneByOrFail|findBy|findAndCount|findAndCountBy|save|insert|update|delete|create|count|countBy|exists|existsBy|upsert|increment|decrement|remove|softDelete|restore|preload|merge|sum|average|minimum|maximum|transaction|getRepository|createQueryBuilder|query'
PATTERNS=(
  '\.query[[:space:]]*[<(]'
  '\bcreateQueryBuilder[[:space:]]*[<(]'
  '\bgetRepository[[:space:]]*[<(]'
  '@InjectRepository[[:space:]]*\('
  "\b(manager|entityManager|em|dataSource|queryRunner|repository|repo)\.(${METHODS})[[:space:]]*[<(]"
  '(^|[^.[:alnum:]_$])(preparedQuery|lockForUpdate)[[:space:]]*[<(]'
  "['\"\`][[:space:]]*(SELECT|INSERT[[:space:]]+INTO|UPDATE[[:space:]]+[a-z_\"]+[[:space:]]+SET|DELETE[[:space:]]+FROM|WITH[[:space:]]+[a-z_\"]+[[:space:]]+AS)\\b"
)
args=()
for pattern in "${PATTERNS[@]}"; do args+=(-e "$pattern"); done

hits=$(find src -name '*.ts' \
  ! -name '*.repository.ts' ! -name '*.spec.ts' ! -path 'src/database/*' -print0 |
  sort -z | xargs -0 grep -nHE "${args[@]}" | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(//|/?\*)' || true)

status=0
if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  count=$(printf '%s\n' "$hits" | wc -l)
  files=$(printf '%s\n' "$hits" | cut -d: -f1 | sort -u | wc -l)
  echo "check-data-access: ${count} SQL/TypeORM call(s) in ${files} file(s) outside repositories and src/database:" \
    "move them into the aggregate's *.repository.ts (docs/architecture.md)." >&2
  status=1
else
  echo 'check-data-access: no SQL or TypeORM call outside repositories and src/database.'
fi
node "$here/check-data-access.js" --root "$PWD" || status=1
exit "$status"
