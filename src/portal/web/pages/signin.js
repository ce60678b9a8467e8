// Sign-in: an invitation code (an invite link signs in before this page shows), or an email address and the 6-digit
// code mailed to it (POST /portal/sign-in-codes, then POST /portal/sessions {tenant, email, code}).
import { api, ApiFailure } from '../api.js';
import { field, h, notice, show } from '../dom.js';
import { t } from '../i18n.js';

function busy(button, on) {
  button.disabled = on;
  button.setAttribute('aria-busy', on ? 'true' : 'false');
}

function inviteForm(ctx, status) {
  const code = h('input', {
    type: 'text',
    name: 'invite_code',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
  });
  const submit = h('button', { type: 'submit', class: 'button' }, t('signInSubmit'));
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'invite-heading', novalidate: true },
    h('h2', { id: 'invite-heading' }, t('inviteHeading')),
    field(t('inviteCode'), code, t('inviteHint')),
    submit,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const value = code.value.trim();
    if (!value) {
      show(status, notice(t('required')));
      code.focus();
      return;
    }
    busy(submit, true);
    try {
      const signed = await api.post('portal/sessions', { invite_code: value }, { auth: false });
      ctx.signedIn(signed.token);
    } catch (error) {
      const invalid = error instanceof ApiFailure && error.code === 'invalid_invite';
      show(status, notice(invalid ? t('inviteInvalid') : ctx.describeFailure(error)));
      busy(submit, false);
      code.focus();
    }
  });
  return form;
}

function emailForm(ctx, status) {
  const tenant = h('input', { type: 'text', name: 'tenant', autocomplete: 'off', required: true });
  tenant.value = ctx.tenant ?? '';
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'email', required: true });
  const code = h('input', {
    type: 'text',
    name: 'code',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    pattern: '[0-9]{6}',
    maxlength: '6',
    required: true,
  });
  const codeStep = h('div', { hidden: true }, field(t('code'), code, t('codeHint')));
  const submit = h('button', { type: 'submit', class: 'button' }, t('sendCode'));
  // The provider's ID comes from the link (?tenant=); asked for only when the link had none.
  const tenantField = ctx.tenant ? null : field(t('tenantLabel'), tenant, t('tenantHint'));
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'email-heading', novalidate: true },
    h('h2', { id: 'email-heading' }, t('emailHeading')),
    tenantField,
    field(t('email'), email),
    codeStep,
    submit,
  );
  let codeSent = false;
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const missing = [tenant, email, ...(codeSent ? [code] : [])].find((input) => !input.value.trim());
    if (missing) {
      show(status, notice(t('required')));
      missing.focus();
      return;
    }
    busy(submit, true);
    const who = { tenant: tenant.value.trim(), email: email.value.trim() };
    try {
      if (!codeSent) {
        await api.post('portal/sign-in-codes', who, { auth: false });
        codeSent = true;
        codeStep.hidden = false;
        submit.textContent = t('signInSubmit');
        show(status, notice(t('codeSent'), 'ok'));
        code.focus();
      } else {
        const signed = await api.post(
          'portal/sessions',
          { ...who, code: code.value.trim() },
          { auth: false },
        );
        ctx.signedIn(signed.token);
        return;
      }
    } catch (error) {
      const invalid = error instanceof ApiFailure && error.code === 'invalid_code';
      show(status, notice(invalid ? t('codeInvalid') : ctx.describeFailure(error)));
      (codeSent ? code : email).focus();
    }
    busy(submit, false);
  });
  return form;
}

/** The sign-in page in `main`; ctx.signedIn(token) is called once a session is made. */
export function render(main, ctx) {
  const status = h('div');
  if (ctx.message) {
    status.append(notice(ctx.message.message, ctx.message.kind ?? 'error'));
  }
  const heading = h('h1', { tabindex: '-1' }, t('signInTitle'));
  show(
    main,
    heading,
    h('p', {}, t('signInIntro')),
    status,
    h('div', { class: 'two-columns' }, inviteForm(ctx, status), emailForm(ctx, status)),
  );
  if (ctx.message) {
    heading.focus();
  }
}
