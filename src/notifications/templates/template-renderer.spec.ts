import Mustache from 'mustache';
import type { NotificationView } from './notification-context';
import {
  MAX_SUBJECT_LENGTH,
  type NotificationTemplate,
  renderNotification,
  templateProblems,
} from './template-renderer';

/** A view as notificationView builds them: objects without a prototype. */
function viewOf(value: Record<string, unknown>): NotificationView {
  const copy = Object.create(null) as NotificationView;
  for (const [key, child] of Object.entries(value)) {
    copy[key] =
      child !== null && typeof child === 'object'
        ? viewOf(child as Record<string, unknown>)
        : (child as string | number | boolean | null);
  }
  return copy;
}

const template = (parts: Partial<NotificationTemplate>): NotificationTemplate => ({
  subject: 'Hello',
  text: 'Hello',
  html: '<p>Hello</p>',
  ...parts,
});

describe('renderNotification', () => {
  const hostile = viewOf({
    subscriber: { name: '<script>alert(1)</script>', email: 'ada@example.com' },
    tenant: { name: 'Acme & Sons' },
  });

  it('escapes a value in the HTML part and keeps it as it is in the text part', () => {
    const rendered = renderNotification(
      template({
        subject: 'For {{subscriber.name}}',
        text: 'Dear {{subscriber.name}}, from {{tenant.name}}',
        html: '<p>Dear {{subscriber.name}}, from {{tenant.name}}</p>',
      }),
      hostile,
    );
    expect(rendered.html).toBe(
      '<p>Dear &lt;script&gt;alert(1)&lt;&#x2F;script&gt;, from Acme &amp; Sons</p>',
    );
    expect(rendered.html).not.toContain('<script>');
    expect(rendered.text).toBe('Dear <script>alert(1)</script>, from Acme & Sons');
    expect(rendered.subject).toBe('For <script>alert(1)</script>');
  });

  it.each([
    ['CR LF', 'Ada\r\nBcc: victim@example.com'],
    ['LF', 'Ada\nBcc: victim@example.com'],
    ['CR', 'Ada\rBcc: victim@example.com'],
    ['a Unicode line separator', 'Ada\u2028Bcc: victim@example.com'],
  ])('keeps %s in a name out of the subject, and in the text', (_what, name) => {
    const view = viewOf({ subscriber: { name } });
    const rendered = renderNotification(
      template({ subject: 'Welcome {{subscriber.name}}!', text: '{{subscriber.name}}' }),
      view,
    );
    expect(rendered.subject).toBe('Welcome Ada Bcc: victim@example.com!');
    expect(rendered.subject).not.toMatch(/[\r\n\u2028]/);
    expect(rendered.text).toBe(name);
  });

  it('keeps the subject on one line even from a value placed unescaped, and drops control characters', () => {
    const view = viewOf({ subscriber: { name: 'Ada\r\nBcc: x@example.com\u0000' } });
    const rendered = renderNotification(
      template({ subject: '{{{subscriber.name}}} {{& subscriber.name}}' }),
      view,
    );
    expect(rendered.subject).toBe('Ada Bcc: x@example.com Ada Bcc: x@example.com');
  });

  it('renders sections, inverted sections and the current item', () => {
    const text =
      '{{#how_to_pay}}Pay: {{.}}{{/how_to_pay}}{{^how_to_pay}}No instructions{{/how_to_pay}}' +
      '|{{#invoice}}{{number}} {{subscriber.name}}{{/invoice}}';
    const view = viewOf({ how_to_pay: 'IBAN X', invoice: { number: 'INV-1' }, subscriber: { name: 'Ada' } });
    expect(renderNotification(template({ text }), view).text).toBe('Pay: IBAN X|INV-1 Ada');
    const without = viewOf({ how_to_pay: null, invoice: { number: 'INV-1' }, subscriber: { name: 'Ada' } });
    expect(renderNotification(template({ text }), without).text).toBe('No instructions|INV-1 Ada');
  });

  it('renders nothing for a partial (no partials are ever given)', () => {
    expect(renderNotification(template({ text: 'a{{> secrets}}b' }), viewOf({})).text).toBe('ab');
  });

  it("is not moved by a change to mustache's global tags or escape, and leaves its global cache alone", () => {
    const tags = Mustache.tags;
    const escape = Mustache.escape;
    const text = 'Dear {{subscriber.name}} <%subscriber.name%>';
    try {
      Mustache.tags = ['<%', '%>'];
      Mustache.escape = (value: string) => value;
      const rendered = renderNotification(
        template({ text, html: '<p>{{subscriber.name}}</p>' }),
        viewOf({ subscriber: { name: '<b>' } }),
      );
      expect(rendered.text).toBe('Dear <b> <%subscriber.name%>');
      expect(rendered.html).toBe('<p>&lt;b&gt;</p>');
    } finally {
      Mustache.tags = tags;
      Mustache.escape = escape;
    }
    expect(Mustache.templateCache?.get(`${text}:{{:}}`)).toBeUndefined();
  });

  it('follows a template that sets its own delimiters', () => {
    const view = viewOf({ subscriber: { name: 'Ada' } });
    expect(renderNotification(template({ text: '{{=<% %>=}}Hi <% subscriber.name %>' }), view).text).toBe(
      'Hi Ada',
    );
  });
});

