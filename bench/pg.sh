# Sourced by the benchmarks that need PostgreSQL (store_backends.sh, concurrency/replicas.sh):
# start_postgres DIR [SERVER OPTIONS...] runs a PostgreSQL 15 server in DIR/pg, as the tests
# start theirs (initdb, a unix socket in DIR only, as the postgres user when run as root),
# creates the database "bench" and sets pg_url to it; stop_postgres DIR stops it at once.
pgbin=/usr/lib/postgresql/15/bin
start_postgres() {
  local dir=$1
  shift
  pg_as=""
  if [ "$(id -u)" = 0 ]; then chown postgres "$dir"; chmod 755 "$dir"; pg_as="runuser -u postgres --"; fi
  $pg_as "$pgbin/initdb" -D "$dir/pg" -A trust -U pilotfish --no-sync -E UTF8 >/dev/null
  $pg_as "$pgbin/pg_ctl" -D "$dir/pg" -o "-k $dir -c listen_addresses='' -p 5432 $*" \
    -l "$dir/pg.log" -w start >/dev/null
  psql -X -q "postgresql://pilotfish@/postgres?host=$dir" -c "CREATE DATABASE bench"
  pg_url="postgresql://pilotfish@/bench?host=$dir"
}
stop_postgres() {
  $pg_as "$pgbin/pg_ctl" -D "$1/pg" -m immediate stop >/dev/null 2>&1 || true
}
