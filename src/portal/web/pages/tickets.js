// Support: the subscriber's requests, a form to open one, and one request's public conversation with a reply form
// (the API answers a portal only the public comments, and writes its comments as the subscriber's).
import { api } from '../api.js';
import { add, announce, field, h, notice, show } from '../dom.js';
import { has, moment, t } from '../i18n.js';

function statusText(status) {
  return has(`tk_${status}`) ? t(`tk_${status}`) : status;
}

function newTicketForm(ctx, status) {
  const subject = h('input', { type: 'text', name: 'subject', maxlength: '200', required: true });
  const description = h('textarea', { name: 'description', maxlength: '10000', required: true, rows: '5' });
  const submit = h('button', { type: 'submit', class: 'button' }, t('send'));
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'new-heading', novalidate: true },
    h('h2', { id: 'new-heading' }, t('newTicket')),
    field(t('subject'), subject),
    field(t('description'), description),
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const missing = [subject, description].find((input) => !input.value.trim());
    if (missing) {
      show(status, notice(t('required')));
      missing.focus();
      return;
    }
    submit.disabled = true;
    try {
      const ticket = await api.post('tickets', {
        subject: subject.value.trim(),
        description: description.value.trim(),
      });
      announce(t('ticketCreated', { number: ticket.number }));
      location.hash = `#/tickets/${encodeURIComponent(ticket.id)}`;
    } catch (error) {
      show(status, notice(ctx.describeFailure(error)));
      submit.disabled = false;
    }
  });
  return form;
}

async function renderList(view, ctx) {
  const tickets = await api.get('tickets', { subscriber_id: ctx.subscriberId, limit: 100 });
  const status = h('div');
  add(
    view,
    h('h1', { tabindex: '-1' }, t('ticketsTitle')),
    status,
    h(
      'div',
      { class: 'two-columns' },
      h(
        'section',
        { 'aria-labelledby': 'list-heading' },
        h('h2', { id: 'list-heading' }, t('yourTickets')),
        tickets.length === 0
          ? h('p', {}, t('noTickets'))
          : h(
              'ul',
              { class: 'cards' },
              tickets.map((ticket) =>
                h(
                  'li',
                  { class: 'card' },
                  h(
                    'a',
                    { href: `#/tickets/${encodeURIComponent(ticket.id)}` },
                    t('ticketTitle', { number: ticket.number, subject: ticket.subject }),
                  ),
                  h(
                    'p',
                    { class: 'muted' },
                    h('span', { class: 'badge' }, statusText(ticket.status)),
                    ' ',
                    t('updated', { date: moment(ticket.updated_at) }),
                  ),
                ),
              ),
            ),
      ),
      newTicketForm(ctx, status),
    ),
  );
  return t('ticketsTitle');
}

function thread(comments) {
  if (comments.length === 0) {
    return h('p', {}, t('noComments'));
  }
  return h(
    'ol',
    { class: 'thread' },
    comments.map((comment) =>
      h(
        'li',
        { class: `comment comment-${comment.author_type}` },
        h(
          'header',
          {},
          h('strong', {}, comment.author_type === 'subscriber' ? t('you') : t(comment.author_type)),
          ' · ',
          h('time', { datetime: comment.created_at }, moment(comment.created_at)),
        ),
        h('p', {}, comment.body),
      ),
    ),
  );
}

async function renderTicket(view, ctx) {
  const id = encodeURIComponent(ctx.id);
  const [ticket, comments] = await Promise.all([
    api.get(`tickets/${id}`),
    api.get(`tickets/${id}/comments`, { limit: 100 }),
  ]);
  const title = t('ticketTitle', { number: ticket.number, subject: ticket.subject });
  const status = h('div');
  const conversation = h('div', {}, thread(comments));
  const body = h('textarea', { name: 'body', maxlength: '10000', required: true, rows: '4' });
  const submit = h('button', { type: 'submit', class: 'button' }, t('sendReply'));
  const form = h('form', { novalidate: true }, field(t('reply'), body), submit);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!body.value.trim()) {
      show(status, notice(t('required')));
      body.focus();
      return;
    }
    submit.disabled = true;
    try {
      await api.post(`tickets/${id}/comments`, { body: body.value.trim() });
      body.value = '';
      show(conversation, thread(await api.get(`tickets/${id}/comments`, { limit: 100 })));
      show(status, notice(t('replySent'), 'ok'));
    } catch (error) {
      show(status, notice(ctx.describeFailure(error)));
    }
    submit.disabled = false;
  });
  add(
    view,
    h('p', {}, h('a', { href: '#/tickets' }, `← ${t('back')}`)),
    h('h1', { tabindex: '-1' }, title),
    h(
      'p',
      { class: 'muted' },
      h('span', { class: 'badge' }, statusText(ticket.status)),
      ' ',
      t('opened', { date: moment(ticket.created_at) }),
    ),
    ticket.description ? h('p', { class: 'card pre-line' }, ticket.description) : null,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'thread-heading' },
      h('h2', { id: 'thread-heading' }, t('conversation')),
      conversation,
      status,
      form,
    ),
  );
  return title;
}

export function render(view, ctx) {
  return ctx.id ? renderTicket(view, ctx) : renderList(view, ctx);
}
