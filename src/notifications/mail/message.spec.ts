import fc from 'fast-check';
import { simpleParser, type AddressObject } from 'mailparser';
import { createTransport } from 'nodemailer';
import { buildMessage, MAX_SUBJECT_LENGTH, type OutgoingMail } from './message';

const mail = (extra: Partial<OutgoingMail> = {}): OutgoingMail => ({
  to: { name: 'Ada Lovelace', address: 'ada@example.com' },
  from: 'Example ISP <billing@isp.example.com>',
  subject: 'Your invoice',
  text: 'Hello',
  ...extra,
});

/** The message as nodemailer writes it (no server): its raw text and what mailparser reads from it. */
async function render(input: OutgoingMail) {
  const built = buildMessage(input);
  if (built.refused) {
    throw new Error(`refused: ${built.reason}`);
  }
  const transport = createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail(built.message);
  if (!Buffer.isBuffer(info.message)) {
    throw new Error('expected the message as a Buffer');
  }
  return {
    raw: info.message.toString('utf8'),
    parsed: await simpleParser(info.message),
    envelope: info.envelope,
  };
}

const first = (header: AddressObject | AddressObject[] | undefined) =>
  (Array.isArray(header) ? header[0] : header)?.value;

/** Header names of a raw message, its folded lines joined: what a receiving server reads as headers. */
function headerNames(raw: string): string[] {
  return raw
    .split(/\r?\n\r?\n/)[0]
    .split(/\r?\n(?![ \t])/)
    .map((line) => line.slice(0, line.indexOf(':')).toLowerCase())
    .sort();
}

/** The headers of a message with a text part and no Reply-To, sorted. */
const HEADERS = [
  'content-transfer-encoding',
  'content-type',
  'date',
  'from',
  'message-id',
  'mime-version',
  'subject',
  'to',
];

