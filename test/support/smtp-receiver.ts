import type { AddressInfo, Socket } from 'node:net';
import { simpleParser, type ParsedMail } from 'mailparser';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import { waitFor } from './wait-for';

/** One message the receiver accepted (answered 250 to its DATA), parsed, with its raw text and envelope. */
export interface ReceivedMail {
  parsed: ParsedMail;
  raw: string;
  envelopeTo: string[];
  messageId: string | undefined;
  /** The client's port: which of its connections sent it (two processes on one machine differ by it). */
  clientPort: number;
}

/**
 * One DATA the server was sent, accepted or not, as soon as its last line came in (before any `holdMs`): its
 * recipients, its Message-ID header, the client's port, and whether it was accepted in the end.
 */
export interface DataSeen {
  to: string[];
  messageId: string | undefined;
  clientPort: number;
  accepted: boolean;
}

/** The Message-ID header of a raw message (nodemailer writes it on one line), read before it is parsed. */
function rawMessageId(raw: Buffer): string | undefined {
  const text = raw.toString('utf8');
  const end = text.search(/\r?\n\r?\n/);
  return /^Message-ID:[ \t]*(<[^>\r\n]+>)/im.exec(end < 0 ? text : text.slice(0, end))?.[1];
}

/** What the receiver answers a message's DATA: accept it, or refuse it with this reply. */
export type SmtpAnswer = { code: number; text: string } | 'accept';

/**
 * A real SMTP server (the nodemailer project's smtp-server) on a loopback port, for the suites that send mail:
 * plain text, no AUTH. It keeps every accepted message, parsed with mailparser. `answer` decides per message (a test
 * makes it answer 451 once, or 550 for one recipient); `holdMs` holds the reply to DATA that long, and a message
 * whose client went away meanwhile is not accepted (as a real server would drop it).
 */
export class SmtpReceiver {
  readonly received: ReceivedMail[] = [];
  /** Every DATA the server was sent, accepted or not, in order: its recipients. */
  readonly attempts: string[][] = [];
  /** The same DATAs, with their Message-ID, connection and fate (see DataSeen). */
  readonly data: DataSeen[] = [];
  answer: (to: string[], attempt: number) => SmtpAnswer = () => 'accept';
  holdMs = 0;
  /** While set, every reply to a DATA waits for it (see hold). */
  private gate: Promise<void> | null = null;
  /** Every AUTH the server was asked for (only with `login` given to start), and whether it was granted. */
  readonly logins: { username: string; password: string; granted: boolean }[] = [];

  private constructor(
    private readonly server: SMTPServer,
    readonly port: number,
  ) {}

  /**
   * With `login`, the server offers AUTH PLAIN and LOGIN on its plain connection and requires that user and password
   * (a wrong login is answered 535); without, it offers no AUTH and takes mail from anyone.
   */
  static async start(login?: { user: string; password: string }): Promise<SmtpReceiver> {
    let receiver: SmtpReceiver | null = null;
    const server = new SMTPServer({
      secure: false,
      authOptional: login === undefined,
      allowInsecureAuth: true,
      authMethods: ['PLAIN', 'LOGIN'],
      disabledCommands: login === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
      closeTimeout: 500,
      logger: false,
      onAuth(auth, _session, callback) {
        const username = auth.username ?? '';
        const password = auth.password ?? '';
        const granted = login !== undefined && username === login.user && password === login.password;
        receiver?.logins.push({ username, password, granted });
        if (!granted) {
          callback(Object.assign(new Error('Authentication credentials invalid'), { responseCode: 535 }));
          return;
        }
        callback(null, { user: username });
      },
      onData(stream, session: SMTPServerSession, callback) {
        void receiver?.take(stream, session, callback);
      },
    });
    // A client killed in the middle of a message resets its connection: smtp-server reports that as an 'error',
    // which would end the test process without a listener. The message is simply not accepted (see take).
    server.on('error', () => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver = new SmtpReceiver(server, (server.server.address() as AddressInfo).port);
    return receiver;
  }

  /** SMTP_URL of this server, for an app's environment (with MAIL_FROM and MAIL_ALLOW_PRIVATE). */
  get env(): Record<string, string> {
    return {
      SMTP_URL: `smtp://127.0.0.1:${this.port}?tls=none`,
      MAIL_FROM: 'Example ISP <billing@isp.example>',
    };
  }

  /** Holds every reply to a DATA from now until `release` (a server that takes its time, for as long as a test needs). */
  hold(): { release: () => void } {
    let release = () => {};
    this.gate = new Promise<void>((resolve) => {
      release = () => {
        this.gate = null;
        resolve();
      };
    });
    return { release };
  }

  /** How many times a message for `address` was offered (its DATA), accepted or not. */
  attemptsFor(address: string): number {
    return this.attempts.filter((to) => to.includes(address.toLowerCase())).length;
  }

  /** The messages accepted for `address`. */
  to(address: string): ReceivedMail[] {
    return this.received.filter((mail) => mail.envelopeTo.includes(address.toLowerCase()));
  }

  /** Waits until `count` messages were accepted for `address`; answers them. */
  async waitFor(address: string, count = 1, timeoutMs = 15_000): Promise<ReceivedMail[]> {
    return waitFor(
      () => {
        const mails = this.to(address);
        return mails.length >= count ? mails : null;
      },
      { timeout: timeoutMs, what: `${count} message(s) to ${address}` },
    );
  }

  close(): Promise<void> {
    return new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async take(
    stream: NodeJS.ReadableStream,
    session: SMTPServerSession,
    callback: (error?: Error | null) => void,
  ): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of stream) {
        chunks.push(Buffer.from(chunk as Buffer));
      }
    } catch {
      return; // the connection closed before the message's end: nothing to answer, nothing accepted
    }
    const to = session.envelope.rcptTo.map((rcpt) => rcpt.address.toLowerCase());
    this.attempts.push(to);
    const raw = Buffer.concat(chunks);
    const seen: DataSeen = {
      to,
      messageId: rawMessageId(raw),
      clientPort: session.remotePort,
      accepted: false,
    };
    this.data.push(seen);
    const answer = this.answer(to, this.attempts.filter((each) => each.join() === to.join()).length);
    if (this.holdMs > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.holdMs));
    }
    if (this.gate) {
      await this.gate;
    }
    if (answer !== 'accept') {
      callback(Object.assign(new Error(answer.text), { responseCode: answer.code }));
      return;
    }
    const parsed = await simpleParser(raw);
    if (!this.clientStillThere(session)) {
      return; // the client went away before the reply: the message was never accepted
    }
    this.received.push({
      parsed,
      raw: raw.toString('utf8'),
      envelopeTo: to,
      messageId: parsed.messageId,
      clientPort: session.remotePort,
    });
    seen.accepted = true;
    callback();
  }

  /**
   * Whether the connection of `session` is still open: smtp-server forgets a connection once its socket closes, and
   * reads a client's FIN or reset even while a reply to DATA is pending.
   */
  private clientStillThere(session: SMTPServerSession): boolean {
    const connections = this.server.connections as Set<{ session?: SMTPServerSession; _socket?: Socket }>;
    const socket = [...connections].find((connection) => connection.session === session)?._socket;
    return socket !== undefined && !socket.destroyed;
  }
}
