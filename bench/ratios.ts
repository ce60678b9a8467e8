import type { Measurement, Ratio, Target } from './report';

/** The ratios of one run's measurements to its baselines, and the targets they are held to (docs/performance.md). */

function ratio(
  name: string,
  connections: number,
  numerator: Measurement | undefined,
  denominator: Measurement | undefined,
  pick: (m: Measurement) => number,
  target: Ratio['target'],
  what: string,
): Ratio | null {
  if (!numerator || !denominator || pick(denominator) === 0) {
    return null;
  }
  const value = pick(numerator) / pick(denominator);
  const met = target ? (target.op === '>=' ? value >= target.bound : value <= target.bound) : null;
  return {
    name,
    connections,
    value,
    target,
    met,
    detail: `${what}: ${pick(numerator).toFixed(1)} / ${pick(denominator).toFixed(1)}`,
  };
}

/** The 100-row pages the bench measures: the label its ratios carry, and the case. */
const PAGES: [string, string][] = [
  ['subscribers page', 'subscribers.list_first'],
  ['events page', 'events.list_first'],
  ['tickets page', 'tickets.list'],
  ['orders page', 'provisioning_orders.list'],
  ['ledger page', 'ledger.list'],
  ['events by subject', 'events.by_subject'],
];

/** A case's p99 over its own p50, held to ≤ 3 (#19: a page's tail within 3× its median). */
function tail(name: string, connections: number, m: Measurement | undefined): Ratio | null {
  if (!m || m.latencyMs.p50 === 0) {
    return null;
  }
  const value = m.latencyMs.p99 / m.latencyMs.p50;
  return {
    name,
    connections,
    value,
    target: { op: '<=', bound: 3 },
    met: value <= 3,
    detail: `p99 / p50 ms: ${m.latencyMs.p99.toFixed(1)} / ${m.latencyMs.p50.toFixed(1)}`,
  };
}

/** One case's measurement at the connections being looked at. */
type Find = (name: string) => Measurement | undefined;

const rps = (m: Measurement) => m.rps;
const p99 = (m: Measurement) => m.latencyMs.p99;
const p50 = (m: Measurement) => m.latencyMs.p50;

export function ratiosOf(measurements: Measurement[], connections: number[]): Ratio[] {
  const ratios: Ratio[] = [];
  for (const c of connections) {
    const find: Find = (name) => measurements.find((m) => m.case === name && m.connections === c);
    const candidates = [
      ...createRatios(find, c),
      ...readRatios(find, c),
      ...writeRatios(find, c),
      ...pageRatios(find, c),
    ];
    for (const candidate of candidates) {
      if (candidate) {
        ratios.push(candidate);
      }
    }
  }
  return ratios;
}

/** The create against the baselines and the framework's floor, with and without an idempotency key. */
function createRatios(find: Find, c: number): (Ratio | null)[] {
  const base = find('baseline.insert');
  const floor = find('baseline.framework');
  return [
    // Round two (#19) holds the create to the framework's floor (c), the bare Nest + Express + class-validator
    // INSERT the design card's stack cannot go below; the ratios to baseline (a) stay for the record.
    ratio('create rps / baseline (a) rps', c, find('subscribers.create'), base, rps, null, 'req/s'),
    ratio('create p99 / baseline (a) p99', c, find('subscribers.create'), base, p99, null, 'p99 ms'),
    ratio(
      'create rps / floor (c) rps',
      c,
      find('subscribers.create'),
      floor,
      rps,
      { op: '>=', bound: 0.75 },
      'req/s',
    ),
    ratio(
      'create p99 / floor (c) p99',
      c,
      find('subscribers.create'),
      floor,
      p99,
      { op: '<=', bound: 3 },
      'p99 ms',
    ),
    ratio('floor (c) rps / baseline (a) rps', c, floor, base, rps, null, 'req/s'),
    ratio('floor (c) p99 / baseline (a) p99', c, floor, base, p99, null, 'p99 ms'),
    ratio(
      'create+key rps / baseline (a) rps',
      c,
      find('subscribers.create_idempotent'),
      base,
      rps,
      null,
      'req/s',
    ),
    ratio(
      'create+key rps / create rps',
      c,
      find('subscribers.create_idempotent'),
      find('subscribers.create'),
      rps,
      { op: '>=', bound: 0.85 },
      'req/s',
    ),
    ratio(
      'create+key p99 / baseline (a) p99',
      c,
      find('subscribers.create_idempotent'),
      base,
      p99,
      null,
      'p99 ms',
    ),
  ];
}

