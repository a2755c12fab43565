#!/usr/bin/env node
// PostGraphile 4 over Frontdesk's PostgreSQL tables, for the throughput benchmark's comparison (see README.md).
//
//   node server.js --port P --database-url URL --schema S [--pool-size N] [--workers N]
//
// Prints `ready http://127.0.0.1:P/graphql` on stdout once the GraphQL schema is built and the port listens;
// exits non-zero if the database or the schema's `reservations` table cannot be reached.
'use strict';

// Before anything loads: graphql-js skips its development-only checks in production, and PostGraphile's "turbo"
// build (native async/await, Node >= 14) is the faster one.
process.env.NODE_ENV = process.env.NODE_ENV || 'production';
process.env.GRAPHILE_TURBO = process.env.GRAPHILE_TURBO || '1';

const cluster = require('node:cluster');
const http = require('node:http');
const { parseArgs } = require('node:util');

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    'database-url': { type: 'string' },
    schema: { type: 'string' },
    // Frontdesk's benchmark server opens at most 16 connections; the same here by default.
    'pool-size': { type: 'string', default: '16' },
    // PostGraphile 4 runs on one Node thread. More workers (node:cluster, one pool each) are there to see what
    // more cores would give; the comparison the benchmark reports uses 1.
    workers: { type: 'string', default: '1' },
  },
});
for (const name of ['port', 'database-url', 'schema']) {
  if (!args[name]) {
    console.error(`usage: node server.js --port P --database-url URL --schema S [--pool-size N] [--workers N]`);
    process.exit(2);
  }
}
const port = Number(args.port);
const workers = Number(args.workers);

if (workers > 1 && cluster.isPrimary) {
  // The primary only forks; workers share the listening port. Ready once every worker is.
  let ready = 0;
  for (let i = 0; i < workers; i++) {
    cluster.fork().on('message', (m) => {
      if (m === 'ready' && ++ready === workers) console.log(`ready http://127.0.0.1:${port}/graphql`);
    });
  }
  cluster.on('exit', (_worker, code) => {
    console.error(`a worker exited (${code}); stopping`);
    process.exit(code || 1);
  });
  for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
} else {
  serve().catch((e) => {
    console.error(e && e.message ? e.message : e);
    process.exit(1);
  });
}

async function serve() {
  const { Pool } = require('pg');
  const { postgraphile } = require('postgraphile');
  const ConnectionFilterPlugin = require('postgraphile-plugin-connection-filter');

  const pool = new Pool({ connectionString: args['database-url'], max: Number(args['pool-size']) });
  const handler = postgraphile(pool, args.schema, {
    appendPlugins: [ConnectionFilterPlugin],
    // Only the comparison filter operators on plain columns: the range conditions the stay-window list needs.
    graphileBuildOptions: {
      connectionFilterRelations: false,
      connectionFilterComputedColumns: false,
      connectionFilterSetofFunctions: false,
      connectionFilterLogicalOperators: false,
      connectionFilterArrays: false,
    },
    // A read benchmark: no mutations (also keeps the migrations' trigger helper functions out of the schema).
    disableDefaultMutations: true,
    // Both `allReservations` (a connection: `totalCount`) and `allReservationsList` (a plain list).
    simpleCollections: 'both',
    setofFunctionsContainNulls: false,
    // JSON stays JSON (the tables have no json columns today; harmless, and what a real deployment would set).
    dynamicJson: true,
    // Production settings: the schema is built once, no GraphiQL, no per-request log line, no stack traces.
    watchPg: false,
    graphiql: false,
    enhanceGraphiql: false,
    disableQueryLog: true,
    extendedErrors: [],
    showErrorStack: false,
    retryOnInitFail: false,
    ignoreRBAC: true,
  });

  // Build the schema now (introspection), not on the first request, and check that it is the right database.
  const schema = await handler.getGraphQLSchema();
  const fields = schema.getQueryType().getFields();
  if (!fields.allReservations || !fields.reservationById) {
    throw new Error(`no reservations table in schema ${args.schema} of that database`);
  }

  const server = http.createServer(handler);
  // Keep-alive longer than the client's idle timeout so that the benchmark's pooled connections are not cut.
  server.keepAliveTimeout = 65_000;
  await new Promise((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  if (cluster.isWorker) process.send('ready');
  else console.log(`ready http://127.0.0.1:${port}/graphql`);

  // Close the database connections before leaving, so that the benchmark can drop its schema right after.
  // (A connection still checked out would hold `pool.end()` forever: give up on it after two seconds.)
  const stop = () => {
    setTimeout(() => process.exit(0), 2000).unref();
    server.close();
    server.closeAllConnections();
    pool.end().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
