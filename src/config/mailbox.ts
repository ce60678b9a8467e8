/**
 * The grammar of the mailboxes this API writes into a message's headers: one address, no comments, no groups, no
 * quoted local parts. Narrower than RFC 5322 on purpose: whatever passes here can go into a header or an SMTP command
 * without quoting, so a value that would need it (or that carries a line break to start a header of its own) is
 * refused rather than repaired. Free of other imports so that the configuration can use it.
 */

/** One mailbox: a display name (nodemailer quotes it, and RFC 2047-encodes it when it is not ASCII) and an address. */
export interface MailAddress {
  name?: string | null;
  address: string;
}

/** RFC 5322 atext, plus any non-ASCII character (an internationalised address, RFC 6531). */
const ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\u0080-\\uFFFF-]+";
const LOCAL_PART = new RegExp(`^${ATOM}(?:\\.${ATOM})*$`);
const LABEL = /^[A-Za-z0-9\u0080-\uFFFF](?:[A-Za-z0-9\u0080-\uFFFF-]{0,61}[A-Za-z0-9\u0080-\uFFFF])?$/;
/** C0 controls (CR and LF among them) and DEL. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const CONTROLS = /[\u0000-\u001f\u007f]+/g;

export const MAX_DISPLAY_NAME_LENGTH = 200;

/**
 * Why `address` is not one plain mailbox address (`someone@example.com`), or null when it is one. A line break gets its
 * own reason: it is the mark of a header injection attempt.
 */
export function addressProblem(address: unknown): string | null {
  if (typeof address !== 'string' || address.length === 0) {
    return 'is empty';
  }
  if (/[\r\n]/.test(address)) {
    return 'contains a line break';
  }
  if (address.length > 254 || CONTROL.test(address) || /\s/.test(address)) {
    return 'is not a single mailbox address';
  }
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  const labels = domain.split('.');
  const valid =
    at > 0 &&
    local.length <= 64 &&
    LOCAL_PART.test(local) &&
    labels.length >= 2 &&
    domain.length <= 253 &&
    labels.every((label) => LABEL.test(label));
  return valid ? null : 'is not a single mailbox address';
}

/**
 * A display name or a subject made safe for a header: control characters (CR and LF above all, which would start a
 * header of the attacker's choosing) become one space, runs of spaces one, and the ends are trimmed. What is left is
 * text, which nodemailer quotes or encodes as the header needs.
 */
export function headerText(value: string | null | undefined, maxLength: number): string {
  const flat = (value ?? '')
    .replace(CONTROLS, ' ')
    .replace(/\s{2,}/g, ' ')
    .trim();
  return flat.length > maxLength ? flat.slice(0, maxLength).trimEnd() : flat;
}

/**
 * Reads a configured mailbox: `billing@example.com` or `Example ISP <billing@example.com>` (the name may be in double
 * quotes). Returns it, or why it is refused.
 */
export function parseMailbox(text: string): MailAddress | { problem: string } {
  const value = text.trim();
  if (/[\r\n]/.test(value)) {
    return { problem: 'contains a line break' };
  }
  const named = /^(?:"([^"\\]*)"|([^"<>]*?))\s*<([^<>]*)>$/.exec(value);
  const address = named ? named[3] : value;
  const problem = addressProblem(address);
  if (problem) {
    return { problem };
  }
  const name = named ? headerText(named[1] ?? named[2], MAX_DISPLAY_NAME_LENGTH) : '';
  return name ? { name, address } : { address };
}
