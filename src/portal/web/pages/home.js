// Balance: what is owed per currency, what is due and by when (the open invoices), and how to pay.
import { api } from '../api.js';
import { add, h } from '../dom.js';
import { day, money, t } from '../i18n.js';

const OPEN = new Set(['open', 'partially_paid']);

/** Every invoice of the subscriber (the portal's list is held to it), following the cursor. */
export async function allInvoices(subscriberId) {
  const invoices = [];
  let after;
  for (let page = 0; page < 20; page += 1) {
    const batch = await api.get('invoices', {
      subscriber_id: subscriberId,
      limit: 100,
      starting_after: after,
    });
    invoices.push(...batch);
    if (batch.length < 100) {
      break;
    }
    after = batch[batch.length - 1].id;
  }
  return invoices;
}

function balanceCard(balance, open) {
  const owed = balance.balance > 0;
  const label = owed ? t('youOwe') : balance.balance < 0 ? t('inCredit') : t('settled');
  const dueFirst = open
    .filter((invoice) => invoice.currency === balance.currency)
    .sort((a, b) => a.due_date.localeCompare(b.due_date));
  const next = dueFirst[0];
  let when = h('p', {}, t('nothingDue'));
  if (next) {
    const sum = dueFirst.reduce((total, invoice) => total + invoice.amount_due, 0);
    when = next.overdue
      ? h(
          'p',
          { class: 'badge-warn' },
          h(
            'strong',
            {},
            t('overdueSince', { amount: money(sum, balance.currency), date: day(next.due_date) }),
          ),
        )
      : h('p', {}, t('dueBy', { amount: money(sum, balance.currency), date: day(next.due_date) }));
  }
  return h(
    'section',
    { class: 'card', 'aria-label': `${label} (${balance.currency})` },
    h('p', { class: 'muted' }, label),
    h('p', { class: 'figure' }, money(Math.abs(balance.balance), balance.currency)),
    when,
  );
}

function openList(open) {
  if (open.length === 0) {
    return null;
  }
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'open-heading' },
    h('h2', { id: 'open-heading' }, t('openInvoices')),
    h(
      'ul',
      {},
      open.map((invoice) =>
        h(
          'li',
          {},
          t('invoiceDue', {
            number: invoice.number ?? invoice.id,
            amount: money(invoice.amount_due, invoice.currency),
            date: day(invoice.due_date),
          }),
          invoice.overdue ? [' ', h('span', { class: 'badge badge-warn' }, t('overdue'))] : null,
        ),
      ),
    ),
    h('p', {}, h('a', { href: '#/invoices' }, t('navInvoices'))),
  );
}

export async function render(view, ctx) {
  const [balance, invoices] = await Promise.all([
    api.get(`subscribers/${encodeURIComponent(ctx.subscriberId)}/balance`),
    allInvoices(ctx.subscriberId),
  ]);
  const open = invoices.filter((invoice) => OPEN.has(invoice.status) && invoice.amount_due > 0);
  const balances = balance.balances.length > 0 ? balance.balances : [];
  const instructions = ctx.tenant.payment_instructions;
  add(
    view,
    h('h1', { tabindex: '-1' }, t('homeTitle')),
    balances.length > 0
      ? balances.map((entry) => balanceCard(entry, open))
      : h(
          'section',
          { class: 'card' },
          h('p', { class: 'figure' }, t('settled')),
          h('p', {}, t('nothingDue')),
        ),
    openList(open),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'pay-heading' },
      h('h2', { id: 'pay-heading' }, t('howToPay')),
      instructions
        ? [h('p', { class: 'pre-line' }, instructions), h('p', { class: 'muted' }, t('quoteNumber'))]
        : h('p', {}, t('noInstructions')),
    ),
  );
  return t('homeTitle');
}
