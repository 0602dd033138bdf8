#!/usr/bin/env bash
# PostgreSQL and Redis on loopback for the scale tests (test/scale-*.test.ts), private to this
# machine and idempotent: a second run reuses what the first started.
#
#   eval "$(scripts/test-services.sh)"   # start (or reuse); exports CROWS_TEST_PG_URL, CROWS_TEST_REDIS_URL
#   npm test
#   scripts/test-services.sh stop         # stop both and keep nothing
#
# Progress goes to stderr; stdout carries only the export lines, so eval sees nothing else.
# As root with apt-get (CI), missing packages are installed from Debian; otherwise it says what to
# install. PostgreSQL runs from its own initdb data folder (trust auth, fsync off: test data only),
# Redis with no persistence; both bind 127.0.0.1 on ports picked free at first start.
set -euo pipefail

DIR="${CROWS_SERVICES_DIR:-${TMPDIR:-/tmp}/crows-test-services}"
DB=crows_test
say() { echo "test-services: $*" >&2; }
die() { say "$*"; exit 1; }

pg_bin() {
  local found
  found=$(command -v "$1" 2>/dev/null || true)
  [ -z "$found" ] && found=$(ls -d /usr/lib/postgresql/*/bin/"$1" 2>/dev/null | sort -V | tail -1 || true)
  echo "$found"
}

# PostgreSQL refuses to run as root: run its tools as the postgres user then.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

if [ "${1:-}" = "stop" ]; then
  if [ -f "$DIR/redis.pid" ]; then kill "$(cat "$DIR/redis.pid")" 2>/dev/null || true; fi
  if [ -d "$DIR/pg" ]; then as_pg "$(pg_bin pg_ctl)" -D "$DIR/pg" -m fast stop >&2 2>/dev/null || true; fi
  rm -rf "$DIR"
  say "stopped"
  exit 0
fi

missing=()
[ -n "$(pg_bin initdb)" ] || missing+=(postgresql)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing ${missing[*]} from Debian"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" >&2 \
      || { apt-get update >&2 && apt-get install -y --no-install-recommends "${missing[@]}" >&2; }
  else
    die "missing ${missing[*]}: install them (Debian/Ubuntu: apt-get install postgresql redis-server) and run again"
  fi
fi
INITDB=$(pg_bin initdb)
PG_CTL=$(pg_bin pg_ctl)
PSQL=$(pg_bin psql)
[ -n "$INITDB" ] && [ -n "$PG_CTL" ] && [ -n "$PSQL" ] || die "PostgreSQL tools not found after install"

mkdir -p "$DIR"
chmod 755 "$DIR"

# --- PostgreSQL ---------------------------------------------------------------------------------
[ -f "$DIR/pg.port" ] || free_port > "$DIR/pg.port"
PG_PORT=$(cat "$DIR/pg.port")
if [ ! -f "$DIR/pg/PG_VERSION" ]; then
  mkdir -p "$DIR/pg"
  [ "$(id -u)" -eq 0 ] && chown postgres: "$DIR/pg"
  say "initdb $DIR/pg"
  as_pg "$INITDB" -D "$DIR/pg" -U crows -A trust --no-sync -E UTF8 >"$DIR/initdb.log" 2>&1 \
    || { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
fi
if ! as_pg "$PG_CTL" -D "$DIR/pg" status >/dev/null 2>&1; then
  say "starting PostgreSQL on 127.0.0.1:$PG_PORT"
  as_pg "$PG_CTL" -D "$DIR/pg" -l "$DIR/pg/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $PG_PORT -k $DIR/pg -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
    start >&2 || { tail -20 "$DIR/pg/server.log" >&2 || true; die "PostgreSQL did not start"; }
fi
if [ "$("$PSQL" -h 127.0.0.1 -p "$PG_PORT" -U crows -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$DB'")" != "1" ]; then
  "$PSQL" -h 127.0.0.1 -p "$PG_PORT" -U crows -d postgres -qc "CREATE DATABASE $DB" >&2
fi

# --- Redis --------------------------------------------------------------------------------------
[ -f "$DIR/redis.port" ] || free_port > "$DIR/redis.port"
REDIS_PORT=$(cat "$DIR/redis.port")
if ! redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1; then
  say "starting Redis on 127.0.0.1:$REDIS_PORT"
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --daemonize yes --save '' --appendonly no \
    --dir "$DIR" --pidfile "$DIR/redis.pid" --logfile "$DIR/redis.log" >&2
  for _ in $(seq 1 50); do
    redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 && break
    sleep 0.1
  done
  redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping >/dev/null 2>&1 || die "Redis did not start (see $DIR/redis.log)"
fi

echo "export CROWS_TEST_PG_URL=postgresql://crows@127.0.0.1:$PG_PORT/$DB"
echo "export CROWS_TEST_REDIS_URL=redis://127.0.0.1:$REDIS_PORT"
