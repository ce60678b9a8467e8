import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StartupError } from '../common/startup-error';
import { loadConfig } from '../config/app-config';
import { ADMIN_TOKEN_FILE, BootstrapService } from './bootstrap.service';
import type { TenantsService } from './tenants/tenants.service';
import type { TokensService } from './tokens/tokens.service';

const SECRET = 'isk_first_admin_token_for_the_unit_test_000';

describe('BootstrapService on a fresh embedded database', () => {
  let dataDir: string;
  let issue: jest.Mock;
  let written: string;
  let isTTY: boolean | undefined;

  function service(): BootstrapService {
    const tenants = { ensure: jest.fn().mockResolvedValue({ id: 'ten_1' }) } as unknown as TenantsService;
    const tokens = { countAll: jest.fn().mockResolvedValue(0), issue } as unknown as TokensService;
    return new BootstrapService(loadConfig({ DATA_DIR: dataDir }), tenants, tokens);
  }

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'isp-api-bootstrap-'));
    issue = jest.fn().mockResolvedValue({ secret: SECRET });
    written = '';
    isTTY = process.stdout.isTTY;
    jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written += chunk.toString();
      return true;
    });
  });
  afterEach(() => {
    jest.restoreAllMocks();
    process.stdout.isTTY = isTTY as true;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('should print the first admin token when stdout is a terminal, and write no file', async () => {
    process.stdout.isTTY = true;
    await service().run();
    expect(written).toContain(SECRET);
    expect(existsSync(join(dataDir, ADMIN_TOKEN_FILE))).toBe(false);
  });

  it('should write the first admin token to DATA_DIR/admin-token (mode 0600) when stdout is not a terminal', async () => {
    process.stdout.isTTY = false;
    await service().run();
    const file = join(dataDir, ADMIN_TOKEN_FILE);
    expect(readFileSync(file, 'utf8')).toBe(`${SECRET}\n`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(written).not.toContain(SECRET);
  });

  it('should stop, issuing nothing, when an admin-token file from an earlier database is in the way', async () => {
    process.stdout.isTTY = false;
    writeFileSync(join(dataDir, ADMIN_TOKEN_FILE), 'isk_old\n');
    await expect(service().run()).rejects.toThrow(StartupError);
    await expect(service().run()).rejects.toThrow(/admin-token exists.*Delete or move it/);
    expect(issue).not.toHaveBeenCalled();
    expect(readFileSync(join(dataDir, ADMIN_TOKEN_FILE), 'utf8')).toBe('isk_old\n');
  });
});
