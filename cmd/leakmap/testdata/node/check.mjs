// Opens a case database read-only with the DuckDB Node API and reads every
// table and view; prints one line per object and exits non-zero on failure.
import { DuckDBInstance } from '@duckdb/node-api';
const path = process.argv[2];
const instance = await DuckDBInstance.create(path, { access_mode: 'READ_ONLY' });
const conn = await instance.connect();
const objs = (await (await conn.run(`SELECT table_name FROM duckdb_tables() WHERE NOT internal AND NOT temporary
  UNION ALL SELECT view_name FROM duckdb_views() WHERE NOT internal AND NOT temporary ORDER BY 1`)).getRows()).map(r => r[0]);
for (const name of objs) {
  const rows = await (await conn.run(`SELECT count(*) FROM (SELECT * FROM "${name}")`)).getRows();
  console.log(`${name} ${rows[0][0]}`);
}
console.log(`ok ${objs.length}`);
