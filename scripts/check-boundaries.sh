#!/usr/bin/env bash
# Module boundaries (docs/architecture.md, eslint.boundaries.mjs): runs ESLint with only the boundary rules over src/
# (no type information, a few seconds) and fails listing every import that reaches into another domain instead of its
# src/<domain>/index.ts, every domain imported by shared infrastructure (src/common, src/config, src/database), and
# every import closing a cycle between domains. Extra arguments go to eslint (e.g. --format json).
set -euo pipefail
cd "$(dirname "$0")/.."
exec npx --no-install eslint --no-warn-ignored --max-warnings 0 -c eslint.boundaries.mjs "$@" src
