import { E164 } from './dto/subscriber-fields';

/** What people write between a phone number's digits: spaces, dashes, dots, slashes, parentheses. */
const SEPARATORS = /[\s().\-/]/g;
/** Text that reads as a phone number (or part of one): digits and separators, an optional leading plus. */
const PHONE_LIKE = /^\+?[\d\s().\-/]+$/;

/**
 * `text` in E.164, as subscribers' phones are stored: separators dropped, a leading international `00` read as `+`.
 * Null when it is not a full international number (a national number's country cannot be guessed).
 */
export function toE164(text: string): string | null {
  const compact = text.trim().replace(SEPARATORS, '').replace(/^00/, '+');
  return E164.test(compact) ? compact : null;
}

/**
 * The digits a phone-like search text stands for, to find inside stored E.164 numbers: `(415) 555-0123` is
 * `4155550123`; a national trunk `0` is dropped (`020 7946 0000` finds `+442079460000`). Null when the text is not
 * phone-like or holds fewer than 3 digits.
 */
export function phoneDigits(text: string): string | null {
  if (!PHONE_LIKE.test(text)) {
    return null;
  }
  const digits = text.replace(/\D/g, '');
  const international = /^\s*(\+|00)/.test(text);
  const national = international ? digits.replace(/^00/, '') : digits.replace(/^0(?=\d)/, '');
  return national.length >= 3 ? national : null;
}
