/**
 * Jest `setupFiles` of the e2e project: on the embedded databases of test/support/global-setup.ts, this worker's
 * DATABASE_URL is the database of its JEST_WORKER_ID (1 to maxWorkers; 1 in band). A worker runs one suite at a time,
 * so a database serves one suite at a time, as the single shared one did before. With DATABASE_URL naming a server,
 * EMBEDDED_DATABASE_URLS is not set and nothing changes.
 */
const urls = JSON.parse(process.env.EMBEDDED_DATABASE_URLS ?? '[]') as string[];
if (urls.length > 0) {
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const url = urls[(worker - 1) % urls.length];
  if (!url) {
    throw new Error(`no embedded test database for jest worker ${process.env.JEST_WORKER_ID}`);
  }
  process.env.DATABASE_URL = url;
}
