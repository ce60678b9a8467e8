import { CliError, parseCommand as parseAt } from './cli-args';

/** The command line read on a fixed day, so --expires-at in the past and in the future stay so. */
const NOW = new Date('2026-06-01T00:00:00.000Z');
const parseCommand = (argv: string[]) => parseAt(argv, NOW);

function usageError(argv: string[]): CliError {
  try {
    parseCommand(argv);
  } catch (error) {
    if (error instanceof CliError) {
      return error;
    }
    throw error;
  }
  throw new Error(`${argv.join(' ')} was accepted`);
}

describe('parseCommand', () => {
  it('should read token create with both option spellings', () => {
    expect(
      parseCommand([
        'token',
        'create',
        '--tenant=acme',
        '--scopes',
        'billing:read, subscribers:*,billing:read',
        '--expires-at',
        '2999-01-01T00:00:00.000Z',
      ]),
    ).toEqual({
      kind: 'token.create',
      tenant: 'acme',
      name: 'issued by the CLI',
      scopes: ['billing:read', 'subscribers:*'],
      expiresAt: new Date('2999-01-01T00:00:00.000Z'),
    });
  });

  it('should default a tenant name to its slug', () => {
    expect(parseCommand(['tenant', 'create', 'acme-fiber'])).toEqual({
      kind: 'tenant.create',
      slug: 'acme-fiber',
      name: 'acme-fiber',
    });
  });

  it('should answer help for help, --help and -h', () => {
    for (const argv of [['help'], ['token', 'create', '--help'], ['-h']]) {
      expect(parseCommand(argv)).toEqual({ kind: 'help' });
    }
  });

  it.each([
    [[], /no command given/i],
    [['tenant', 'delete', 'x'], /unknown command 'tenant delete'/i],
    [['tenant', 'create'], /needs <slug>/],
    [['tenant', 'create', 'Acme'], /invalid slug/i],
    [['tenant', 'create', 'acme', '--name', ''], /invalid --name/i],
    [['tenant', 'list', 'extra'], /does not take the argument "extra"/],
    [['token', 'create', '--scopes', 'admin'], /needs --tenant/],
    [['token', 'create', '--tenant', 'acme', '--scopes', 'admin,root'], /unknown scope "root"/i],
    [['token', 'create', '--tenant', 'acme', '--scopes', ','], /at least one scope/],
    [['token', 'create', '--tenant', 'acme', '--scopes', 'admin', '--expires-at', 'soon'], /--expires-at/],
    [
      ['token', 'create', '--tenant', 'acme', '--scopes', 'admin', '--expires-at', '2001-01-01T00:00:00Z'],
      /future/,
    ],
    [['token', 'create', '--tenant', 'acme', '--tenant', 'other', '--scopes', 'admin'], /more than once/],
    [['token', 'list', '--tenant'], /--tenant needs a value/],
    [['token', 'list', '--tenant', 'acme', '--all', 'yes'], /has no option --all/],
    [['token', 'revoke', 'abc', '--tenant', 'acme'], /not a token id/],
  ])('should refuse %j with exit code 2', (argv, message) => {
    const error = usageError(argv);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(message);
  });
});

describe('parseCommand and platform:admin', () => {
  it('should accept platform:admin, since the local operator may grant any scope', () => {
    expect(parseCommand(['token', 'create', '--tenant', 'acme', '--scopes', 'platform:admin'])).toMatchObject(
      {
        kind: 'token.create',
        scopes: ['platform:admin'],
      },
    );
  });
});
