// Empties the database at DATABASE_URL (drops and recreates the public schema), for a clean CI run.
const { Client } = require('pg');

(async () => {
  const client = new Client({ connectionString: process.env.DATABASE_URL });
  await client.connect();
  await client.query('DROP SCHEMA IF EXISTS public CASCADE; CREATE SCHEMA public;');
  await client.end();
  process.stdout.write(`Reset ${new URL(process.env.DATABASE_URL).pathname.slice(1)}\n`);
})().catch((error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
