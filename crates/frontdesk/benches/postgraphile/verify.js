#!/usr/bin/env node
// Checks that server.js answers the documents of queries.json exactly as Frontdesk's SQL does, on a scratch schema
// of 26,000 stays (20,000 at one hotel), then times each document over a short sequential loop and drops the schema.
//
//   node verify.js [--database-url postgres://postgres@127.0.0.1:5432/test] [--port 5099]
//
// Needs psql on PATH. The reference SQL is Frontdesk's list *without* the longest-stay bound, so a wrong bound
// (rows lost before the window) would show as a difference too.
'use strict';

const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const queries = require('./queries.json');

const { values: args } = parseArgs({
  options: {
    'database-url': { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/test' },
    port: { type: 'string', default: '5099' },
  },
});
const url = args['database-url'];
const schema = 'pgcomp_scratch';
const migrations = path.join(__dirname, '..', '..', 'migrations', 'postgres');
// No NOTICEs from DROP SCHEMA ... CASCADE.
process.env.PGOPTIONS = `${process.env.PGOPTIONS || ''} -c client_min_messages=warning`;

const psql = (sql) =>
  execFileSync('psql', [url, '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-c', `SET search_path TO ${schema}`, '-c', sql], {
    encoding: 'utf8',
  }).trim();

const SEED = `
-- Ids are UUIDs made from a name (md5(name)::uuid), so that the checks below can name them.
INSERT INTO organizations VALUES (md5('org1')::uuid, 'Org 1', '2026-01-01T00:00:00Z'), (md5('org2')::uuid, 'Org 2', '2026-01-01T00:00:00Z');
INSERT INTO hotels (id, organization_id, name, timezone, currency, check_in_time, check_out_time, public_booking,
    created_at, updated_at)
SELECT md5(h)::uuid, md5(o)::uuid, 'Hotel ' || h, 'UTC', 'EUR', '15:00', '11:00', FALSE, timestamptz '2026-01-01T00:00:00Z', timestamptz '2026-01-01T00:00:00Z'
FROM (VALUES ('h1', 'org1'), ('h2', 'org1'), ('h3', 'org2')) v (h, o);
INSERT INTO room_types (id, organization_id, hotel_id, name, max_occupancy, max_adults, max_children, created_at,
    updated_at)
SELECT md5('rt-' || id)::uuid, organization_id, id, 'Double', 2, 2, 0, created_at, updated_at FROM hotels;
-- md5 ids: id order is not insertion order, and many stays share a check-in date, so the id tie-break is tested.
INSERT INTO reservations (id, organization_id, hotel_id, status, check_in_date, check_out_date, nights, start_time,
    end_time, adults, children, infants, total_price, currency, source, created_at, updated_at)
SELECT md5(i::text)::uuid, md5(o)::uuid, md5(h)::uuid, 'CONFIRMED', ci, ci + n, n,
    (ci + time '15:00') AT TIME ZONE 'UTC', (ci + n + time '11:00') AT TIME ZONE 'UTC', 2, 0, 0, 10000 * n,
    'EUR', 'DIRECT', timestamptz '2026-01-01T00:00:00Z', timestamptz '2026-01-01T00:00:00Z'
FROM (SELECT i, CASE WHEN i <= 23000 THEN 'org1' ELSE 'org2' END AS o,
             CASE WHEN i <= 20000 THEN 'h1' WHEN i <= 23000 THEN 'h2' ELSE 'h3' END AS h,
             date '2026-01-01' + (hashint4(i) & 1023) % 730 AS ci, 1 + (hashint4(i * 7) & 1023) % (CASE WHEN i <= 20000 THEN 14 ELSE 30 END) AS n
      FROM generate_series(1, 26000) i) s;
-- Long stays get a second room, inserted before the first so that position order is not insertion order.
INSERT INTO reservation_rooms (id, reservation_id, hotel_id, room_type_id, status, adults, children, infants, price,
    check_in_date, check_out_date, holds_inventory, position)
SELECT md5(r.id::text || p)::uuid, r.id, r.hotel_id, md5('rt-' || r.hotel_id)::uuid, 'CONFIRMED', 2, 0, 0, r.total_price, r.check_in_date,
    r.check_out_date, TRUE, p
FROM reservations r CROSS JOIN (VALUES (1), (0)) v (p) WHERE p = 0 OR r.nights > 10;
INSERT INTO folios SELECT md5('f-' || id)::uuid, id, 'EUR', created_at FROM reservations WHERE nights % 3 = 0;
INSERT INTO folio_charges
SELECT md5(f.id::text || p)::uuid, f.id, date '2026-02-01' + (2 - p), 'Charge ' || p, 100 * (p + 1), 'EUR', p
FROM folios f CROSS JOIN (VALUES (1), (0)) v (p);
ANALYZE;`;

async function main() {
  execFileSync('psql', [url, '-X', '-q', '-c', `DROP SCHEMA IF EXISTS ${schema} CASCADE`, '-c', `CREATE SCHEMA ${schema}`]);
  let server;
  try {
    for (const file of fs.readdirSync(migrations).filter((f) => f.endsWith('.sql')).sort()) {
      execFileSync('psql', [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `SET search_path TO ${schema}`, '-f', path.join(migrations, file)]);
    }
    psql(SEED);
    // As after a long-running service's autovacuum: the visibility map lets the count be an index-only scan.
    psql('VACUUM reservations');

    server = spawn(process.execPath, [path.join(__dirname, 'server.js'), '--port', args.port, '--database-url', url, '--schema', schema], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((resolve, reject) => {
      server.stdout.on('data', (d) => String(d).startsWith('ready') && resolve());
      server.on('exit', (code) => reject(new Error(`server.js exited (${code})`)));
    });
    const endpoint = `http://127.0.0.1:${args.port}/graphql`;
    const gql = async (doc, variables) => {
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: doc.query, variables }),
      });
      const body = await res.json();
      if (body.errors) throw new Error(JSON.stringify(body.errors));
      return body.data;
    };

    let failures = 0;
    // psql trims its output; so does the comparison.
    const check = (what, got, want) => {
      got = got.trim();
      if (got !== want) {
        failures++;
        console.log(`MISMATCH ${what}\n  graphql ${got}\n  sql     ${want}`);
      }
    };

    // (1) the stay window, over hotels of both organizations, windows at the edges of the data, narrow and wide.
    const windows = [
      ['2025-12-01', '2025-12-31'], ['2025-12-20', '2026-01-03'], ['2026-01-01', '2026-01-01'], ['2026-03-10', '2026-03-10'],
      ['2026-06-01', '2026-06-14'], ['2026-06-01', '2026-08-31'], ['2027-02-27', '2027-03-01'], ['2027-12-25', '2028-01-31'],
      ['2028-02-01', '2028-02-28'], ['2026-01-01', '2027-12-31'],
    ];
    const uid = (name) => psql(`SELECT md5('${name}')::uuid`);
    const hotels = [['org1', 'h1'], ['org1', 'h2'], ['org2', 'h3'], ['org2', 'h1']].map(([o, h]) => [uid(o), uid(h)]);
    let cases = 0;
    for (const [organizationId, hotelId] of hotels) {
      const longest = Number(psql(`SELECT COALESCE(MAX(nights), 0) FROM reservations WHERE hotel_id = '${hotelId}'`));
      for (const [from, to] of windows) {
        const checkInFrom = psql(`SELECT to_char(date '${from}' - ${longest}, 'YYYY-MM-DD')`);
        const data = await gql(queries.stayWindow, { organizationId, hotelId, checkInFrom, from, to, first: 50 });
        const got = `${data.allReservations.totalCount} ${data.allReservations.nodes.map((n) => n.id).join(',')}`;
        const where = `organization_id = '${organizationId}' AND hotel_id = '${hotelId}' AND check_out_date > '${from}' AND check_in_date <= '${to}'`;
        const want = psql(
          `SELECT (SELECT COUNT(*) FROM reservations WHERE ${where}) || ' ' || COALESCE((SELECT string_agg(id::text, ',' ORDER BY check_in_date, id) ` +
            `FROM (SELECT id, check_in_date FROM reservations WHERE ${where} ORDER BY check_in_date, id LIMIT 50) page), '')`,
        );
        check(`stay window ${organizationId}/${hotelId} ${from}..${to}`, got, want);
        cases++;
      }
    }

    // (1b) a hotel's first page in id order, with its total.
    for (const [organizationId, hotelId] of hotels) {
      const data = await gql(queries.hotelList, { organizationId, hotelId, first: 50 });
      const got = `${data.allReservations.totalCount} ${data.allReservations.nodes.map((n) => n.id).join(',')}`;
      const where = `organization_id = '${organizationId}' AND hotel_id = '${hotelId}'`;
      const want = psql(
        `SELECT (SELECT COUNT(*) FROM reservations WHERE ${where}) || ' ' || COALESCE((SELECT string_agg(id::text, ',' ORDER BY id) ` +
          `FROM (SELECT id FROM reservations WHERE ${where} ORDER BY id LIMIT 50) page), '')`,
      );
      check(`hotel list ${organizationId}/${hotelId}`, got, want);
      cases++;
    }

    // (1c) an organization's first page in id order, with its total.
    for (const organizationId of [...new Set(hotels.map(([o]) => o))]) {
      const data = await gql(queries.organizationList, { organizationId, first: 50 });
      const got = `${data.allReservations.totalCount} ${data.allReservations.nodes.map((n) => n.id).join(',')}`;
      const where = `organization_id = '${organizationId}'`;
      const want = psql(
        `SELECT (SELECT COUNT(*) FROM reservations WHERE ${where}) || ' ' || COALESCE((SELECT string_agg(id::text, ',' ORDER BY id) ` +
          `FROM (SELECT id FROM reservations WHERE ${where} ORDER BY id LIMIT 50) page), '')`,
      );
      check(`organization list ${organizationId}`, got, want);
      cases++;
    }

    // (2) single reservations: one or two rooms, with and without a folio, and an unknown id.
    const ids = psql(
      `(SELECT id FROM reservations WHERE nights > 10 AND nights % 3 = 0 LIMIT 5) UNION ALL (SELECT id FROM reservations WHERE nights <= 10 AND nights % 3 <> 0 LIMIT 5) UNION ALL (SELECT id FROM reservations WHERE hotel_id = md5('h3')::uuid LIMIT 5)`,
    ).split('\n');
    for (const id of [...ids, '00000000-0000-0000-0000-000000000000']) {
      const r = (await gql(queries.reservation, { id })).reservationById;
      const got = r
        ? `${r.id} ${r.checkInDate} ${r.totalPrice} rooms ${r.reservationRoomsByReservationIdList.map((x) => x.id).join(',')} folio ` +
          (r.folioByReservationId ? `${r.folioByReservationId.id} ${r.folioByReservationId.folioChargesByFolioIdList.map((c) => `${c.id}:${c.amount}`).join(',')}` : '')
        : 'null';
      const want =
        psql(
          `SELECT r.id || ' ' || r.check_in_date || ' ' || r.total_price || ' rooms ' || (SELECT string_agg(id::text, ',' ORDER BY position) FROM reservation_rooms WHERE reservation_id = r.id) || ' folio ' || ` +
            `COALESCE((SELECT f.id || ' ' || (SELECT string_agg(c.id || ':' || c.amount, ',' ORDER BY c.position) FROM folio_charges c WHERE c.folio_id = f.id) FROM folios f WHERE f.reservation_id = r.id), '') ` +
            `FROM reservations r WHERE r.id = '${id}'`,
        ) || 'null';
      check(`reservation ${id}`, got, want);
      cases++;
    }
    console.log(`${cases} cases compared, ${failures} mismatches`);

    // A rough sequential timing (one client, keep-alive), only to see that nothing is pathologically slow.
    for (const [name, doc, variables] of [
      ['stayWindow', queries.stayWindow, { organizationId: hotels[0][0], hotelId: hotels[0][1], checkInFrom: '2026-05-18', from: '2026-06-01', to: '2026-06-14', first: 50 }],
      ['hotelList', queries.hotelList, { organizationId: hotels[0][0], hotelId: hotels[0][1], first: 50 }],
      ['organizationList', queries.organizationList, { organizationId: hotels[0][0], first: 50 }],
      ['reservation', queries.reservation, { id: ids[0] }],
    ]) {
      for (let i = 0; i < 50; i++) await gql(doc, variables);
      const n = 500;
      const started = process.hrtime.bigint();
      for (let i = 0; i < n; i++) await gql(doc, variables);
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      console.log(`${name}: ${n} sequential requests, ${(ms / n).toFixed(2)} ms each (${Math.round((n * 1000) / ms)}/s)`);
    }
    if (failures) process.exitCode = 1;
  } finally {
    if (server) {
      server.kill('SIGTERM');
      await new Promise((resolve) => (server.exitCode !== null ? resolve() : server.once('exit', resolve)));
    }
    execFileSync('psql', [url, '-X', '-q', '-c', `DROP SCHEMA IF EXISTS ${schema} CASCADE`]);
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
