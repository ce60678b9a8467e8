import { execFileSync } from 'node:child_process';
import dns from 'node:dns';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net, { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser, type AddressObject, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerOptions, type SMTPServerSession } from 'smtp-server';
import { MailSender, MAX_RESPONSE_LENGTH, type MailContent } from './mail-sender';
import type { SmtpSettings } from '../../config/smtp-settings';

/** What one in-process SMTP server received: each message parsed, with its raw text and its session. */
interface Received {
  parsed: ParsedMail;
  raw: string;
  envelopeTo: string[];
  secure: boolean;
  /** The name the client asked for with SNI, if any. */
  servername: string | false | null | undefined;
  user: unknown;
}

interface TestServer {
  port: number;
  received: Received[];
  connections: number;
  closed: number;
  stop(): Promise<void>;
}

function smtpError(code: number, text: string): Error {
  return Object.assign(new Error(text), { responseCode: code });
}

/** A real smtp-server on a loopback port; plain text and no AUTH unless `options` says otherwise. */
async function startServer(options: Partial<SMTPServerOptions> = {}): Promise<TestServer> {
  const state: TestServer = {
    port: 0,
    received: [],
    connections: 0,
    closed: 0,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    closeTimeout: 500,
    logger: false,
    onConnect(_session, callback) {
      state.connections += 1;
      callback();
    },
    onClose() {
      state.closed += 1;
    },
    onData(stream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            state.received.push({
              parsed,
              raw: raw.toString('utf8'),
              envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
              secure: session.secure,
              servername: session.servername,
              user: session.user,
            });
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
    ...options,
  });
  // A client that gives up on the TLS handshake (a certificate it refuses) is reported as an error: not a failure here.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.server.address() as AddressInfo).port;
  return state;
}

function settingsFor(port: number, extra: Partial<SmtpSettings> = {}): SmtpSettings {
  return { host: '127.0.0.1', port, tls: 'none', from: 'Example ISP <billing@isp.example.com>', ...extra };
}

const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');

const mail = (extra: Partial<MailContent> = {}): MailContent => ({
  to: { name: 'Ada Lovelace', address: 'ada@example.com' },
  subject: 'Your invoice INV-0001',
  text: 'Hello Ada,\nyour invoice is attached.',
  ...extra,
});

const firstAddress = (header: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(header) ? header[0] : header)?.value[0];

type LookupCallback = (error: Error | null, address: string | dns.LookupAddress[], family?: number) => void;

/** Makes `dns.lookup` (what a connection resolves with) answer `answers[host]` for the names given. */
function fakeDns(answers: Record<string, string[]>): jest.SpyInstance {
  const real = dns.lookup.bind(dns) as (host: string, options: dns.LookupOptions, cb: LookupCallback) => void;
  return jest.spyOn(dns, 'lookup').mockImplementation(((
    hostname: string,
    options: dns.LookupOptions,
    callback: LookupCallback,
  ) => {
    const answer = answers[hostname];
    if (answer === undefined) {
      return real(hostname, options, callback);
    }
    const list = answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
    process.nextTick(() =>
      options.all ? callback(null, list) : callback(null, list[0].address, list[0].family),
    );
  }) as unknown as typeof dns.lookup);
}

/** The header lines of a raw message, unfolded: what a receiving server would read as headers. */
function headerNames(raw: string): string[] {
  const head = raw.split(/\r?\n\r?\n/)[0];
  return head
    .split(/\r?\n(?![ \t])/)
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase())
    .sort();
}

