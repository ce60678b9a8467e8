import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { isId } from '../common/ids';
import { isScope, type Scope, SCOPES } from '../common/auth/scopes';
import { CreateTenantDto, CreateTokenDto } from '../gateway';

/** Exit codes: 0 done, 1 the command could not run (environment, database), 2 the invocation was wrong. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** A failure the CLI explains in one plain message, without a stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT_USAGE,
  ) {
    super(message);
  }
}

export type CliCommand =
  | { kind: 'help' }
  | { kind: 'tenant.create'; slug: string; name: string }
  | { kind: 'tenant.list' }
  | { kind: 'token.create'; tenant: string; name: string; scopes: Scope[]; expiresAt: Date | null }
  | { kind: 'token.list'; tenant: string }
  | { kind: 'token.revoke'; tenant: string; tokenId: string };

export const USAGE = `Usage: npm run cli -- <command> [options]   (or: node dist/cli/main.js <command> [options])

Commands:
  tenant create <slug> [--name <name>]       Create a tenant (slug: 2-63 lowercase letters, digits, dashes)
  tenant list                                List the tenants
  token create --tenant <slug-or-id> --scopes <s1,s2,...> [--name <name>] [--expires-at <iso-8601>]
                                             Issue an API token; its secret is printed alone on the last line
  token list --tenant <slug-or-id>           List a tenant's tokens (never their secrets)
  token revoke <tok_id> --tenant <slug-or-id>
                                             Revoke a token; it stops working at once
  help                                       Show this text

Scopes: ${SCOPES.join(', ')}

The CLI uses the server's configuration: DATABASE_URL when set, else the embedded database in DATA_DIR
(which only one process may open, so stop the server first, or issue tokens with POST /api/v1/tokens).`;

const SEE_HELP = 'Run `npm run cli -- help` to see the commands.';

interface Parsed {
  positionals: string[];
  options: Map<string, string>;
  help: boolean;
}

function tokenize(argv: string[]): Parsed {
  const parsed: Parsed = { positionals: [], options: new Map(), help: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      parsed.help = true;
    } else if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      let value: string | undefined = eq === -1 ? undefined : arg.slice(eq + 1);
      if (value === undefined) {
        const next = argv[i + 1];
        if (next === undefined || next.startsWith('--')) {
          throw new CliError(`--${name} needs a value.`);
        }
        value = next;
        i++;
      }
      if (parsed.options.has(name)) {
        throw new CliError(`--${name} is given more than once.`);
      }
      parsed.options.set(name, value);
    } else {
      parsed.positionals.push(arg);
    }
  }
  return parsed;
}

/** Checks the options and positional arguments a command takes, and returns the options as a record. */
function expect(
  parsed: Parsed,
  command: string,
  positionals: string[],
  allowed: string[],
  required: string[] = [],
): Record<string, string | undefined> {
  const given = parsed.positionals.slice(2);
  if (given.length < positionals.length) {
    throw new CliError(`'${command}' needs ${positionals.map((p) => `<${p}>`).join(' ')}.`);
  }
  if (given.length > positionals.length) {
    throw new CliError(`'${command}' does not take the argument "${given[positionals.length]}".`);
  }
  for (const name of parsed.options.keys()) {
    if (!allowed.includes(name)) {
      throw new CliError(`'${command}' has no option --${name}.`);
    }
  }
  for (const name of required) {
    if (!parsed.options.get(name)?.trim()) {
      throw new CliError(`'${command}' needs --${name}.`);
    }
  }
  return Object.fromEntries(parsed.options);
}

/**
 * Runs the API's own DTO validation, so the CLI accepts exactly what POST /tenants and /tokens accept, and answers
 * the values as the API would store them (trimmed).
 */
function validateDto<T extends object>(dto: new () => T, plain: object, optionOf: Record<string, string>): T {
  const instance = plainToInstance(dto, plain);
  const errors = validateSync(instance, { whitelist: true, forbidNonWhitelisted: true });
  const first = errors[0];
  if (!first) {
    return instance;
  }
  const message = Object.values(first.constraints ?? {})[0] ?? 'is not valid';
  throw new CliError(`Invalid ${optionOf[first.property] ?? first.property}: ${message}.`);
}

function parseScopes(raw: string): Scope[] {
  const scopes = [...new Set(raw.split(',').map((scope) => scope.trim()))].filter(Boolean);
  const unknown = scopes.filter((scope) => !isScope(scope));
  if (unknown.length > 0) {
    throw new CliError(
      `Unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.map((s) => `"${s}"`).join(', ')}. ` +
        `Valid scopes: ${SCOPES.join(', ')}.`,
    );
  }
  if (scopes.length === 0) {
    throw new CliError('--scopes needs at least one scope.');
  }
  return scopes as Scope[];
}

function tenantCreate(parsed: Parsed): CliCommand {
  const options = expect(parsed, 'tenant create', ['slug'], ['name']);
  const slug = parsed.positionals[2];
  const valid = validateDto(
    CreateTenantDto,
    { slug, name: options.name ?? slug },
    { slug: 'slug', name: '--name' },
  );
  return { kind: 'tenant.create', slug: valid.slug, name: valid.name };
}

function tokenCreate(parsed: Parsed, now: Date): CliCommand {
  const options = expect(
    parsed,
    'token create',
    [],
    ['tenant', 'scopes', 'name', 'expires-at'],
    ['tenant', 'scopes'],
  );
  const scopes = parseScopes(options.scopes ?? '');
  const tenant = options.tenant!.trim();
  const { name } = validateDto(
    CreateTokenDto,
    { tenant, name: options.name ?? 'issued by the CLI', scopes, expires_at: options['expires-at'] },
    { tenant: '--tenant', name: '--name', scopes: '--scopes', expires_at: '--expires-at' },
  );
  const expiresAt = options['expires-at'] ? new Date(options['expires-at']) : null;
  if (expiresAt && expiresAt.getTime() <= now.getTime()) {
    throw new CliError('Invalid --expires-at: it must be in the future.');
  }
  return { kind: 'token.create', tenant, name, scopes, expiresAt };
}

function tokenRevoke(parsed: Parsed): CliCommand {
  const options = expect(parsed, 'token revoke', ['tok_id'], ['tenant'], ['tenant']);
  const tokenId = parsed.positionals[2];
  if (!isId('tok', tokenId)) {
    throw new CliError(`"${tokenId}" is not a token id (tok_...).`);
  }
  return { kind: 'token.revoke', tenant: options.tenant!.trim(), tokenId };
}

/**
 * Turns the command line into a command, or throws a CliError saying what is wrong with it; `now` (the CLI's Clock)
 * is what --expires-at must come after.
 */
export function parseCommand(argv: string[], now: Date): CliCommand {
  const parsed = tokenize(argv);
  const [noun, verb] = parsed.positionals;
  if (parsed.help || noun === 'help') {
    return { kind: 'help' };
  }
  if (noun === undefined) {
    throw new CliError(`No command given. ${SEE_HELP}`);
  }
  const command = `${noun} ${verb ?? ''}`.trim();
  switch (command) {
    case 'tenant create':
      return tenantCreate(parsed);
    case 'tenant list':
      expect(parsed, command, [], []);
      return { kind: 'tenant.list' };
    case 'token create':
      return tokenCreate(parsed, now);
    case 'token list':
      return {
        kind: 'token.list',
        tenant: expect(parsed, command, [], ['tenant'], ['tenant']).tenant!.trim(),
      };
    case 'token revoke':
      return tokenRevoke(parsed);
    default:
      throw new CliError(`Unknown command '${command}'. ${SEE_HELP}`);
  }
}
