import { type ChildProcess, spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { radiusRequest } from './radius-client';

/** A running FreeRADIUS 3 on loopback, configured by startFreeRadius. */
export interface FreeRadius {
  /** Loopback (127.0.0.1) auth port; also answers Status-Server. */
  authPort: number;
  /** Loopback (127.0.0.1) accounting port. */
  acctPort: number;
  /** The temporary raddb folder (removed by stop). */
  dir: string;
  /** What the server printed so far, for failure messages. */
  log(): string;
  /** SIGTERM, wait for the exit (SIGKILL after 5 s), remove dir. */
  stop(): Promise<void>;
}

export interface FreeRadiusOptions {
  /** postgres://user[:password]@host[:port]/db: the sql module reads users, groups and NAS clients there and
   *  writes radacct. */
  databaseUrl: string;
  /** Secret of the one static client, 127.0.0.1 (clients.conf). */
  clientSecret: string;
  /** Without -x: no line per step of each request (the bench's accounting run, bench/accounting-run.ts). */
  quiet?: boolean;
}

/** The stock PostgreSQL queries of Debian's FreeRADIUS 3 package (users, groups, NAS clients, radacct). */
const STOCK_QUERIES = '/etc/freeradius/3.0/mods-config/sql/main/postgresql/queries.conf';
const LOOPBACK = '127.0.0.1';
const STARTUP_TIMEOUT_MS = 15_000;
const POLL_INTERVAL_MS = 100;
const KILL_AFTER_MS = 5_000;
/** Start attempts: a port picked free can be taken by someone else before FreeRADIUS binds it. */
const START_ATTEMPTS = 3;

/** The path of the freeradius binary (on PATH or in /usr/sbin, /usr/local/sbin), or null when it is not installed. */
export function freeRadiusBinary(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    if (dir && existsSync(join(dir, 'freeradius'))) {
      return join(dir, 'freeradius');
    }
  }
  return null;
}

/**
 * Starts FreeRADIUS in the foreground on a minimal raddb written to a fresh temporary folder: one static client
 * (127.0.0.1), the NAS clients of the `nas` table (read once, at start: insert them before), PAP against radcheck
 * through the sql module, radacct through the stock accounting queries. Resolves once a Status-Server to the auth
 * port is answered; rejects with the server's output when it exits first or does not answer within 15 s.
 */
export async function startFreeRadius(options: FreeRadiusOptions): Promise<FreeRadius> {
  const binary = freeRadiusBinary();
  if (!binary) {
    throw new Error(
      'startFreeRadius: freeradius is not installed (apt-get install freeradius freeradius-postgresql)',
    );
  }
  if (!existsSync(STOCK_QUERIES)) {
    throw new Error(`startFreeRadius: ${STOCK_QUERIES} is missing (apt-get install freeradius-postgresql)`);
  }
  for (let attempt = 1; ; attempt++) {
    const [authPort, acctPort] = await freeUdpPorts(2);
    const dir = await mkdtemp(join(tmpdir(), 'isp-freeradius-'));
    await writeRaddb(dir, { ...options, authPort, acctPort });
    try {
      return await run(binary, dir, authPort, acctPort, options.clientSecret, options.quiet ?? false);
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      if (!(error instanceof PortTakenError) || attempt === START_ATTEMPTS) {
        throw error;
      }
    }
  }
}

/** FreeRADIUS exited because one of its ports was taken between picking and binding. */
class PortTakenError extends Error {}

