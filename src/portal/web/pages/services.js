// Services: plan, status, login and network identity (the API never answers a password).
import { api } from '../api.js';
import { add, h } from '../dom.js';
import { currentLocale, has, moment, t } from '../i18n.js';

/** The subscriber's services, newest first (a subscriber has a handful: one page is enough). */
export function listServices(subscriberId) {
  return api.get(`subscribers/${encodeURIComponent(subscriberId)}/services`, { limit: 100 });
}

function label(prefix, value) {
  return has(`${prefix}_${value}`) ? t(`${prefix}_${value}`) : value;
}

/** The plan's name and rates (GET /portal/session names the plans of the subscriber's services), else its id. */
function planOf(service, plans) {
  const plan = plans.find((candidate) => candidate.id === service.plan_id);
  if (!plan) {
    return service.plan_id;
  }
  const mbits = (kbps) =>
    new Intl.NumberFormat(currentLocale(), { maximumFractionDigits: 1 }).format(kbps / 1000);
  return [
    h('strong', {}, plan.name),
    h('br'),
    t('planRates', { down: mbits(plan.download_kbps), up: mbits(plan.upload_kbps) }),
  ];
}

function card(service, plans) {
  const headingId = `svc-${service.id}`;
  const facts = [
    [t('status'), h('span', { class: 'badge' }, label('svc', service.status))],
    [t('plan'), planOf(service, plans)],
    [t('login'), service.pppoe_username],
    service.activated_at ? [t('activeSince'), moment(service.activated_at)] : null,
    service.static_ipv4 ? [t('fixedIp'), service.static_ipv4] : null,
    service.installation_address ? [t('installAddress'), service.installation_address] : null,
  ].filter(Boolean);
  return h(
    'li',
    { class: 'card', 'aria-labelledby': headingId },
    h('h2', { id: headingId }, t('service', { name: service.pppoe_username })),
    h(
      'dl',
      { class: 'facts' },
      facts.map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
    ),
    service.cap_state && service.cap_state !== 'normal'
      ? h('p', { class: 'badge-warn' }, label('cap', service.cap_state))
      : null,
  );
}

export async function render(view, ctx) {
  const services = await listServices(ctx.subscriberId);
  add(
    view,
    h('h1', { tabindex: '-1' }, t('servicesTitle')),
    services.length === 0
      ? h('p', {}, t('noServices'))
      : h(
          'ul',
          { class: 'cards' },
          services.map((service) => card(service, ctx.plans ?? [])),
        ),
  );
  return t('servicesTitle');
}
