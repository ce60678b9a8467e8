import type { Clock } from '../common/clock';
import type { Page } from '../common/envelope/envelope';
import { PageQueryDto } from '../common/pagination';
import type { WriteScope } from '../common/request-context';
import type { ApiToken, Tenant, TenantsService, TokensService } from '../gateway';
import { CliError, type CliCommand } from './cli-args';

type Print = (line: string) => void;

function table(rows: string[][]): string[] {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) =>
    row
      .map((cell, column) => cell.padEnd(widths[column]))
      .join('  ')
      .trimEnd(),
  );
}

/** Every row of a keyset-paginated list, page after page. */
async function all<T>(list: (query: PageQueryDto) => Promise<Page<T>>): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await list(Object.assign(new PageQueryDto(), { limit: 100, starting_after: cursor }));
    rows.push(...page.items);
    cursor = page.pagination.next_cursor ?? undefined;
  } while (cursor);
  return rows;
}

function tokenStatus(token: ApiToken, now: number): string {
  if (token.revokedAt) {
    return 'revoked';
  }
  if (token.expiresAt && token.expiresAt.getTime() <= now) {
    return 'expired';
  }
  return 'active';
}

/** The CLI's commands, over the same services the admin API uses (so the same events are written). */
export class CliCommands {
  constructor(
    private readonly tenants: TenantsService,
    private readonly tokens: TokensService,
    private readonly print: Print,
    /** The scope of the command's writes: its events name the CLI as the actor. */
    private readonly scope: WriteScope,
    private readonly clock: Clock,
  ) {}

  async run(command: Exclude<CliCommand, { kind: 'help' }>): Promise<void> {
    switch (command.kind) {
      case 'tenant.create':
        return this.createTenant(command.slug, command.name);
      case 'tenant.list':
        return this.listTenants();
      case 'token.create':
        return this.createToken(command);
      case 'token.list':
        return this.listTokens(command.tenant);
      case 'token.revoke':
        return this.revokeToken(command.tenant, command.tokenId);
    }
  }

  private async createTenant(slug: string, name: string): Promise<void> {
    const tenant = await this.tenants.create(this.scope, slug, name);
    this.print(`Created tenant ${tenant.slug} (${tenant.id}), name "${tenant.name}".`);
  }

  private async listTenants(): Promise<void> {
    const tenants = await all((query) => this.tenants.list(query));
    if (tenants.length === 0) {
      return this.print('No tenants.');
    }
    const rows = tenants.map((t) => [t.id, t.slug, t.name, t.createdAt.toISOString()]);
    table([['ID', 'SLUG', 'NAME', 'CREATED'], ...rows]).forEach(this.print);
  }

  private async createToken(command: Extract<CliCommand, { kind: 'token.create' }>): Promise<void> {
    const tenant = await this.tenant(command.tenant);
    const { token, secret } = await this.tokens.issue(this.scope, {
      tenant,
      name: command.name,
      scopes: command.scopes,
      expiresAt: command.expiresAt,
    });
    this.print(`Issued token ${token.id} "${token.name}" for tenant ${tenant.slug} (${tenant.id}).`);
    this.print(`Scopes: ${token.scopes.join(', ')}`);
    this.print(`Expires: ${token.expiresAt?.toISOString() ?? 'never'}`);
    this.print('The secret below is shown once and cannot be recovered; store it now:');
    this.print(secret);
  }

  private async listTokens(tenantRef: string): Promise<void> {
    const tenant = await this.tenant(tenantRef);
    const tokens = await all((query) => this.tokens.list(tenant.id, query));
    if (tokens.length === 0) {
      return this.print(`Tenant ${tenant.slug} has no tokens.`);
    }
    const now = this.clock.now().getTime();
    const rows = tokens.map((t) => [
      t.id,
      t.name,
      `${t.prefix}...${t.last4}`,
      t.scopes.join(','),
      tokenStatus(t, now),
      t.expiresAt?.toISOString() ?? 'never',
      t.lastUsedAt?.toISOString() ?? 'never',
    ]);
    table([['ID', 'NAME', 'TOKEN', 'SCOPES', 'STATUS', 'EXPIRES', 'LAST USED'], ...rows]).forEach(this.print);
  }

  private async revokeToken(tenantRef: string, tokenId: string): Promise<void> {
    const tenant = await this.tenant(tenantRef);
    const token = await this.tokens.revoke(this.scope, tenant.id, tokenId);
    this.print(`Revoked token ${token.id} of tenant ${tenant.slug} at ${token.revokedAt?.toISOString()}.`);
  }

  private async tenant(idOrSlug: string): Promise<Tenant> {
    const tenant = await this.tenants.findByIdOrSlug(idOrSlug);
    if (!tenant) {
      throw new CliError(`No tenant "${idOrSlug}" exists. See the tenants with: npm run cli -- tenant list`);
    }
    return tenant;
  }
}
