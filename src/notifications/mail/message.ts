import type { SendMailOptions } from 'nodemailer';
import {
  addressProblem,
  headerText,
  MAX_DISPLAY_NAME_LENGTH,
  parseMailbox,
  type MailAddress,
} from '../../config/mailbox';

export type { MailAddress } from '../../config/mailbox';

export interface MailAttachment {
  filename: string;
  content: Buffer;
  /** A MIME type: `application/pdf`. */
  contentType: string;
}

/** One message to one recipient, as the notifications build it. */
export interface OutgoingMail {
  to: MailAddress;
  /** A mailbox object, or the configured text form (`Example ISP <billing@example.com>`). */
  from: MailAddress | string;
  reply_to?: MailAddress | string | null;
  subject: string;
  text: string;
  html?: string | null;
  attachments?: MailAttachment[];
  /**
   * The Message-ID, `<local@domain>`: a notification keeps one across its attempts, so a message that went through
   * on an attempt reported as failed is recognisable as the same one. nodemailer makes one up when unset.
   */
  message_id?: string | null;
  /** The Date header, from the app's clock; nodemailer reads the wall clock when unset. */
  date?: Date | null;
}

export type MailField = 'to' | 'from' | 'reply_to' | 'message_id' | 'attachments';

/** Why a message cannot be sent as given: a field that would not be one mailbox, or would add to the headers. */
export interface MailRefusal {
  refused: true;
  field: MailField;
  reason: string;
}

export type BuiltMessage = { refused: false; message: SendMailOptions } | MailRefusal;

export const MAX_SUBJECT_LENGTH = 500;
const MESSAGE_ID = /^<[\x21-\x3b\x3d\x3f-\x7e]+@[\x21-\x3b\x3d\x3f-\x7e]+>$/;
const CONTENT_TYPE = /^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*\/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*$/;

function refusal(field: MailField, reason: string): MailRefusal {
  return { refused: true, field, reason };
}

/**
 * A mailbox for nodemailer, or the refusal: the address must be one plain address (no line break, no list, no
 * group), and the display name loses its control characters, so no value can start a header of its own.
 */
function mailbox(
  value: MailAddress | string,
  field: MailField,
): { name?: string; address: string } | MailRefusal {
  const parsed = typeof value === 'string' ? parseMailbox(value) : value;
  if ('problem' in parsed) {
    return refusal(field, `${field} ${parsed.problem}`);
  }
  const problem = addressProblem(parsed.address);
  if (problem) {
    return refusal(field, `${field} ${problem}`);
  }
  const name = headerText(parsed.name, MAX_DISPLAY_NAME_LENGTH);
  return name ? { name, address: parsed.address } : { address: parsed.address };
}

type NodemailerAttachment = NonNullable<SendMailOptions['attachments']>[number];

function attachmentsOf(attachments: MailAttachment[]): NodemailerAttachment[] | MailRefusal {
  const built: NodemailerAttachment[] = [];
  for (const [index, attachment] of attachments.entries()) {
    if (!CONTENT_TYPE.test(attachment.contentType) || !Buffer.isBuffer(attachment.content)) {
      return refusal('attachments', `attachments[${index}] needs a Buffer content and a MIME type`);
    }
    built.push({
      filename: headerText(attachment.filename, MAX_DISPLAY_NAME_LENGTH) || 'attachment',
      content: attachment.content,
      contentType: attachment.contentType,
    });
  }
  return built;
}

/**
 * The nodemailer message for `mail`, or why it is refused. Addresses are checked, never repaired; display names, the
 * subject and file names are flattened to one line; nodemailer then quotes and RFC 2047-encodes what needs it. The
 * message may not read files or URLs (its content is given, never fetched), and it does not advertise the mailer.
 */
export function buildMessage(mail: OutgoingMail): BuiltMessage {
  const to = mailbox(mail.to, 'to');
  if ('refused' in to) {
    return to;
  }
  const from = mailbox(mail.from, 'from');
  if ('refused' in from) {
    return from;
  }
  const replyTo = mail.reply_to ? mailbox(mail.reply_to, 'reply_to') : null;
  if (replyTo && 'refused' in replyTo) {
    return replyTo;
  }
  const attachments = attachmentsOf(mail.attachments ?? []);
  if (!Array.isArray(attachments)) {
    return attachments;
  }
  if (mail.message_id && !MESSAGE_ID.test(mail.message_id)) {
    return refusal('message_id', 'message_id must be <local@domain> in printable ASCII');
  }
  const message: SendMailOptions = {
    from,
    to,
    subject: headerText(mail.subject, MAX_SUBJECT_LENGTH),
    text: mail.text,
    xMailer: false,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
  if (replyTo) {
    message.replyTo = replyTo;
  }
  if (mail.html) {
    message.html = mail.html;
  }
  if (attachments.length > 0) {
    message.attachments = attachments;
  }
  if (mail.message_id) {
    message.messageId = mail.message_id;
  }
  if (mail.date) {
    message.date = mail.date;
  }
  return { refused: false, message };
}