describe('MailSender', () => {
  let sender: MailSender;
  const servers: TestServer[] = [];
  const started = async (options: Partial<SMTPServerOptions> = {}) => {
    const server = await startServer(options);
    servers.push(server);
    return server;
  };

  beforeEach(() => {
    sender = new MailSender({
      connectionTimeoutMs: 15_000,
      greetingTimeoutMs: 15_000,
      socketTimeoutMs: 30_000,
    });
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    sender.close();
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  it('should deliver text, HTML and a PDF with From, To, Reply-To, Subject and Message-ID', async () => {
    const server = await started();
    const outcome = await sender.send(
      settingsFor(server.port, { reply_to: 'support@isp.example.com' }),
      mail({
        to: { name: 'Zoë Ångström', address: 'zoe@example.com' },
        html: '<p>Hello <b>Zoë</b></p>',
        attachments: [{ filename: 'INV-0001.pdf', content: PDF, contentType: 'application/pdf' }],
        message_id: '<notification-1@isp.example.com>',
        date: new Date('2026-03-01T12:00:00Z'),
      }),
    );

    expect(outcome).toEqual({
      status: 'sent',
      response: expect.stringMatching(/^250 /),
      messageId: '<notification-1@isp.example.com>',
    });
    expect(server.received).toHaveLength(1);
    const [{ parsed, raw, envelopeTo }] = server.received;
    expect(envelopeTo).toEqual(['zoe@example.com']);
    expect(firstAddress(parsed.from)).toEqual({ name: 'Example ISP', address: 'billing@isp.example.com' });
    expect(firstAddress(parsed.to)).toEqual({ name: 'Zoë Ångström', address: 'zoe@example.com' });
    expect(raw).toMatch(/^To: =\?UTF-8\?[BQ]\?/im);
    expect(firstAddress(parsed.replyTo)).toEqual({ name: '', address: 'support@isp.example.com' });
    expect(parsed.subject).toBe('Your invoice INV-0001');
    expect(parsed.messageId).toBe('<notification-1@isp.example.com>');
    expect(parsed.date?.toISOString()).toBe('2026-03-01T12:00:00.000Z');
    expect(parsed.text?.trim()).toBe('Hello Ada,\nyour invoice is attached.');
    expect(parsed.html).toBe('<p>Hello <b>Zoë</b></p>');
    expect(parsed.attachments).toHaveLength(1);
    expect(parsed.attachments[0]).toMatchObject({ filename: 'INV-0001.pdf', contentType: 'application/pdf' });
    expect(parsed.attachments[0].content.equals(PDF)).toBe(true);
    expect(raw).not.toMatch(/^X-Mailer:/im);
  });

  it('should keep CR/LF and "Bcc:" in a name or the subject out of the headers', async () => {
    const server = await started();
    const outcome = await sender.send(
      settingsFor(server.port, { from: '"Billing\r\nBcc: from@evil.example" <billing@isp.example.com>' }),
      mail({ to: { name: 'Eve\r\nBcc: x@evil.example', address: 'eve@example.com' } }),
    );
    // The From text with a line break is the tenant's setting: refused, not repaired.
    expect(outcome).toEqual({
      status: 'refused',
      refusal: { refused: true, field: 'from', reason: 'from contains a line break' },
    });

    const sent = await sender.send(
      settingsFor(server.port),
      mail({
        from: { name: 'Billing\nBcc: from@evil.example', address: 'billing@isp.example.com' },
        to: { name: 'Eve\r\nBcc: x@evil.example\r\n\r\nbody', address: 'eve@example.com' },
        subject: 'Hi\r\nBcc: y@evil.example',
      }),
    );

    expect(sent.status).toBe('sent');
    const [{ parsed, raw, envelopeTo }] = server.received;
    expect(envelopeTo).toEqual(['eve@example.com']);
    expect(parsed.headers.has('bcc')).toBe(false);
    expect(parsed.bcc).toBeUndefined();
    expect(headerNames(raw)).toEqual(
      [
        'content-transfer-encoding',
        'content-type',
        'date',
        'from',
        'message-id',
        'mime-version',
        'subject',
        'to',
      ].sort(),
    );
    expect(firstAddress(parsed.to)).toEqual({
      name: 'Eve Bcc: x@evil.example body',
      address: 'eve@example.com',
    });
    expect(firstAddress(parsed.from)).toEqual({
      name: 'Billing Bcc: from@evil.example',
      address: 'billing@isp.example.com',
    });
    expect(parsed.subject).toBe('Hi Bcc: y@evil.example');
  });

  it('should refuse an address with a newline before connecting', async () => {
    const server = await started();
    const outcome = await sender.send(
      settingsFor(server.port),
      mail({ to: { name: 'Eve', address: 'eve@example.com\r\nRCPT TO:<x@evil.example>' } }),
    );

    expect(outcome).toEqual({
      status: 'refused',
      refusal: { refused: true, field: 'to', reason: 'to contains a line break' },
    });
    expect(server.connections).toBe(0);
  });

  it('should log in with the user and password, and answer permanent 535 for a wrong password', async () => {
    const password = 'correct horse battery staple';
    const server = await started({
      disabledCommands: ['STARTTLS'],
      authOptional: false,
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'billing' && auth.password === password) {
          return callback(null, { user: auth.username });
        }
        return callback(smtpError(535, 'Authentication credentials invalid'));
      },
    });

    const sent = await sender.send(settingsFor(server.port, { user: 'billing', password }), mail());
    const wrongPassword = 'not the password at all';
    const refused = await sender.send(
      settingsFor(server.port, { user: 'billing', password: wrongPassword }),
      mail(),
    );

    expect(sent.status).toBe('sent');
    expect(server.received.map((message) => message.user)).toEqual(['billing']);
    expect(refused).toEqual({ status: 'permanent', response: expect.stringMatching(/^535 /), code: 535 });
    const everything = JSON.stringify([sent, refused]);
    expect(everything).not.toContain(wrongPassword);
    expect(everything).not.toContain(Buffer.from(wrongPassword).toString('base64'));
  });

  it('should answer temporary 451 when DATA is deferred, then sent on the next try', async () => {
    let attempts = 0;
    const deferring = await started({
      onData(stream, _session, callback) {
        attempts += 1;
        stream.resume();
        stream.on('end', () =>
          attempts === 1 ? callback(smtpError(451, 'Greylisted, try again later')) : callback(),
        );
      },
    });

    const first = await sender.send(settingsFor(deferring.port), mail());
    const second = await sender.send(settingsFor(deferring.port), mail());

    expect(first).toEqual({ status: 'temporary', response: '451 Greylisted, try again later', code: 451 });
    expect(second).toMatchObject({ status: 'sent', response: expect.stringMatching(/^250 /) });
    expect(attempts).toBe(2);
  });

  it('should answer temporary 451 (and 503) on RCPT and permanent 550 for a refused recipient', async () => {
    const server = await started({
      onRcptTo(address, _session, callback) {
        if (address.address === 'later@example.com') {
          return callback(smtpError(451, 'Mailbox busy'));
        }
        if (address.address === 'nobody@example.com') {
          return callback(smtpError(550, 'No such user here'));
        }
        if (address.address === 'confused@example.com') {
          return callback(smtpError(503, 'Bad sequence of commands'));
        }
        return callback();
      },
    });

    const later = await sender.send(settingsFor(server.port), mail({ to: { address: 'later@example.com' } }));
    const nobody = await sender.send(
      settingsFor(server.port),
      mail({ to: { address: 'nobody@example.com' } }),
    );
    const confused = await sender.send(
      settingsFor(server.port),
      mail({ to: { address: 'confused@example.com' } }),
    );
    const someone = await sender.send(settingsFor(server.port), mail());

    expect(later).toEqual({ status: 'temporary', response: '451 Mailbox busy', code: 451 });
    expect(nobody).toEqual({ status: 'permanent', response: '550 No such user here', code: 550 });
    // 503 says the session was confused, not that the message is refused: a new connection may take it.
    expect(confused).toEqual({ status: 'temporary', response: '503 Bad sequence of commands', code: 503 });
    expect(someone.status).toBe('sent');
    expect(server.received).toHaveLength(1);
  });

  it('should trim a long server answer', async () => {
    const server = await started({
      onRcptTo(_address, _session, callback) {
        callback(smtpError(550, `No ${'such user '.repeat(200)}`));
      },
    });

    const outcome = await sender.send(settingsFor(server.port), mail());

    expect(outcome).toMatchObject({ status: 'permanent', code: 550 });
    expect((outcome as { response: string }).response).toHaveLength(MAX_RESPONSE_LENGTH);
  });

  describe('without a server to answer', () => {
    let silent: Server;
    const sockets: Socket[] = [];

    afterEach(async () => {
      sockets.splice(0).forEach((socket) => socket.destroy());
      await new Promise<void>((resolve) => (silent?.listening ? silent.close(() => resolve()) : resolve()));
    });

    const listen = async (onSocket: (socket: Socket) => void) => {
      silent = createServer((socket) => {
        sockets.push(socket);
        onSocket(socket);
      });
      await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
      return (silent.address() as AddressInfo).port;
    };

    it('should answer temporary when the server never greets', async () => {
      const port = await listen(() => undefined);
      const quick = new MailSender({ greetingTimeoutMs: 200 });

      const outcome = await quick.send(settingsFor(port), mail());
      quick.close();

      expect(outcome).toEqual({
        status: 'temporary',
        response: expect.stringMatching(/ETIMEDOUT/),
        code: null,
      });
    });

    it('should answer temporary when a message takes longer than the send timeout', async () => {
      const port = await listen((socket) => {
        socket.write('220 slow.example ESMTP\r\n');
        socket.on('data', () => socket.write('250-slow.example\r\n'));
      });
      const quick = new MailSender({ sendTimeoutMs: 300 });

      const outcome = await quick.send(settingsFor(port), mail());
      quick.close();

      expect(outcome).toEqual({
        status: 'temporary',
        response: 'EABORT: Message sending aborted',
        code: null,
      });
    });

    it('should answer temporary when the port is closed', async () => {
      const port = await listen(() => undefined);
      await new Promise<void>((resolve) => silent.close(() => resolve()));

      const outcome = await sender.send(settingsFor(port), mail());

      expect(outcome).toEqual({
        status: 'temporary',
        response: expect.stringMatching(/ECONNREFUSED/),
        code: null,
      });
    });

    it('should answer temporary when the host does not resolve', async () => {
      const outcome = await sender.send({ ...settingsFor(25), host: 'no-such-host.invalid' }, mail());

      expect(outcome).toMatchObject({ status: 'temporary', code: null });
    });
  });

  describe('pools', () => {
    it('should keep one connection for several messages to one server', async () => {
      const server = await started();

      const outcomes = await Promise.all([1, 2, 3].map(() => sender.send(settingsFor(server.port), mail())));

      expect(outcomes.map((outcome) => outcome.status)).toEqual(['sent', 'sent', 'sent']);
      expect(server.connections).toBeLessThanOrEqual(2);
      expect(server.received).toHaveLength(3);
    });

    it('should close the least recently used pool past maxTransports', async () => {
      const first = await started();
      const second = await started();
      const small = new MailSender({ maxTransports: 1 });

      await small.send(settingsFor(first.port), mail());
      expect(first.closed).toBe(0);
      await small.send(settingsFor(second.port), mail());
      await waitFor(() => first.closed === 1);
      small.close();

      expect(first.received).toHaveLength(1);
      expect(second.received).toHaveLength(1);
    });

    it('should answer temporary once closed, and close its connections', async () => {
      const server = await started();
      await sender.send(settingsFor(server.port), mail());

      sender.close();
      const outcome = await sender.send(settingsFor(server.port), mail());

      expect(outcome).toEqual({ status: 'temporary', response: 'the mail sender is shut down', code: null });
      await waitFor(() => server.closed === 1);
    });
  });

  describe('addresses', () => {
    const GUARDED = { allowPrivate: false };
    const PUBLIC_ADDRESS = '93.184.216.34';

    it('should refuse a name that resolves to 127.0.0.1 when connecting, and not connect', async () => {
      const server = await started();
      const lookup = fakeDns({ 'rebind.test': ['127.0.0.1'] });
      const password = 'tenant smtp password';

      const outcome = await sender.send(
        settingsFor(server.port, { host: 'rebind.test', user: 'billing', password }),
        mail(),
        GUARDED,
      );

      // A name may resolve elsewhere later: tried again, and checked again, on the notification's next attempt.
      expect(outcome).toEqual({
        status: 'temporary',
        response:
          'EPRIVATEADDRESS: rebind.test resolves to 127.0.0.1, a private or reserved address: not connecting to it',
        code: null,
      });
      expect(JSON.stringify(outcome)).not.toContain(password);
      expect(lookup).toHaveBeenCalledWith(
        'rebind.test',
        expect.objectContaining({ all: true }),
        expect.any(Function),
      );
      expect(server.connections).toBe(0);
    });

    it('should refuse a name when any one of its addresses is private', async () => {
      fakeDns({ 'mixed.test': [PUBLIC_ADDRESS, '10.1.2.3'] });
      const connect = jest.spyOn(net, 'connect');

      const outcome = await sender.send({ ...settingsFor(25), host: 'mixed.test' }, mail(), GUARDED);

      expect(outcome).toMatchObject({
        status: 'temporary',
        response: expect.stringContaining('10.1.2.3, a private'),
      });
      expect(connect).not.toHaveBeenCalled();
    });

    it('should refuse a private IP address for good', async () => {
      const server = await started();

      const outcome = await sender.send(settingsFor(server.port), mail(), GUARDED);

      expect(outcome).toEqual({
        status: 'permanent',
        response: 'EPRIVATEADDRESS: 127.0.0.1 is a private or reserved address: not connecting to it',
        code: null,
      });
      expect(server.connections).toBe(0);
    });

    it('should send to a name that resolves to 127.0.0.1 when private addresses are allowed', async () => {
      const server = await started();
      const lookup = fakeDns({ 'relay.test': ['127.0.0.1'] });

      const outcome = await sender.send(settingsFor(server.port, { host: 'relay.test' }), mail(), {
        allowPrivate: true,
      });

      expect(outcome.status).toBe('sent');
      expect(server.received).toHaveLength(1);
      expect(lookup).toHaveBeenCalledWith(
        'relay.test',
        expect.objectContaining({ all: true }),
        expect.any(Function),
      );
    });

    it('should not let an allowing pool serve a send that refuses private addresses', async () => {
      const server = await started();
      fakeDns({ 'relay.test': ['127.0.0.1'] });
      const settings = settingsFor(server.port, { host: 'relay.test' });

      const allowed = await sender.send(settings, mail());
      const guarded = await sender.send(settings, mail(), GUARDED);

      expect(allowed.status).toBe('sent');
      expect(guarded).toMatchObject({ status: 'temporary', response: expect.stringContaining('127.0.0.1') });
      expect(server.received).toHaveLength(1);
    });

    it('should connect to the very address the name resolved to, looking it up once', async () => {
      const lookup = fakeDns({ 'public.test': [PUBLIC_ADDRESS] });
      // No real connection leaves the machine: the attempt meets a closed local port.
      const closedPort = await freePort();
      const realConnect = net.connect.bind(net) as (options: net.NetConnectOpts) => Socket;
      const connect = jest
        .spyOn(net, 'connect')
        .mockImplementation(((options: net.NetConnectOpts) =>
          realConnect({ ...options, host: '127.0.0.1', port: closedPort })) as typeof net.connect);

      const outcome = await sender.send({ ...settingsFor(25), host: 'public.test' }, mail(), GUARDED);

      expect(outcome).toMatchObject({ status: 'temporary', response: expect.stringMatching(/ECONNREFUSED/) });
      expect(connect).toHaveBeenCalledTimes(1);
      expect(connect).toHaveBeenCalledWith(expect.objectContaining({ host: PUBLIC_ADDRESS, port: 25 }));
      expect(lookup.mock.calls.filter(([host]) => host === 'public.test')).toEqual([
        ['public.test', expect.objectContaining({ all: true }), expect.any(Function)],
      ]);
    });

    it('should try each address the name resolved to in turn, without looking it up again', async () => {
      const server = await started();
      // 127.0.0.2 is loopback too, with nothing listening on the port: the connection moves on to 127.0.0.1.
      const lookup = fakeDns({ 'two.test': ['127.0.0.2', '127.0.0.1'] });

      const outcome = await sender.send(settingsFor(server.port, { host: 'two.test' }), mail());

      expect(outcome.status).toBe('sent');
      expect(server.connections).toBe(1);
      expect(lookup.mock.calls.filter(([host]) => host === 'two.test')).toHaveLength(1);
    });
  });

  describe('over TLS', () => {
    let dir: string;
    let key: Buffer;
    let cert: Buffer;

    beforeAll(() => {
      // A throwaway self-signed certificate for 127.0.0.1, made with the openssl command line tool.
      dir = mkdtempSync(join(tmpdir(), 'smtp-tls-'));
      execFileSync(
        'openssl',
        [
          ...[
            'req',
            '-x509',
            '-newkey',
            'ec',
            '-pkeyopt',
            'ec_paramgen_curve:prime256v1',
            '-nodes',
            '-days',
            '1',
          ],
          ...['-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
          ...['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
        ],
        { stdio: 'ignore' },
      );
      key = readFileSync(join(dir, 'key.pem'));
      cert = readFileSync(join(dir, 'cert.pem'));
    });

    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('should upgrade with STARTTLS, trusting the given CA', async () => {
      const server = await started({ disabledCommands: ['AUTH'], key, cert });
      const trusting = new MailSender({ ca: cert });

      const outcome = await trusting.send(settingsFor(server.port, { tls: 'starttls' }), mail());
      trusting.close();

      expect(outcome.status).toBe('sent');
      expect(server.received.map((message) => message.secure)).toEqual([true]);
    });

    it('should speak TLS from the first byte in tls mode', async () => {
      const server = await started({ secure: true, disabledCommands: ['AUTH'], key, cert });
      const trusting = new MailSender({ ca: cert });

      const outcome = await trusting.send(settingsFor(server.port, { tls: 'tls' }), mail());
      trusting.close();

      expect(outcome.status).toBe('sent');
      expect(server.received.map((message) => message.secure)).toEqual([true]);
    });

    it('should verify the certificate against the host name in tls mode, not the address it connected to', async () => {
      const server = await started({ secure: true, disabledCommands: ['AUTH'], key, cert });
      fakeDns({ localhost: ['127.0.0.1'], 'other.test': ['127.0.0.1'] });
      const trusting = new MailSender({ ca: cert });

      const named = await trusting.send(settingsFor(server.port, { host: 'localhost', tls: 'tls' }), mail());
      // The certificate names 127.0.0.1, where other.test leads, but not other.test.
      const misnamed = await trusting.send(
        settingsFor(server.port, { host: 'other.test', tls: 'tls' }),
        mail(),
      );
      trusting.close();

      expect(named.status).toBe('sent');
      expect(server.received.map((message) => [message.secure, message.servername])).toEqual([
        [true, 'localhost'],
      ]);
      expect(misnamed).toMatchObject({
        status: 'temporary',
        response: expect.stringMatching(/does not match certificate's altnames: Host: other\.test/),
      });
    });

    it('should verify the certificate against the host name after STARTTLS', async () => {
      const server = await started({ disabledCommands: ['AUTH'], key, cert });
      fakeDns({ localhost: ['127.0.0.1'], 'other.test': ['127.0.0.1'] });
      const trusting = new MailSender({ ca: cert });

      const named = await trusting.send(
        settingsFor(server.port, { host: 'localhost', tls: 'starttls' }),
        mail(),
      );
      const misnamed = await trusting.send(
        settingsFor(server.port, { host: 'other.test', tls: 'starttls' }),
        mail(),
      );
      trusting.close();

      expect(named.status).toBe('sent');
      expect(server.received.map((message) => [message.secure, message.servername])).toEqual([
        [true, 'localhost'],
      ]);
      expect(misnamed).toMatchObject({
        status: 'temporary',
        response: expect.stringMatching(/does not match certificate's altnames: Host: other\.test/),
      });
    });

    it('should answer temporary for a certificate it does not trust, and send nothing', async () => {
      const server = await started({ disabledCommands: ['AUTH'], key, cert });

      const outcome = await sender.send(settingsFor(server.port, { tls: 'starttls' }), mail());

      expect(outcome).toMatchObject({ status: 'temporary', code: null });
      expect(server.received).toHaveLength(0);
    });

    it('should not upgrade in none mode even when STARTTLS is offered', async () => {
      const server = await started({ disabledCommands: ['AUTH'], key, cert });

      const outcome = await sender.send(settingsFor(server.port, { tls: 'none' }), mail());

      expect(outcome.status).toBe('sent');
      expect(server.received.map((message) => message.secure)).toEqual([false]);
    });

    it('should not fall back to clear text in starttls mode when the server has no STARTTLS', async () => {
      const server = await started();

      const outcome = await sender.send(settingsFor(server.port, { tls: 'starttls' }), mail());

      // nodemailer asks for STARTTLS all the same; the server's 500 to it is final.
      expect(outcome).toEqual({
        status: 'permanent',
        response: '500 Error: command not recognized',
        code: 500,
      });
      expect(server.received).toHaveLength(0);
    });
  });
});

/** A loopback port nothing listens on. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) {
      throw new Error('condition not met in time');
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