/** Spawns the server on a written raddb and waits until it answers Status-Server. */
async function run(
  binary: string,
  dir: string,
  authPort: number,
  acctPort: number,
  clientSecret: string,
  quiet: boolean,
): Promise<FreeRadius> {
  // -f: stay in the foreground; -l stdout: log there; -x: one line per step of each request (its attributes, the
  // sections run, why pap said no): what a failing test needs, at no measurable cost. -X would add the whole parsed
  // config and force a single thread.
  const child: ChildProcess = spawn(binary, ['-f', '-l', 'stdout', ...(quiet ? [] : ['-x']), '-d', dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer) => (output += chunk.toString());
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exitCode: number | string | null = null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exitCode = code ?? signal;
      resolve();
    });
    // A process that could not be spawned emits no 'exit'.
    child.once('error', (error) => {
      output += `\nspawn error: ${error.message}`;
      exitCode = 'not started';
      resolve();
    });
  });
  // If the test process dies without stop(), take the server down with it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.off('exit', killOnExit);
    if (exitCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    if (exitCode !== null) {
      process.off('exit', killOnExit);
      const ErrorType = /address already in use/i.test(output) ? PortTakenError : Error;
      throw new ErrorType(`FreeRADIUS exited (${String(exitCode)}) before it answered:\n${output}`);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`FreeRADIUS did not answer Status-Server within ${STARTUP_TIMEOUT_MS} ms:\n${output}`);
    }
    const polled = Date.now();
    const answered = await radiusRequest({
      server: { address: LOOPBACK, port: authPort },
      secret: clientSecret,
      code: 'Status-Server',
      attributes: [],
      timeoutMs: POLL_INTERVAL_MS,
      tries: 1,
    }).then(
      (reply) => reply.code === 'Access-Accept',
      () => false,
    );
    if (answered) {
      return { authPort, acctPort, dir, log: () => output, stop };
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, polled + POLL_INTERVAL_MS - Date.now())));
  }
}

/** `count` distinct UDP ports that were free on loopback a moment ago (bound to port 0 together, then closed). */
async function freeUdpPorts(count: number): Promise<number[]> {
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const socket = createSocket('udp4');
      sockets.push(socket);
      await new Promise<void>((resolve, reject) => {
        socket.once('error', reject);
        socket.bind(0, LOOPBACK, resolve);
      });
    }
    return sockets.map((socket) => socket.address().port);
  } finally {
    await Promise.all(sockets.map((socket) => new Promise<void>((resolve) => socket.close(() => resolve()))));
  }
}

/** A value for a double-quoted FreeRADIUS config string; refuses characters the config parser would interpret. */
function quoted(value: string, what: string): string {
  if (/["\\$\n\r]/.test(value)) {
    throw new Error(`startFreeRadius: ${what} must not contain ", \\, $ or a line break`);
  }
  return `"${value}"`;
}

/** Writes the minimal raddb: radiusd.conf, clients.conf, four modules and one virtual server. */
async function writeRaddb(
  dir: string,
  options: FreeRadiusOptions & { authPort: number; acctPort: number },
): Promise<void> {
  const url = new URL(options.databaseUrl);
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^postgres(ql)?:$/.test(url.protocol) || !database) {
    throw new Error(
      `startFreeRadius: databaseUrl must be postgres://user@host:port/db, not ${options.databaseUrl}`,
    );
  }
  await Promise.all(
    ['mods-enabled', 'sites-enabled', 'mods-config/preprocess', 'log', 'run'].map((sub) =>
      mkdir(join(dir, sub), { recursive: true }),
    ),
  );
  const files: Record<string, string> = {
    'radiusd.conf': radiusdConf(dir),
    'clients.conf': clientsConf(options.clientSecret),
    'mods-enabled/sql': sqlModule({
      server: url.hostname,
      port: url.port || '5432',
      login: decodeURIComponent(url.username) || 'postgres',
      password: decodeURIComponent(url.password),
      database,
    }),
    'mods-enabled/pap': 'pap {\n}\n',
    // %{tolower:…} (the accounting query's reference) and %{md5:…} (acct_unique) are expr's.
    'mods-enabled/expr': 'expr {\n}\n',
    'mods-enabled/preprocess': PREPROCESS_MODULE,
    // preprocess insists on both files; empty ones change nothing.
    'mods-config/preprocess/hints': '',
    'mods-config/preprocess/huntgroups': '',
    'sites-enabled/default': virtualServer(options.authPort, options.acctPort),
  };
  await Promise.all(Object.entries(files).map(([name, text]) => writeFile(join(dir, name), text)));
}

/**
 * The server's own settings. No user/group: it runs as whoever starts it. reject_delay 0 answers a reject at once
 * (the stock 1 s would make every reject outlast a NAS's first try). status_server = yes answers Status-Server on
 * the auth and acct ports. The acct_unique policy is the stock one (policy.d/accounting) without its Class branch:
 * the stock accounting queries key radacct on Acct-Unique-Session-Id.
 */
