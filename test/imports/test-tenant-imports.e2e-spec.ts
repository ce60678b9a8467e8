import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { bearer } from '../support/factories';
import { importErrors, type ImportJob, waitForImport } from '../support/import-factory';
import { listen, uniqueRef } from '../support/subscriber-factory';
import {
  createTenantWithToken,
  ensure,
  startTestApp,
  type TenantWithToken,
  type TestApp,
} from '../support/test-app';
import { letTimePass } from '../support/wait-for';

/**
 * Issue #32, items 2 and 5 together: an upload is stored under a job still `receiving`, and the import worker deletes
 * the ones an instance died reading once they are an hour old. A test tenant's records are dated by its test clock,
 * so "an hour old" must not be read from the job's creation date: a clock frozen years back would make every upload
 * of its tenant look abandoned the moment it starts.
 */
describe('Imports of a test tenant', () => {
  let t: TestApp;
  let owner: TenantWithToken;

  beforeAll(async () => {
    t = await startTestApp({ IMPORT_POLL_MS: '20' });
    owner = await createTenantWithToken(t);
    await listen(t);
  });
  afterAll(() => t.close());

  /** POSTs a CSV in two chunks, `pauseMs` apart: the worker's passes run while the upload is still arriving. */
  function slowUpload(token: string, first: string, rest: string, pauseMs: number) {
    const { port } = t.http.address() as AddressInfo;
    return new Promise<{ status: number; body: { data: ImportJob } }>((resolve, reject) => {
      const req = httpRequest(
        {
          port,
          host: '127.0.0.1',
          method: 'POST',
          path: '/api/v1/imports?kind=subscribers',
          headers: { ...bearer(token), 'Content-Type': 'text/csv', 'Transfer-Encoding': 'chunked' },
        },
        (res) => {
          const parts: Buffer[] = [];
          res.on('data', (part: Buffer) => parts.push(part));
          res.on('end', () =>
            resolve({ status: res.statusCode!, body: JSON.parse(Buffer.concat(parts).toString('utf8')) }),
          );
        },
      );
      req.on('error', reject);
      req.write(first);
      void letTimePass(pauseMs).then(() => req.end(rest));
    });
  }

  it('should import an upload that takes longer than a worker pass, whatever the clock of the tenant reads', async () => {
    const created = await request(t.http)
      .post('/api/v1/test-clocks')
      .set(bearer(owner.token))
      .send({ name: 'Years back', frozen_time: '2020-01-01T00:00:00.000Z' });
    const { token } = ensure(created, 201, 'create test clock').body.data as { token: string };
    const refs = [uniqueRef(), uniqueRef()];

    // Several of the worker's passes (one each 20 ms) run between the two chunks.
    const res = await slowUpload(
      token,
      `external_id,full_name,status\n${refs[0]},Ada Lovelace,active\n`,
      `${refs[1]},Grace Hopper,active\n`,
      500,
    );
    expect(res.status).toBe(202);
    const job = await waitForImport(t, token, res.body.data.id);
    expect(await importErrors(t, token, job.id)).toEqual([]);
    expect(job).toMatchObject({ status: 'completed', rows_total: 2, created: 2, failed: 0 });
    expect(job.created_at).toBe('2020-01-01T00:00:00.000Z');
    for (const ref of refs) {
      const found = await request(t.http)
        .get('/api/v1/subscribers')
        .query({ external_id: ref })
        .set(bearer(token));
      expect(found.body.data).toHaveLength(1);
    }
  });
});
