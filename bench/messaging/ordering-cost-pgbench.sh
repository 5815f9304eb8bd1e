#!/bin/sh
# The writer's statement without Node in the loop: the insert of the outbox before the per-key lock and now
# (sql/insert-one.sql), through pgbench, rounds alternating. 8 clients each run BEGIN; insert; COMMIT with a
# random key out of a billion (no two writers share a key) or out of 4 (writers of one key take turns), 6 s a
# run; then one client with synchronous_commit off: the statement's own latency. Quoted in bench/messaging/limits.md.
#   flock /tmp/oncely-bench.lock sh bench/messaging/ordering-cost-pgbench.sh
set -eu
DB=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
SCHEMA=oncely_bench_pgbench_$$
DIR=$(mktemp -d)
trap 'psql -q "$DB" -c "DROP SCHEMA IF EXISTS $SCHEMA CASCADE" >/dev/null 2>&1; rm -rf "$DIR"' EXIT
psql -q "$DB" -c "CREATE SCHEMA $SCHEMA" >/dev/null
node --import tsx -e "
  const { migrate } = await import('./src/messaging/outbox/index.ts');
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: '$DB', max: 1 });
  await migrate(pool, { schema: '$SCHEMA' });
  await pool.end();
"
T="\"$SCHEMA\".oncely_outbox"
KEY="('k' || :k)::text"
echo "WITH inserted AS (INSERT INTO $T (topic, key, payload, content_type, headers) VALUES ('t', $KEY, '\\x00', 'application/json', '{}') RETURNING id) SELECT id::text AS id FROM inserted;" > "$DIR/before"
echo "WITH locked AS (SELECT count(pg_advisory_xact_lock(hashtext('$T'), hashtext($KEY))) AS keys WHERE $KEY IS NOT NULL), inserted AS (INSERT INTO $T (topic, key, payload, content_type, headers) SELECT 't'::text, $KEY, '\\x00'::bytea, 'application/json'::text, '{}'::jsonb FROM locked RETURNING id) SELECT id::text AS id FROM inserted;" > "$DIR/now"
for variant in before now; do
  for keys in 1000000000 4; do
    printf '\\set k random(1, %s)\nBEGIN;\n%s\nCOMMIT;\n' "$keys" "$(cat "$DIR/$variant")" > "$DIR/$variant-$keys"
  done
  printf '\\set k random(1, 1000000000)\n%s\n' "$(cat "$DIR/$variant")" > "$DIR/$variant-alone"
done
tps() { pgbench "$DB" -n -M prepared "$@" 2>/dev/null | sed -n 's/^tps = \([0-9]*\).*/\1/p'; }
latency() { PGOPTIONS='-c synchronous_commit=off' pgbench "$DB" -n -M prepared -c 1 -T 5 -f "$1" 2>/dev/null | sed -n 's/^latency average = \(.*\)/\1/p'; }
for round in 1 2 3; do
  order="before now"; [ $((round % 2)) -eq 0 ] && order="now before"
  for variant in $order; do
    echo "round $round $variant: distinct keys $(tps -c 8 -j 2 -T 6 -f "$DIR/$variant-1000000000") tx/s," \
      "4 keys $(tps -c 8 -j 2 -T 6 -f "$DIR/$variant-4") tx/s, statement alone $(latency "$DIR/$variant-alone")"
    psql -q "$DB" -c "TRUNCATE $T" >/dev/null
  done
done