function radiusdConf(dir: string): string {
  return `prefix = /usr
raddbdir = ${dir}
confdir = \${raddbdir}
modconfdir = \${confdir}/mods-config
logdir = \${raddbdir}/log
run_dir = \${raddbdir}/run
libdir = /usr/lib/freeradius
name = freeradius
pidfile = \${run_dir}/\${name}.pid
proxy_requests = no

log {
	destination = stdout
	auth = yes
}

security {
	reject_delay = 0
	status_server = yes
}

thread pool {
	start_servers = 2
	max_servers = 4
	min_spare_servers = 1
	max_spare_servers = 2
	max_requests_per_server = 0
}

$INCLUDE clients.conf

modules {
	$INCLUDE mods-enabled/
}

policy {
	acct_unique {
		update request {
			&Acct-Unique-Session-Id := "%{md5:%{User-Name},%{Acct-Session-ID},%{%{NAS-IPv6-Address}:-%{NAS-IP-Address}},%{NAS-Identifier},%{NAS-Port-ID},%{NAS-Port}}"
		}
	}
}

$INCLUDE sites-enabled/
`;
}

/** The one static client; every other NAS comes from the sql module's `nas` table. */
function clientsConf(secret: string): string {
  return `client localhost {
	ipaddr = ${LOOPBACK}
	secret = ${quoted(secret, 'clientSecret')}
	shortname = localhost
}
`;
}

/** The sql module: PostgreSQL, the stock tables and queries, NAS clients from `nas`, a small pool. */
function sqlModule(db: {
  server: string;
  port: string;
  login: string;
  password: string;
  database: string;
}): string {
  return `sql {
	driver = "rlm_sql_postgresql"
	dialect = "postgresql"

	server = ${quoted(db.server, 'the database host')}
	port = ${db.port}
	login = ${quoted(db.login, 'the database user')}
	password = ${quoted(db.password, 'the database password')}
	radius_db = ${quoted(db.database, 'the database name')}

	acct_table1 = "radacct"
	acct_table2 = "radacct"
	postauth_table = "radpostauth"
	authcheck_table = "radcheck"
	groupcheck_table = "radgroupcheck"
	authreply_table = "radreply"
	groupreply_table = "radgroupreply"
	usergroup_table = "radusergroup"
	group_attribute = "SQL-Group"
	read_groups = yes

	# NAS clients (nasname = source address, secret, server) are read once, at start.
	read_clients = yes
	client_table = "nas"

	pool {
		start = 1
		min = 1
		max = 4
		spare = 2
		uses = 0
		lifetime = 0
		idle_timeout = 0
		retry_delay = 1
	}

	$INCLUDE ${STOCK_QUERIES}
}
`;
}

/** preprocess: adds NAS-IP-Address from the packet's source when a NAS leaves it out; hints/huntgroups are empty. */
const PREPROCESS_MODULE = `preprocess {
	huntgroups = \${modconfdir}/preprocess/huntgroups
	hints = \${modconfdir}/preprocess/hints
	with_ascend_hack = no
	with_ntdomain_hack = no
	with_specialix_jetstream_hack = no
	with_cisco_vsa_hack = no
}
`;

/**
 * The one virtual server, on 127.0.0.1 only: clients are matched by a packet's source address alone, so a NAS at
 * 127.0.0.2 sends to 127.0.0.1. With no `Autz-Type Status-Server` subsection, a Status-Server is answered
 * (Access-Accept, Accounting-Response) without running authorize.
 */
function virtualServer(authPort: number, acctPort: number): string {
  return `server default {
	listen {
		type = auth
		ipaddr = ${LOOPBACK}
		port = ${authPort}
	}
	listen {
		type = acct
		ipaddr = ${LOOPBACK}
		port = ${acctPort}
	}

	authorize {
		preprocess
		sql
		pap
	}

	authenticate {
		Auth-Type PAP {
			pap
		}
	}

	preacct {
		preprocess
		acct_unique
	}

	accounting {
		sql
	}

	post-auth {
	}
}
`;
}
