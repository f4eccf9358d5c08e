#!/usr/bin/env bash
# Starts PgBouncer in transaction mode in front of the PostgreSQL at 127.0.0.1:5432, for the test
# pass that runs the suite through it (docs/scaling.md, "PgBouncer"). Installs Debian's pgbouncer
# when it is missing. Every database name is passed through to the server (the tests create one
# database per test file), with trust auth as on the server itself. Idempotent: a PgBouncer it
# started before is left running. Prints nothing on success.
#
#   PGBOUNCER_PORT  where it listens (default 6432)
#   PGBOUNCER_DIR   its config, pid and log (default /tmp/dgs-pgbouncer)
#   PGBOUNCER_USERS the users it lets in, space-separated (default postgres)
set -euo pipefail

port="${PGBOUNCER_PORT:-6432}"
dir="${PGBOUNCER_DIR:-/tmp/dgs-pgbouncer}"

if ! command -v pgbouncer >/dev/null 2>&1 && ! [ -x /usr/sbin/pgbouncer ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null; }
fi
# Already running from an earlier run: keep it. Something else on the port: say so.
if [ -f "$dir/pgbouncer.pid" ] && kill -0 "$(cat "$dir/pgbouncer.pid")" 2>/dev/null; then exit 0; fi
if pg_isready -h 127.0.0.1 -p "$port" -q; then
  echo "Something other than this script's PgBouncer answers on 127.0.0.1:$port; set PGBOUNCER_PORT." >&2
  exit 1
fi

mkdir -p "$dir"
# PgBouncer refuses to run as root; the server's own user runs it.
chown postgres "$dir"
# The users it lets in (trust auth): PGBOUNCER_USERS, space-separated (default postgres).
for user in ${PGBOUNCER_USERS:-postgres}; do printf '"%s" ""\n' "$user"; done >"$dir/userlist.txt"
cat >"$dir/pgbouncer.ini" <<INI
[databases]
; Any database name, on the server the tests use. The server connection sets the timeouts the
; service asks for in its startup packet, which PgBouncer does not pass on (see below).
* = host=127.0.0.1 port=5432 connect_query='SET statement_timeout = 15000; SET idle_in_transaction_session_timeout = 30000'

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
; Each test file runs an API and a worker, each with its own pool, on its own database.
max_client_conn = 500
default_pool_size = 20
max_db_connections = 0
; node-postgres sends these startup parameters, which PgBouncer would otherwise refuse: the
; per-database connect_query above sets them on every server connection instead.
ignore_startup_parameters = extra_float_digits,statement_timeout,idle_in_transaction_session_timeout
; Test databases come and go by the hundred: forget an idle one's pool soon.
autodb_idle_timeout = 30
server_check_delay = 5
; A server login that failed (a database the startup check finds missing) is tried again soon.
server_login_retry = 1
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
chown postgres "$dir"/*
runuser -u postgres -- /usr/sbin/pgbouncer -d "$dir/pgbouncer.ini"
for _ in $(seq 1 50); do
  pg_isready -h 127.0.0.1 -p "$port" -q && exit 0
  sleep 0.2
done
echo "PgBouncer did not start on 127.0.0.1:$port; its log:" >&2
tail -n 20 "$dir/pgbouncer.log" >&2
exit 1
