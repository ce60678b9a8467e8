import { SYSTEM_SCOPE } from '../common/request-context';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from '../common/startup-error';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DEFAULT_TENANT_SLUG, TenantsService } from './tenants/tenants.service';
import { TokensService } from './tokens/tokens.service';

/** Where the first admin token goes when stdout is not a terminal (a container log is kept and shipped). */
export const ADMIN_TOKEN_FILE = 'admin-token';

/**
 * Makes sure there is a way in: the API_BOOTSTRAP_TOKEN, or on a fresh embedded database a first admin token.
 * Run by createApp once the HTTP port is bound, so a server that cannot start issues nothing.
 */
@Injectable()
export class BootstrapService {
  private readonly logger = new Logger('Bootstrap');
  private finished = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tenants: TenantsService,
    private readonly tokens: TokensService,
  ) {}

  /**
   * Whether run() has finished: until then the port may be bound with no way in yet (the API_BOOTSTRAP_TOKEN not yet
   * registered), so /health/ready answers 503.
   */
  get done(): boolean {
    return this.finished;
  }

  async run(): Promise<void> {
    if (this.config.bootstrapToken) {
      await this.ensureBootstrapToken(this.config.bootstrapToken);
    } else if (this.config.databaseUrl === null && (await this.tokens.countAll()) === 0) {
      await this.issueFirstAdminToken();
    }
    this.finished = true;
  }

  private async ensureBootstrapToken(secret: string): Promise<void> {
    const existing = await this.tokens.findBySecret(secret);
    if (existing) {
      if (existing.revokedAt) {
        this.logger.warn('API_BOOTSTRAP_TOKEN names a revoked token; it stays revoked.');
      }
      // Registered by an earlier version with ['admin']: the bootstrap token is the platform's, upgrade it once.
      else if (await this.tokens.grantPlatformAdmin(existing)) {
        this.logger.log('The API_BOOTSTRAP_TOKEN token now holds platform:admin.');
      }
      return;
    }
    const tenant = await this.tenants.ensure(DEFAULT_TENANT_SLUG, 'Default tenant');
    try {
      await this.tokens.issue(SYSTEM_SCOPE, {
        tenant,
        name: 'bootstrap (API_BOOTSTRAP_TOKEN)',
        scopes: ['platform:admin'],
        expiresAt: null,
        secret,
      });
      this.logger.log('platform:admin token from API_BOOTSTRAP_TOKEN registered for tenant "default".');
    } catch (error) {
      if (!(await this.tokens.findBySecret(secret))) {
        throw error;
      } // another instance registered it first
    }
  }

  private async issueFirstAdminToken(): Promise<void> {
    // The file is made before the token, so a file in the way stops the boot with nothing issued.
    const file = process.stdout.isTTY ? null : this.createTokenFile();
    try {
      const tenant = await this.tenants.ensure(DEFAULT_TENANT_SLUG, 'Default tenant');
      const { secret } = await this.tokens.issue(SYSTEM_SCOPE, {
        tenant,
        name: 'first admin token',
        scopes: ['platform:admin'],
        expiresAt: null,
      });
      if (file) {
        writeSync(file.fd, `${secret}\n`);
        this.logger.log(
          `A fresh database: the first admin token (tenant "default") is in ${file.path}, readable by this user ` +
            'only. Store it elsewhere, then delete the file.',
        );
      } else {
        // Straight to the terminal and never to the log: it is the only copy of the secret.
        process.stdout.write(
          `\nA fresh database: an admin token was issued for tenant "default". It is shown once; store it now:\n\n` +
            `    ${secret}\n\n`,
        );
      }
    } catch (error) {
      if (file) {
        rmSync(file.path, { force: true });
      }
      throw error;
    } finally {
      if (file) {
        closeSync(file.fd);
      }
    }
  }

  private createTokenFile(): { fd: number; path: string } {
    const path = join(this.config.dataDir, ADMIN_TOKEN_FILE);
    try {
      return { fd: openSync(path, 'wx', 0o600), path };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw error;
      }
      throw new StartupError(
        `${path} exists, but the database holds no token: it is from an earlier database. ` +
          'Delete or move it, then start again to have a new first admin token written there.',
      );
    }
  }
}
