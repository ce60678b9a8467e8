// The portal's words in the tenant's language (en, de, fr, es; English otherwise), and its numbers, money and dates
// written by Intl in the tenant's locale.
import { MESSAGES } from './messages.js';

let locale = 'en';
let language = 'en';

/** Chooses the language and formats: the tenant's locale (e.g. de-DE), or the browser's before sign-in. */
export function setLocale(wanted) {
  let chosen = 'en';
  try {
    chosen = Intl.getCanonicalLocales(wanted || 'en')[0];
  } catch {
    chosen = 'en';
  }
  locale = chosen;
  const base = chosen.split('-')[0].toLowerCase();
  language = Object.prototype.hasOwnProperty.call(MESSAGES, base) ? base : 'en';
  document.documentElement.lang = language === base ? chosen : 'en';
}

export function currentLocale() {
  return locale;
}

/** A message with its {placeholders} filled; the English one when a language lacks it, the key when none has it. */
export function t(key, vars = {}) {
  const text = MESSAGES[language][key] ?? MESSAGES.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => (name in vars ? String(vars[name]) : `{${name}}`));
}

/** Whether a message exists (for record states the API may add later). */
export function has(key) {
  return key in MESSAGES.en;
}

/** Money in minor units (integer cents…), written with the currency's own number of decimals. */
export function money(minor, currency) {
  const format = new Intl.NumberFormat(locale, { style: 'currency', currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(minor / 10 ** digits);
}

/** A calendar day (YYYY-MM-DD) as the locale writes it. */
export function day(ymd, style = 'medium') {
  return new Intl.DateTimeFormat(locale, { dateStyle: style, timeZone: 'UTC' }).format(
    new Date(`${ymd}T00:00:00Z`),
  );
}

/** A short day label for a chart axis (e.g. 3. Dez.). */
export function shortDay(ymd) {
  return new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', timeZone: 'UTC' }).format(
    new Date(`${ymd}T00:00:00Z`),
  );
}

/** A moment, in the reader's own time zone. */
export function moment(iso) {
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
}

const BYTE_UNITS = ['byte', 'kilobyte', 'megabyte', 'gigabyte', 'terabyte'];

/** The unit (power of 1000) that writes `bytes` with a number below 1000. */
export function byteUnit(bytes) {
  let power = 0;
  while (power < BYTE_UNITS.length - 1 && bytes >= 1000 ** (power + 1)) {
    power += 1;
  }
  return power;
}

/** An amount of data (decimal units: 1 GB = 10⁹ bytes), in `power` if given. */
export function bytes(value, power = byteUnit(value)) {
  return new Intl.NumberFormat(locale, {
    style: 'unit',
    unit: BYTE_UNITS[power],
    unitDisplay: 'short',
    maximumFractionDigits: power === 0 ? 0 : 1,
  }).format(value / 1000 ** power);
}

/** The label of a unit power (GB…) for a chart axis. */
export function unitLabel(power) {
  return new Intl.NumberFormat(locale, { style: 'unit', unit: BYTE_UNITS[power], unitDisplay: 'short' })
    .formatToParts(1)
    .filter((part) => part.type === 'unit')
    .map((part) => part.value)
    .join('');
}