/** Reads against the framework's ceiling (get by id), and deep pages against first pages. */
function readRatios(find: Find, c: number): (Ratio | null)[] {
  const live = find('health.live');
  return [
    ratio(
      'get by id rps / health/live rps',
      c,
      find('subscribers.get'),
      live,
      rps,
      { op: '>=', bound: 0.75 },
      'req/s',
    ),
    // #35: a desk's search keeps up with reads of one record (at least 0.3 of get by id).
    ratio(
      'search rps / get by id rps',
      c,
      find('subscribers.search'),
      find('subscribers.get'),
      rps,
      { op: '>=', bound: 0.3 },
      'req/s',
    ),
    ratio(
      'subscribers deep p50 / first p50',
      c,
      find('subscribers.list_deep'),
      find('subscribers.list_first'),
      p50,
      { op: '<=', bound: 1.3 },
      'p50 ms',
    ),
    ratio(
      'events deep p50 / first p50',
      c,
      find('events.list_deep'),
      find('events.list_first'),
      p50,
      { op: '<=', bound: 1.3 },
      'p50 ms',
    ),
  ];
}

/** The domains' writes against the floor of a create. */
function writeRatios(find: Find, c: number): (Ratio | null)[] {
  const base = find('baseline.insert');
  return [
    ratio('transactions rps / baseline (a) rps', c, find('transactions.create'), base, rps, null, 'req/s'),
    ratio('allocate rps / baseline (a) rps', c, find('transactions.allocate'), base, rps, null, 'req/s'),
    // The domains' writes against the floor of a create, as the payment and the allocation above; their 100-row
    // pages (and the event log of one subject) against the framework's ceiling, as get by id.
    ratio('ticket create rps / baseline (a) rps', c, find('tickets.create'), base, rps, null, 'req/s'),
    ratio('service create rps / baseline (a) rps', c, find('services.create'), base, rps, null, 'req/s'),
  ];
}

/** The 100-row pages against the framework's ceiling, and their tails against their medians. */
function pageRatios(find: Find, c: number): (Ratio | null)[] {
  const live = find('health.live');
  return [
    // Every 100-row page against the framework's ceiling, and its tail against its median (#19 target 4).
    ...PAGES.flatMap(([label, name]) => [
      ratio(`${label} rps / health/live rps`, c, find(name), live, rps, { op: '>=', bound: 0.3 }, 'req/s'),
      tail(`${label} p99 / its p50`, c, find(name)),
    ]),
  ];
}

export function targetsOf(
  ratios: Ratio[],
  measurements: Measurement[],
  peakRssMb: number,
  embedded: boolean,
): Target[] {
  const at64 = (name: string) => ratios.find((r) => r.name === name && r.connections === 64);
  const fromRatio = (label: string, name: string): Target => {
    const r = at64(name);
    return {
      name: label,
      bound: r?.target ? `${r.target.op} ${r.target.bound}` : '—',
      value: r ? r.value.toFixed(2) : 'not measured',
      met: embedded || !r ? null : r.met,
    };
  };
  const app = measurements.filter((m) => !m.case.startsWith('baseline'));
  const errors = measurements.reduce((sum, m) => sum + m.errors + m.timeouts, 0);
  const fivexx = measurements.reduce((sum, m) => sum + m.status5xx, 0);
  const non2xx = app.reduce((sum, m) => sum + m.non2xx, 0);
  return [
    fromRatio('create req/s ≥ 0.75 of floor (c)', 'create rps / floor (c) rps'),
    fromRatio('create p99 ≤ 3× floor (c) p99', 'create p99 / floor (c) p99'),
    fromRatio('keyed create req/s ≥ 0.85 of create', 'create+key rps / create rps'),
    fromRatio('get by id req/s ≥ 0.75 of GET /health/live', 'get by id rps / health/live rps'),
    ...PAGES.flatMap(([label]) => [
      fromRatio(`${label} req/s ≥ 0.3 of GET /health/live`, `${label} rps / health/live rps`),
      fromRatio(`${label} p99 ≤ 3× its p50`, `${label} p99 / its p50`),
    ]),
    fromRatio('subscribers deep page p50 ≤ 1.3× first page p50', 'subscribers deep p50 / first p50'),
    fromRatio('events deep page p50 ≤ 1.3× first page p50', 'events deep p50 / first p50'),
    { name: 'errors + timeouts, whole run', bound: '= 0', value: String(errors), met: errors === 0 },
    { name: '5xx, whole run', bound: '= 0', value: String(fivexx), met: fivexx === 0 },
    { name: 'non-2xx (app), whole run', bound: '= 0', value: String(non2xx), met: non2xx === 0 },
    {
      name: 'server peak RSS (VmHWM)',
      bound: '≤ 300 MB',
      value: `${peakRssMb.toFixed(0)} MB`,
      met: peakRssMb <= 300,
    },
  ];
}