describe('buildMessage', () => {
  describe('refuses', () => {
    it.each([
      ['a line feed', 'ada@example.com\nBcc: x@evil.example', 'to contains a line break'],
      ['a carriage return', 'ada@example.com\r', 'to contains a line break'],
      ['a list', 'ada@example.com, eve@example.com', 'to is not a single mailbox address'],
      ['a list without spaces', 'ada@example.com,eve@example.com', 'to is not a single mailbox address'],
      ['a name and an address', 'Ada <ada@example.com>', 'to is not a single mailbox address'],
      ['a group', 'undisclosed-recipients:;', 'to is not a single mailbox address'],
      ['a comment', 'ada@example.com(Ada)', 'to is not a single mailbox address'],
      ['two @', 'ada@eve@example.com', 'to is not a single mailbox address'],
      ['no domain', 'ada@', 'to is not a single mailbox address'],
      ['no dot in the domain', 'ada@localhost', 'to is not a single mailbox address'],
      ['a quoted local part', '"ada lovelace"@example.com', 'to is not a single mailbox address'],
      ['a NUL', 'ada\u0000@example.com', 'to is not a single mailbox address'],
      ['an empty address', '', 'to is empty'],
    ])('a recipient with %s, as a typed refusal', (_case, address, reason) => {
      expect(buildMessage(mail({ to: { name: 'Ada', address } }))).toEqual({
        refused: true,
        field: 'to',
        reason,
      });
    });

    it('a From or Reply-To that is not one mailbox', () => {
      expect(buildMessage(mail({ from: 'Billing\r\n <billing@isp.example.com>' }))).toEqual({
        refused: true,
        field: 'from',
        reason: 'from contains a line break',
      });
      expect(buildMessage(mail({ from: { address: 'billing@isp.example.com\n' } }))).toMatchObject({
        refused: true,
        field: 'from',
      });
      expect(buildMessage(mail({ reply_to: 'a@example.com, b@example.com' }))).toEqual({
        refused: true,
        field: 'reply_to',
        reason: 'reply_to is not a single mailbox address',
      });
    });

    it('a Message-ID or an attachment that would not fit its header', () => {
      expect(buildMessage(mail({ message_id: '<a@b>\r\nBcc: x@evil.example' }))).toMatchObject({
        refused: true,
        field: 'message_id',
      });
      expect(buildMessage(mail({ message_id: 'no-brackets@example.com' }))).toMatchObject({
        field: 'message_id',
      });
      const attachment = {
        filename: 'a.pdf',
        content: Buffer.from('x'),
        contentType: 'application/pdf\r\nX: y',
      };
      expect(buildMessage(mail({ attachments: [attachment] }))).toEqual({
        refused: true,
        field: 'attachments',
        reason: 'attachments[0] needs a Buffer content and a MIME type',
      });
    });
  });

  it('should accept an internationalised address and encode a non-ASCII name (RFC 2047)', async () => {
    const { raw, parsed } = await render(
      mail({ to: { name: 'Zoë Ångström', address: 'zoë@exämple.com' }, subject: 'Facture n° 1 — merci' }),
    );

    expect(raw).toMatch(/^To: =\?UTF-8\?[BQ]\?/im);
    expect(raw).toMatch(/^Subject: =\?UTF-8\?[BQ]\?/im);
    expect(first(parsed.to)).toEqual([{ name: 'Zoë Ångström', address: expect.stringMatching(/^zoë@/) }]);
    expect(parsed.subject).toBe('Facture n° 1 — merci');
  });

  it('should flatten names, the subject and file names to one line and cap the subject', async () => {
    const { parsed } = await render(
      mail({
        to: { name: '  Eve\r\n\r\nBcc: x@evil.example\t ', address: 'eve@example.com' },
        subject: `Hi\r\nBcc: y@evil.example ${'x'.repeat(2 * MAX_SUBJECT_LENGTH)}`,
        attachments: [
          {
            filename: 'a\r\nContent-Type: text/html.pdf',
            content: Buffer.from('x'),
            contentType: 'application/pdf',
          },
        ],
      }),
    );

    expect(first(parsed.to)).toEqual([{ name: 'Eve Bcc: x@evil.example', address: 'eve@example.com' }]);
    expect(parsed.subject).toHaveLength(MAX_SUBJECT_LENGTH);
    expect(parsed.subject).toMatch(/^Hi Bcc: y@evil\.example x+$/);
    expect(parsed.attachments[0]).toMatchObject({
      filename: 'a Content-Type: text/html.pdf',
      contentType: 'application/pdf',
    });
  });

  it('should take Reply-To and the sender from the configured text form', async () => {
    const { parsed } = await render(
      mail({ from: '"Example ISP, billing" <billing@isp.example.com>', reply_to: 'help@isp.example.com' }),
    );

    expect(first(parsed.from)).toEqual([
      { name: 'Example ISP, billing', address: 'billing@isp.example.com' },
    ]);
    expect(first(parsed.replyTo)).toEqual([{ name: '', address: 'help@isp.example.com' }]);
  });

  it('should never add a header or a recipient, whatever the names and the subject hold', async () => {
    const hostile = fc
      .array(
        fc.oneof(
          fc.constantFrom(
            '\r\n',
            '\n',
            '\r',
            '\r\n\r\n',
            'Bcc: x@evil.example',
            'To: y@evil.example',
            ':',
            ',',
            ';',
          ),
          fc.constantFrom(
            '"',
            '\\',
            '<',
            '>',
            '(',
            ')',
            '=?utf-8?q?=0D=0ABcc:_z@evil.example?=',
            '\u0000',
            '\u2028',
          ),
          fc.string({ unit: 'binary', maxLength: 20 }),
        ),
        { maxLength: 12 },
      )
      .map((parts) => parts.join(''));

    await fc.assert(
      fc.asyncProperty(hostile, hostile, hostile, async (toName, fromName, subject) => {
        const { raw, parsed, envelope } = await render(
          mail({
            to: { name: toName, address: 'ada@example.com' },
            from: { name: fromName, address: 'billing@isp.example.com' },
            subject,
          }),
        );
        const names = headerNames(raw);
        // Subject is left out when nothing of it is left; every other header is nodemailer's own, once each.
        expect(names.filter((name) => name !== 'subject')).toEqual(
          HEADERS.filter((name) => name !== 'subject'),
        );
        expect(names.filter((name) => name === 'subject').length).toBeLessThanOrEqual(1);
        expect(first(parsed.to)?.map((mailbox) => mailbox.address)).toEqual(['ada@example.com']);
        expect(first(parsed.from)?.map((mailbox) => mailbox.address)).toEqual(['billing@isp.example.com']);
        expect(envelope).toEqual({ from: 'billing@isp.example.com', to: ['ada@example.com'] });
      }),
      { numRuns: 100 },
    );
  });
});
