// Invoices: each with its status, total, what is left to pay and when it is due, and its PDF (fetched with the
// session's token, then saved through a blob link: a plain link could not send the token).
import { api } from '../api.js';
import { add, announce, h, notice, show } from '../dom.js';
import { day, has, money, t } from '../i18n.js';
import { allInvoices } from './home.js';

async function download(invoice, button, status, ctx) {
  const number = invoice.number ?? invoice.id;
  button.disabled = true;
  try {
    const blob = await api.blob(`invoices/${encodeURIComponent(invoice.id)}/pdf`);
    const url = URL.createObjectURL(blob);
    const link = h('a', { href: url, download: `${number}.pdf`, hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    announce(t('downloaded', { number }));
  } catch (error) {
    show(status, notice(ctx.describeFailure(error)));
  } finally {
    button.disabled = false;
  }
}

function statusBadge(invoice) {
  const key = `inv_${invoice.status}`;
  const text = has(key) ? t(key) : invoice.status;
  const good = invoice.status === 'paid';
  return [
    h('span', { class: `badge ${good ? 'badge-ok' : ''}` }, text),
    invoice.overdue ? [' ', h('span', { class: 'badge badge-warn' }, t('overdue'))] : null,
  ];
}

function card(invoice, status, ctx) {
  const number = invoice.number ?? invoice.id;
  const headingId = `inv-${invoice.id}`;
  const button = h(
    'button',
    { type: 'button', class: 'button button-secondary', 'aria-label': t('downloadPdfOf', { number }) },
    t('downloadPdf'),
  );
  button.addEventListener('click', () => download(invoice, button, status, ctx));
  const issued = invoice.finalized_at ?? invoice.created_at;
  return h(
    'li',
    { class: 'card', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, t('invoiceTitle', { number })),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, t('status')),
      h('dd', {}, statusBadge(invoice)),
      h('dt', {}, t('issued')),
      h('dd', {}, day(issued.slice(0, 10))),
      h('dt', {}, t('due')),
      h('dd', {}, day(invoice.due_date)),
      h('dt', {}, t('total')),
      h('dd', {}, money(invoice.total, invoice.currency)),
      invoice.amount_due > 0 && invoice.status !== 'void'
        ? [
            h('dt', {}, t('amountDue')),
            h('dd', {}, h('strong', {}, money(invoice.amount_due, invoice.currency))),
          ]
        : null,
    ),
    button,
  );
}

export async function render(view, ctx) {
  // Drafts are not issued yet: the subscriber sees an invoice once it is finalized.
  const invoices = (await allInvoices(ctx.subscriberId)).filter((invoice) => invoice.status !== 'draft');
  const status = h('div');
  add(
    view,
    h('h1', { tabindex: '-1' }, t('invoicesTitle')),
    status,
    invoices.length === 0
      ? h('p', {}, t('noInvoices'))
      : h(
          'ul',
          { class: 'cards' },
          invoices.map((invoice) => card(invoice, status, ctx)),
        ),
  );
  return t('invoicesTitle');
}
