#!/usr/bin/env bash
# Runs every check and every test: gofmt, go vet, and go test -race ./...
# including the PostgreSQL conformance and concurrency tests.
#
# PostgreSQL comes from $KAIZEN_TEST_POSTGRES when set, else the local
# server on 127.0.0.1:5432 (database "test"), else a throwaway cluster
# started here with initdb/pg_ctl when the binaries are installed. Outside
# CI, PostgreSQL tests skip when none of these works; with CI set they fail.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
# tracked and new files, minus deleted ones
gofiles=$( (git ls-files -co --exclude-standard -- '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*') |
  while read -r f; do [ -f "$f" ] && echo "$f"; done)
unformatted=$(gofmt -l $gofiles)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go vet"
go vet ./...

pg_works() { # $1: DSN
  command -v psql >/dev/null 2>&1 || return 1
  psql "$1" -XAtqc 'select 1' >/dev/null 2>&1
}

pg_bin() { # finds a PostgreSQL server binary
  local b
  for b in $(command -v "$1" 2>/dev/null) /usr/lib/postgresql/*/bin/"$1"; do
    [ -x "$b" ] && { echo "$b"; return 0; }
  done
  return 1
}

start_throwaway() {
  local initdb pgctl dir port=54329 run=()
  initdb=$(pg_bin initdb) && pgctl=$(pg_bin pg_ctl) || return 1
  dir=$(mktemp -d /tmp/kaizen-pg.XXXXXX)
  if [ "$(id -u)" = 0 ]; then # initdb refuses to run as root
    chown nobody "$dir"; chmod 700 "$dir"
    run=(su -s /bin/sh nobody -c)
  else
    run=(sh -c)
  fi
  "${run[@]}" "$initdb -D $dir/data -A trust -U postgres --no-sync >$dir/initdb.log 2>&1" || return 1
  "${run[@]}" "$pgctl -D $dir/data -l $dir/server.log -o '-k $dir -p $port -h 127.0.0.1 -F' -w start >/dev/null" || return 1
  trap "'${run[@]}' '$pgctl -D $dir/data -m immediate stop >/dev/null 2>&1'; rm -rf '$dir'" EXIT
  psql "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable" -XAtqc 'create database test' >/dev/null
  export KAIZEN_TEST_POSTGRES="postgres://postgres@127.0.0.1:$port/test?sslmode=disable"
}

echo "== postgres"
if [ -n "${KAIZEN_TEST_POSTGRES:-}" ]; then
  echo "using \$KAIZEN_TEST_POSTGRES"
elif pg_works "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"; then
  export KAIZEN_TEST_POSTGRES="postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
  echo "using the local server on 127.0.0.1:5432"
elif pg_works "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable" &&
     psql "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable" -XAtqc 'create database test' >/dev/null 2>&1; then
  export KAIZEN_TEST_POSTGRES="postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
  echo "using the local server on 127.0.0.1:5432 (created database test)"
elif start_throwaway; then
  echo "started a throwaway cluster: $KAIZEN_TEST_POSTGRES"
else
  echo "no PostgreSQL available: its tests will skip${CI:+ (and fail, since CI is set)}"
fi

echo "== go test -race"
go test -race -count=1 -timeout 20m ./...

# In CI, every fuzz target also runs for a bounded time (scripts/fuzz.sh).
if [ -n "${CI:-}" ]; then
  echo "== fuzz"
  scripts/fuzz.sh
fi
