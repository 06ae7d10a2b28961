#!/usr/bin/env bash
# Start a local PostgreSQL server for the store tests and print its SQLAlchemy URL.
# Installs Debian's postgresql when it is missing (CI machines start without it running).
set -euo pipefail
log() { echo "start-postgres: $*" >&2; }
if ! command -v pg_lsclusters >/dev/null 2>&1; then
  log "installing postgresql with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2 && apt-get install -y -qq postgresql >&2
fi
cluster=$(pg_lsclusters --no-header | head -n 1)
if [ -z "$cluster" ]; then
  version=$(ls /usr/lib/postgresql | sort -V | tail -n 1)
  pg_createcluster "$version" main >&2
  cluster=$(pg_lsclusters --no-header | head -n 1)
fi
read -r version name port status _ <<<"$cluster"
if [ "$status" != "online" ]; then
  pg_ctlcluster "$version" "$name" start >&2
fi
as_postgres() { (cd / && runuser -u postgres -- "$@"); }
for _ in $(seq 1 30); do
  as_postgres psql -p "$port" -qAtc "select 1" >/dev/null 2>&1 && break
  sleep 1
done
as_postgres psql -p "$port" -qAtc "select 1 from pg_roles where rolname='costsched'" | grep -q 1 ||
  as_postgres psql -p "$port" -qc "create role costsched login password 'costsched' createdb" >&2
as_postgres psql -p "$port" -qAtc "select 1 from pg_database where datname='costsched_test'" | grep -q 1 ||
  as_postgres psql -p "$port" -qc "create database costsched_test owner costsched" >&2
echo "postgresql+psycopg://costsched:costsched@127.0.0.1:${port}/costsched_test"
