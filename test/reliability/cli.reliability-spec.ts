import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { runCli as cli, type ServerChild, startServerProcess } from '../support/server-process';
import { startTestApp, type TestApp, uniqueSlug } from '../support/test-app';

function lastLine(output: string): string {
  return output.trimEnd().split('\n').pop() ?? '';
}

/** The environment without DATABASE_URL: the CLI and the app fall back to the embedded database in DATA_DIR. */
function embeddedEnv(dataDir: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir };
  delete env.DATABASE_URL;
  return env;
}

describe('CLI (npm run cli)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function createTenant(slug: string): Promise<void> {
    const created = await cli(['tenant', 'create', slug, '--name', `Tenant ${slug}`]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toContain(slug);
  }

  it('should issue a token that authenticates, printing its secret alone on the last line', async () => {
    const slug = uniqueSlug('cli');
    await createTenant(slug);

    const issued = await cli([
      'token',
      'create',
      '--tenant',
      slug,
      '--scopes',
      'subscribers:read,events:read',
    ]);
    expect(issued).toMatchObject({ code: 0, stderr: '' });
    const secret = lastLine(issued.stdout);
    expect(secret).toMatch(/^isk_[A-Za-z0-9_-]{43}$/);
    expect(issued.stdout.trimEnd().split('\n').length).toBeGreaterThan(1);

    const me = await request(t.http).get('/api/v1/me').set('Authorization', `Bearer ${secret}`).expect(200);
    expect(me.body).toMatchObject({
      success: true,
      data: { tenant_slug: slug, scopes: ['subscribers:read', 'events:read'] },
    });
  });

  it('should record its actions in the event log with the actor cli', async () => {
    const slug = uniqueSlug('cli');
    await createTenant(slug);
    const secret = lastLine(
      (await cli(['token', 'create', '--tenant', slug, '--scopes', 'events:read'])).stdout,
    );

    const events = await request(t.http)
      .get('/api/v1/events')
      .set('Authorization', `Bearer ${secret}`)
      .expect(200);
    const byType = Object.fromEntries(
      (events.body.data as { type: string; actor: unknown }[]).map((e) => [e.type, e.actor]),
    );
    expect(byType).toEqual({
      'tenant.created': { type: 'cli', id: null },
      'token.created': { type: 'cli', id: null },
    });
  });

  it('should revoke a token so that it stops authenticating', async () => {
    const slug = uniqueSlug('cli');
    await createTenant(slug);
    const issued = await cli(['token', 'create', '--tenant', slug, '--scopes', 'admin', '--name', 'doomed']);
    const secret = lastLine(issued.stdout);
    const tokenId = /tok_[0-9A-Z]{26}/.exec(issued.stdout)?.[0];
    expect(tokenId).toBeDefined();

    const revoked = await cli(['token', 'revoke', tokenId!, '--tenant', slug]);
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    const listed = await cli(['token', 'list', '--tenant', slug]);
    expect(listed.stdout).toMatch(new RegExp(`${tokenId}\\s+doomed\\s.*\\srevoked\\s`));
    const me = await request(t.http).get('/api/v1/me').set('Authorization', `Bearer ${secret}`).expect(401);
    expect(me.body).toMatchObject({ success: false, error: { code: 'invalid_token' } });
  });

  it('should refuse an unknown scope with exit code 2 and a message naming it', async () => {
    const slug = uniqueSlug('cli');
    await createTenant(slug);
    const result = await cli([
      'token',
      'create',
      '--tenant',
      slug,
      '--scopes',
      'subscribers:read,billing:steal',
    ]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/unknown scope "billing:steal"/i);
    expect(lastLine((await cli(['token', 'list', '--tenant', slug])).stdout)).toMatch(/has no tokens/);
  });

  it('should refuse an unknown tenant and a bad slug with exit code 2', async () => {
    const unknown = await cli(['token', 'create', '--tenant', uniqueSlug('nope'), '--scopes', 'admin']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no tenant "nope-[0-9a-f]+" exists/i);

    const badSlug = await cli(['tenant', 'create', 'Not_A_Slug']);
    expect(badSlug.code).toBe(2);
    expect(badSlug.stderr).toMatch(/invalid slug/i);
  });

  describe('on the embedded database', () => {
    let dataDir: string;
    let server: ServerChild;
    // A real server process: PGlite cannot open a data folder inside jest's module sandbox.
    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'isp-cli-'));
      server = await startServerProcess(dataDir);
    });
    afterAll(async () => {
      await server?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('should say the data folder is in use while the server runs, with exit code 1', async () => {
      const result = await cli(['tenant', 'list'], embeddedEnv(dataDir));
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`The data folder ${dataDir} is in use by the running server`);
      expect(result.stderr).toMatch(/stop the server first/i);
      expect(result.stderr).toContain('POST /api/v1/tokens');
    });
  });
});
