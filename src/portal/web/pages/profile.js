// Profile: the contact details the subscriber may change (email, phone), and which notifications it is sent; the
// legal notices (invoices, credit notes) are shown on and locked.
import { api } from '../api.js';
import { add, announce, field, h, notice, show } from '../dom.js';
import { has, t } from '../i18n.js';

function contactForm(subscriber, ctx) {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email' });
  email.value = subscriber.email ?? '';
  const phone = h('input', { type: 'tel', name: 'phone', autocomplete: 'tel' });
  phone.value = subscriber.phone ?? '';
  const status = h('div');
  const submit = h('button', { type: 'submit', class: 'button' }, t('saveContact'));
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'contact-heading', novalidate: true },
    h('h2', { id: 'contact-heading' }, t('contactHeading')),
    h('dl', { class: 'facts' }, h('dt', {}, t('name')), h('dd', {}, subscriber.full_name)),
    field(t('email'), email),
    field(t('phone'), phone),
    status,
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    submit.disabled = true;
    try {
      await api.patch(`subscribers/${encodeURIComponent(ctx.subscriberId)}`, {
        email: email.value.trim() || null,
        phone: phone.value.trim() || null,
      });
      show(status, notice(t('contactSaved'), 'ok'));
    } catch (error) {
      show(status, notice(ctx.describeFailure(error)));
      (error.field === 'phone' ? phone : email).focus();
    }
    submit.disabled = false;
  });
  return form;
}

function kindLabel(kind) {
  return has(`n_${kind}`) ? t(`n_${kind}`) : kind.replace(/_/g, ' ');
}

function preferences(prefs, ctx) {
  const legal = new Set(prefs.legal_notices);
  const status = h('div');
  const path = `subscribers/${encodeURIComponent(ctx.subscriberId)}/notification-preferences`;
  const items = Object.entries(prefs.preferences).map(([kind, on]) => {
    const locked = legal.has(kind);
    const box = h('input', { type: 'checkbox', id: `pref-${kind}`, name: kind });
    box.checked = locked || on;
    box.disabled = locked;
    const hint = locked ? h('span', { class: 'hint', id: `pref-${kind}-hint` }, t('legalLocked')) : null;
    if (hint) {
      box.setAttribute('aria-describedby', hint.id);
    }
    box.addEventListener('change', async () => {
      const wanted = box.checked;
      box.disabled = true;
      try {
        await api.patch(path, { [kind]: wanted });
        announce(t(wanted ? 'prefOn' : 'prefOff', { kind: kindLabel(kind) }));
        status.replaceChildren();
      } catch (error) {
        box.checked = !wanted;
        show(status, notice(ctx.describeFailure(error)));
      }
      box.disabled = false;
    });
    return h(
      'li',
      {},
      box,
      h('div', {}, h('label', { for: box.id }, kindLabel(kind)), hint ? h('br') : null, hint),
    );
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'prefs-heading' },
    h('h2', { id: 'prefs-heading' }, t('prefsHeading')),
    h('p', { class: 'muted' }, t('prefsIntro')),
    status,
    h('ul', { class: 'toggles' }, items),
  );
}

export async function render(view, ctx) {
  const id = encodeURIComponent(ctx.subscriberId);
  const [subscriber, prefs] = await Promise.all([
    api.get(`subscribers/${id}`),
    api.get(`subscribers/${id}/notification-preferences`),
  ]);
  add(
    view,
    h('h1', { tabindex: '-1' }, t('profileTitle')),
    h('div', { class: 'two-columns' }, contactForm(subscriber, ctx), preferences(prefs, ctx)),
  );
  return t('profileTitle');
}
