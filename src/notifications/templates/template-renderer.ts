import * as Mustache from 'mustache';
import { NOTIFICATION_KIND_SPECS, type NotificationKind, SECRET_VARIABLES } from '../kinds';
import type { NotificationView } from './notification-context';

/**
 * Notification templates in mustache (logic-less: values, sections, comments; no partials, no code): rendering, and
 * the checks a template passes before it is saved. The HTML part escapes every value; the text part and the subject
 * take values as they are, the subject with its line breaks removed so no value can add a mail header.
 */

export interface NotificationTemplate {
  subject: string;
  text: string;
  html: string;
}

export type TemplateField = keyof NotificationTemplate;

/** What is wrong with a template: the API answers each as 422 validation_failed on `field`. */
export interface TemplateProblem {
  field: TemplateField;
  message: string;
}

export const MAX_SUBJECT_LENGTH = 200;

/**
 * Always these tags, passed to every parse and render: mustache's own default (Mustache.tags) is a global another
 * caller could change. A template may still switch its own with `{{=<% %>=}}`; the parse follows it.
 */
const TAGS: Mustache.OpeningAndClosingTags = ['{{', '}}'];

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '/': '&#x2F;',
  '`': '&#x60;',
  '=': '&#x3D;',
};

/** Mustache's own HTML escaping, written here so that a change to the global Mustache.escape cannot reach us. */
function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`=/]/g, (char) => HTML_ESCAPES[char]);
}

function verbatim(value: unknown): string {
  return String(value);
}

/** Line breaks (CR, LF, the Unicode separators) become one space; other control characters go. */
function oneLine(value: unknown): string {
  return (
    String(value)
      .replace(/[\r\n\u2028\u2029]+/g, ' ')
      // eslint-disable-next-line no-control-regex -- control characters are what this removes
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '')
  );
}

/**
 * A writer of our own with its cache off: Mustache.render keeps every template it ever saw in a global cache, which a
 * tenant's templates would grow without end. Parsed templates are kept here instead, a bounded number.
 */
const writer = new Mustache.Writer();
(writer as unknown as { templateCache: Mustache.TemplateCache | undefined }).templateCache = undefined;

const MAX_CACHED = 500;
const parsed = new Map<string, Mustache.TemplateSpans>();

/** The tokens of `template` (throws mustache's Error on a syntax error: an unclosed tag or section). */
function tokensOf(template: string): Mustache.TemplateSpans {
  const cachedTokens = parsed.get(template);
  if (cachedTokens !== undefined) {
    return cachedTokens;
  }
  const tokens = writer.parse(template, TAGS) as Mustache.TemplateSpans;
  if (parsed.size >= MAX_CACHED) {
    // Map keeps insertion order: the oldest entry goes first.
    parsed.delete(parsed.keys().next().value as string);
  }
  parsed.set(template, tokens);
  return tokens;
}

function renderPart(template: string, view: NotificationView, escape: Mustache.EscapeFunction): string {
  // No partials are passed, so `{{> name}}` renders nothing (templateProblems refuses it at save anyway).
  return writer.renderTokens(
    tokensOf(template) as string[][],
    new Mustache.Context(view),
    undefined,
    template,
    {
      escape,
      tags: TAGS,
    },
  );
}

/**
 * A notification's subject, text and HTML from its templates and view (notificationView). The subject is one line
 * whatever the template or the values hold: its line breaks are removed from each value and again from the whole.
 */
export function renderNotification(
  template: NotificationTemplate,
  view: NotificationView,
): NotificationTemplate {
  return {
    subject: oneLine(renderPart(template.subject, view, oneLine)).trim(),
    text: renderPart(template.text, view, verbatim),
    html: renderPart(template.html, view, escapeHtml),
  };
}

/** A name as mustache resolves it: against each enclosing section's path, innermost first, then the top. */
function candidates(name: string, sections: readonly string[]): string[] {
  return [...sections.map((section) => `${section}.${name}`).reverse(), name];
}

class TokenWalker {
  readonly problems: TemplateProblem[] = [];
  private readonly variables: ReadonlySet<string>;
  private readonly reported = new Set<string>();

  constructor(
    private readonly kind: NotificationKind,
    private readonly field: TemplateField,
  ) {
    this.variables = new Set<string>(NOTIFICATION_KIND_SPECS[kind].variables);
  }

  walk(tokens: Mustache.TemplateSpans, sections: readonly string[] = []): void {
    for (const token of tokens) {
      const [type, name] = token;
      switch (type) {
        case 'name':
          this.value(name, sections);
          break;
        case '&':
          this.unescaped(name);
          this.value(name, sections);
          break;
        case '#':
        case '^':
          this.section(name, sections);
          this.walk(token[4] as Mustache.TemplateSpans, [
            ...sections,
            this.resolve(name, sections, true) ?? name,
          ]);
          break;
        case '>':
          this.report(`>${name}`, `partials ({{> ${name}}}) are not allowed`);
          break;
        case 'text':
        case '!':
        case '=':
          break;
      }
    }
  }

  /** The variable (or the prefix of variables, `invoice` for invoice.*) `name` stands for here, if any. */
  private resolve(name: string, sections: readonly string[], prefixes = false): string | undefined {
    if (name === '.' && sections.length > 0) {
      return sections[sections.length - 1];
    }
    const known = (path: string) =>
      this.variables.has(path) || (prefixes && [...this.variables].some((v) => v.startsWith(`${path}.`)));
    return candidates(name, sections).find(known);
  }

  private value(name: string, sections: readonly string[]): void {
    const path = this.resolve(name, sections);
    if (path === undefined || !this.variables.has(path)) {
      this.unknown(name);
    } else {
      this.secret(path);
    }
  }

  private section(name: string, sections: readonly string[]): void {
    const path = this.resolve(name, sections, true);
    if (path === undefined) {
      this.unknown(name);
    } else {
      this.secret(path);
    }
  }

  /** A one-time secret (portal.code, portal.link) in the subject, which the notification log keeps: refused. */
  private secret(path: string): void {
    if (this.field === 'subject' && (SECRET_VARIABLES as readonly string[]).includes(path)) {
      this.report(
        `secret:${path}`,
        `{{${path}}} is a one-time secret and may not be in the subject (the notification log keeps it): use it in text and html`,
      );
    }
  }

  private unescaped(name: string): void {
    if (this.field === 'html') {
      this.report(
        `&${name}`,
        `{{{${name}}}} and {{& ${name}}} would put the value unescaped into HTML: use {{${name}}}`,
      );
    } else if (this.field === 'subject') {
      this.report(
        `&${name}`,
        `{{{${name}}}} and {{& ${name}}} are not allowed in the subject: use {{${name}}}`,
      );
    }
  }

  private unknown(name: string): void {
    const allowed = NOTIFICATION_KIND_SPECS[this.kind].variables.join(', ');
    this.report(name, `unknown variable {{${name}}}: a ${this.kind} template may use ${allowed}`);
  }

  private report(key: string, message: string): void {
    if (!this.reported.has(key)) {
      this.reported.add(key);
      this.problems.push({ field: this.field, message });
    }
  }
}

function subjectProblems(subject: string): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  if (subject.length > MAX_SUBJECT_LENGTH) {
    problems.push({
      field: 'subject',
      message: `the subject is longer than ${MAX_SUBJECT_LENGTH} characters`,
    });
  }
  if (/[\r\n\u2028\u2029]/.test(subject)) {
    problems.push({ field: 'subject', message: 'the subject must be one line' });
  }
  return problems;
}

/**
 * Why `template` cannot be saved for `kind`, field by field (empty: it can): a syntax error, a variable the kind does
 * not have (inside sections too), a one-time secret (portal.code, portal.link) in the subject, a partial, an unescaped
 * value in the HTML or the subject, a subject over
 * MAX_SUBJECT_LENGTH characters or of more than one line.
 */
export function templateProblems(kind: NotificationKind, template: NotificationTemplate): TemplateProblem[] {
  const problems = subjectProblems(template.subject);
  for (const field of ['subject', 'text', 'html'] as const) {
    let tokens: Mustache.TemplateSpans;
    try {
      tokens = tokensOf(template[field]);
    } catch (error) {
      problems.push({ field, message: `not a valid template: ${(error as Error).message}` });
      continue;
    }
    const walker = new TokenWalker(kind, field);
    walker.walk(tokens);
    problems.push(...walker.problems);
  }
  return problems;
}
