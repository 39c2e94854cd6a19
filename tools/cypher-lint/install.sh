#!/usr/bin/env bash
# Installs the Cypher lint harness's npm dependencies (pinned in package-lock.json) into
# tools/cypher-lint/node_modules. Idempotent: does nothing when the pinned version is
# already installed. Used by CI; tests/unit/test_cypher_lint.py skips when it has not run.
#
# Without node/npm it prints a notice and exits 0 (the lint test then skips), unless
# CYPHER_LINT_REQUIRED=1, which makes that an error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "cypher-lint: node/npm not found; skipping install (apt-get install nodejs npm)" >&2
  [[ "${CYPHER_LINT_REQUIRED:-0}" == "1" ]] && exit 1
  exit 0
fi

want=$(node -p "require('./package.json').dependencies['@neo4j-cypher/language-support']")
have=$(node -p "try { require('./node_modules/@neo4j-cypher/language-support/package.json').version } catch { '' }" 2>/dev/null || true)
if [[ -n "$have" && "$have" == "$want" && -f node_modules/.package-lock.json ]]; then
  echo "cypher-lint: @neo4j-cypher/language-support@$have already installed"
  exit 0
fi

if ! npm ci --no-audit --no-fund; then
  echo "cypher-lint: npm ci failed; falling back to npm install" >&2
  npm install --no-audit --no-fund
fi
node -e "import('@neo4j-cypher/language-support').then(m => { if (typeof m.lintCypherQuery !== 'function') process.exit(1) })"
echo "cypher-lint: installed @neo4j-cypher/language-support@$want"
