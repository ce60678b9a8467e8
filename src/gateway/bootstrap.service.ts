import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import { DEFAULT_TENANT_SLUG, TenantsService } from './tenants/tenants.service';
import { TokensService } from './tokens/tokens.service';

/** Makes sure there is a way in: the API_BOOTSTRAP_TOKEN, or on a fresh embedded database a first admin token. */
@Injectable()
export class BootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Bootstrap');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tenants: TenantsService,
    private readonly tokens: TokensService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.bootstrapToken) {
      await this.ensureBootstrapToken(this.config.bootstrapToken);
    } else if (this.config.databaseUrl === null && (await this.tokens.countAll()) === 0) {
      await this.issueFirstAdminToken();
    }
  }

  private async ensureBootstrapToken(secret: string): Promise<void> {
    const existing = await this.tokens.findBySecret(secret);
    if (existing) {
      if (existing.revokedAt)
        this.logger.warn('API_BOOTSTRAP_TOKEN names a revoked token; it stays revoked.');
      // Registered by an earlier version with ['admin']: the bootstrap token is the platform's, upgrade it once.
      else if (await this.tokens.grantPlatformAdmin(existing))
        this.logger.log('The API_BOOTSTRAP_TOKEN token now holds platform:admin.');
      return;
    }
    const tenant = await this.tenants.ensure(DEFAULT_TENANT_SLUG, 'Default tenant');
    try {
      await this.tokens.issue({
        tenant,
        name: 'bootstrap (API_BOOTSTRAP_TOKEN)',
        scopes: ['platform:admin'],
        expiresAt: null,
        secret,
      });
      this.logger.log('platform:admin token from API_BOOTSTRAP_TOKEN registered for tenant "default".');
    } catch (error) {
      if (!(await this.tokens.findBySecret(secret))) throw error; // another instance registered it first
    }
  }

  private async issueFirstAdminToken(): Promise<void> {
    const tenant = await this.tenants.ensure(DEFAULT_TENANT_SLUG, 'Default tenant');
    const { secret } = await this.tokens.issue({
      tenant,
      name: 'first admin token',
      scopes: ['platform:admin'],
      expiresAt: null,
    });
    // Printed once, straight to the terminal and never to the log: it is the only copy of the secret.
    process.stdout.write(
      `\nA fresh database: an admin token was issued for tenant "default". It is shown once; store it now:\n\n` +
        `    ${secret}\n\n`,
    );
  }
}