describe('templateProblems', () => {
  it('answers nothing for a template that uses only its kind variables', () => {
    expect(
      templateProblems(
        'invoice_issued',
        template({
          subject: 'Invoice {{invoice.number}}',
          text: '{{#how_to_pay}}{{how_to_pay}}{{/how_to_pay}}{{^tenant.email}}-{{/tenant.email}}{{! a note }}',
          html: '{{#invoice}}<p>{{number}} {{total}} {{subscriber.name}}</p>{{/invoice}}',
        }),
      ),
    ).toEqual([]);
  });

  it.each(['subject', 'text', 'html'] as const)(
    'reports an unknown variable in the %s with its field',
    (field) => {
      const problems = templateProblems('invoice_issued', template({ [field]: 'Hi {{subscriber.nmae}}' }));
      expect(problems).toEqual([
        { field, message: expect.stringContaining('unknown variable {{subscriber.nmae}}') as string },
      ]);
      expect(problems[0].message).toContain('subscriber.name');
    },
  );

  it("reports another kind's variable", () => {
    expect(templateProblems('service_restored', template({ text: '{{invoice.number}}' }))).toEqual([
      { field: 'text', message: expect.stringContaining('{{invoice.number}}') as string },
    ]);
  });

  it('looks inside sections and inverted sections, nested', () => {
    const text =
      '{{#how_to_pay}}{{^tenant.email}}{{#invoice}}{{numbr}}{{/invoice}}{{/tenant.email}}{{/how_to_pay}}';
    expect(templateProblems('invoice_issued', template({ text }))).toEqual([
      { field: 'text', message: expect.stringContaining('{{numbr}}') as string },
    ]);
  });

  it('reports a section on a name that is no variable, and a value that is only a prefix', () => {
    const problems = templateProblems(
      'invoice_issued',
      template({ text: '{{#constructor}}x{{/constructor}}', html: '<p>{{invoice}} {{.}}</p>' }),
    );
    expect(problems.map((problem) => problem.field)).toEqual(['text', 'html', 'html']);
    expect(problems[1].message).toContain('{{invoice}}');
    expect(problems[2].message).toContain('{{.}}');
  });

  it('reports an unknown variable once per field', () => {
    expect(templateProblems('invoice_issued', template({ text: '{{x}} {{x}}', html: '{{x}}' }))).toHaveLength(
      2,
    );
  });

  it.each(['subject', 'text', 'html'] as const)('refuses a partial in the %s', (field) => {
    expect(templateProblems('invoice_issued', template({ [field]: 'a {{> footer}}' }))).toEqual([
      { field, message: 'partials ({{> footer}}) are not allowed' },
    ]);
  });

  it.each(['{{{subscriber.name}}}', '{{& subscriber.name}}'])(
    'refuses %s in the HTML and the subject, and takes it in the text',
    (unescaped) => {
      const problems = templateProblems(
        'invoice_issued',
        template({ subject: unescaped, text: unescaped, html: `<p>${unescaped}</p>` }),
      );
      expect(problems.map((problem) => problem.field)).toEqual(['subject', 'html']);
      expect(problems[1].message).toContain('unescaped');
    },
  );

  it('refuses a subject of more than one line or too long', () => {
    expect(
      templateProblems('invoice_issued', template({ subject: 'Invoice\r\n{{invoice.number}}' })),
    ).toEqual([{ field: 'subject', message: 'the subject must be one line' }]);
    expect(templateProblems('invoice_issued', template({ subject: 'x'.repeat(MAX_SUBJECT_LENGTH) }))).toEqual(
      [],
    );
    expect(
      templateProblems('invoice_issued', template({ subject: 'x'.repeat(MAX_SUBJECT_LENGTH + 1) })),
    ).toEqual([{ field: 'subject', message: `the subject is longer than ${MAX_SUBJECT_LENGTH} characters` }]);
  });

  it.each([
    ['an unclosed section', '{{#how_to_pay}}x'],
    ['an unclosed tag', 'Hi {{subscriber.name'],
    ['a mismatched section', '{{#how_to_pay}}x{{/tenant.email}}'],
  ])('reports %s as not a valid template', (_what, text) => {
    expect(templateProblems('invoice_issued', template({ text }))).toEqual([
      { field: 'text', message: expect.stringMatching(/^not a valid template: /) as string },
    ]);
  });

  it('checks the names under delimiters a template sets itself', () => {
    expect(templateProblems('invoice_issued', template({ text: '{{=<% %>=}}<% nope %> {{nope}}' }))).toEqual([
      { field: 'text', message: expect.stringContaining('{{nope}}') as string },
    ]);
  });
});

describe('templateProblems: one-time secrets', () => {
  const body = { text: '{{portal.code}}', html: '<p>{{portal.link}}</p>' };

  it.each([
    ['{{portal.code}}', 'portal_sign_in_code'],
    ['Code {{ portal.code }}', 'portal_sign_in_code'],
    ['{{portal.link}}', 'portal_invite'],
    ['{{#portal}}{{code}}{{/portal}}', 'portal_invite'],
    ['{{#portal.link}}x{{/portal.link}}', 'portal_invite'],
  ] as const)('refuses %s in the subject of %s, naming the subject', (subject, kind) => {
    const problems = templateProblems(kind, { subject, ...body });
    expect(problems).toEqual([
      expect.objectContaining({ field: 'subject', message: expect.stringContaining('one-time secret') }),
    ]);
  });

  it('takes them in the text and HTML parts', () => {
    expect(templateProblems('portal_invite', { subject: 'Welcome {{subscriber.name}}', ...body })).toEqual(
      [],
    );
  });
});
