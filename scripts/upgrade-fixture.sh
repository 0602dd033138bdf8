#!/usr/bin/env bash
# Writes test/fixtures/upgrade/<name>.sql: a database made by an earlier state of crows, as SQL, for the
# upgrade test (test/upgrade-fixtures.test.ts; docs/operations.md "Upgrades and release fixtures").
#
#   scripts/upgrade-fixture.sh v0.2.0          # a release tag (or any commit)
#
# It checks the commit out with `git worktree add` in a temporary folder, reuses this checkout's
# node_modules (nothing is fetched), generates that commit's Prisma client, runs its server on
# loopback with the offline model, finishes three lists through owner verdicts and leaves three
# running on pending approvals, stops it, and writes the database as SQL text with `sqlite3 .dump`
# (the test restores it; a dump is reviewable in a diff and is not a file a run makes).
set -euo pipefail
cd "$(dirname "$0")/.."
REF=${1:?usage: scripts/upgrade-fixture.sh TAG-OR-COMMIT}
NAME=$(printf '%s' "$REF" | tr -c 'A-Za-z0-9._-' '_')
OUT="test/fixtures/upgrade/$NAME.sql"
command -v sqlite3 >/dev/null || { echo "upgrade-fixture: needs the sqlite3 shell (apt-get install sqlite3)" >&2; exit 1; }
[ -e "$OUT" ] && { echo "upgrade-fixture: $OUT exists" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/crows-fixture.XXXXXX")
TREE="$WORK/tree"
DATA="$WORK/data"
cleanup() {
  [ -n "${PID:-}" ] && kill "$PID" 2>/dev/null || true
  git worktree remove --force "$TREE" 2>/dev/null || true
  [ -n "${KEEP_FIXTURE_WORK:-}" ] || rm -rf "$WORK"
}
trap cleanup EXIT
git worktree add --detach "$TREE" "$REF" >&2
ln -s "$PWD/node_modules" "$TREE/node_modules"
(cd "$TREE" && npm run --silent postinstall >/dev/null) # that commit's own generated files: Prisma clients, the classifier model, the console
mkdir -m 700 "$DATA"
(cd "$TREE" && CROWS_DATA_DIR="$DATA" CROWS_PORT=0 CROWS_APPROVAL_WINDOW_MS=3600000 exec node --import tsx src/main.ts >"$WORK/out" 2>&1) &
PID=$!
for _ in $(seq 1 120); do grep -qE 'listening on|"state":"live"' "$WORK/out" 2>/dev/null && break; sleep 0.5; done
URL=$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$WORK/out" | head -1)
[ -n "$URL" ] || { cat "$WORK/out" >&2; echo "upgrade-fixture: the old server did not start" >&2; exit 1; }
node scripts/upgrade-fixture-drive.mjs "$URL" "$DATA/crows.db"
kill -TERM "$PID"; wait "$PID" 2>/dev/null || true; PID=
sqlite3 "$DATA/crows.db" .dump >"$OUT.partial" && mv "$OUT.partial" "$OUT"
echo "upgrade-fixture: wrote $OUT from $(git rev-parse --short "$REF")" >&2
