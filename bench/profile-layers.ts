/**
 * Where a request's server CPU goes, by layer, from a `--cpu-prof` profile of the server under test:
 *
 *   npx ts-node --transpile-only bench/profile-layers.ts <file.cpuprofile> --handler createSubscriber \
 *     [--other getSubscriber,getLiveness] [--ms-per-request 0.74]
 *
 * The profile covers every case of the run, so it is cut into 500 ms windows and only the windows where `--handler`
 * (the controller method's name) is on the stack and none of `--other` is are kept: the measurement of that case.
 * Each busy sample goes to one layer: garbage collection; a socket write (the response, or a statement sent to
 * Postgres); else the innermost frame of the app or of a package on its stack, by its file (LAYERS); samples with
 * only Node's own frames are the HTTP server's. With `--ms-per-request` (the bench's `srv ms/req` for the case),
 * each layer's share is also given in milliseconds per request.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** The first layer whose pattern matches a frame's file, innermost frame first. */
const LAYERS: [string, RegExp][] = [
  [
    'validation (class-validator, class-transformer)',
    /class-validator|class-transformer|\/validator\/|validation/,
  ],
  ['auth guard and token cache', /auth\.guard|\/tokens\/|request-credentials/],
  ['rate limit and abuse block', /rate-limit|@nestjs\/throttler/],
  ['JSON body (json-body guard, body-parser)', /json-body|body-parser|raw-body|iconv-lite/],
  ['idempotency', /idempotency/],
  ['envelope and exception filter', /envelope|exception|client-error/],
  ['request id, request log (pino)', /http-pipeline|pino|sonic-boom|\/ids\.js/],
  ['domain: controllers, services, repositories, events', /\/dist\/(?!common\/|gateway\/|database\/)/],
  ['database layer: TypeORM, prepared statements, guard', /typeorm|\/dist\/database\//],
  ['pg driver', /\/pg\/|pg-pool|pg-protocol|pg-types|query-counter/],
  ['Nest: router, guard and interceptor chain, rxjs', /@nestjs\/|rxjs/],
  ['Express and its router', /\/express\/|\/router\/|finalhandler|send\/|content-type|forwarded|proxy-addr/],
  ['other app code (common, gateway)', /\/dist\//],
  ['other packages', /node_modules/],
];
const GC = 'garbage collection';
const WRITES = 'socket writes (response, statements)';
const HTTP = 'Node: HTTP server, sockets, timers, async hooks';

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

function main(): void {
  const args = process.argv.slice(2);
  const file = args[0];
  const handler = option(args, '--handler');
  if (!file || !handler) {
    throw new Error(
      'usage: profile-layers.ts <file.cpuprofile> --handler <method> [--other a,b] [--ms-per-request n]',
    );
  }
  const others = (option(args, '--other') ?? '').split(',').filter(Boolean);
  const msPerRequest = Number(option(args, '--ms-per-request') ?? NaN);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const stackOf = stacksOf(profile);
  const timed = timedSamples(profile);
  const kept = keptWindows(timed, stackOf, handler, others);
  const { layers, busy, wall } = layerTimes(timed, kept, stackOf);
  if (busy === 0) {
    throw new Error(`no 500 ms window has ${handler} on the stack without ${others.join(', ') || 'others'}`);
  }
  process.stdout.write(
    `${handler}: ${kept.size} windows of 0.5 s, server busy ${((100 * busy) / wall).toFixed(0)} % of them\n\n`,
  );
  const withMs = Number.isFinite(msPerRequest);
  process.stdout.write(`| layer | share of server CPU |${withMs ? ' ms per request |' : ''}\n`);
  process.stdout.write(`|---|---:|${withMs ? '---:|' : ''}\n`);
  for (const [layer, time] of [...layers].sort((a, b) => b[1] - a[1])) {
    const share = time / busy;
    const ms = withMs ? ` ${(share * msPerRequest).toFixed(3)} |` : '';
    process.stdout.write(`| ${layer} | ${(100 * share).toFixed(1)} % |${ms}\n`);
  }
}

/** A sample's stack, innermost frame first (memoized per node). */
type StackOf = (id: number) => ProfileNode[];

function stacksOf(profile: Profile): StackOf {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) {
      parentOf.set(child, node.id);
    }
  }
  const stacks = new Map<number, ProfileNode[]>();
  return (id: number): ProfileNode[] => {
    let stack = stacks.get(id);
    if (!stack) {
      stack = [];
      for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
        stack.push(byId.get(at)!);
      }
      stacks.set(id, stack);
    }
    return stack;
  };
}

const idle = (node: ProfileNode) => node.callFrame.functionName === '(idle)';

const WINDOW_US = 500_000;

/** A sample with the 500 ms window it falls in and the time it stands for. */
interface TimedSample {
  id: number;
  window: number;
  weight: number;
}

function timedSamples(profile: Profile): TimedSample[] {
  let at = profile.startTime;
  return profile.samples.map((id, index) => {
    at += profile.timeDeltas[index];
    const window = Math.floor((at - profile.startTime) / WINDOW_US);
    const weight = profile.timeDeltas[index + 1] ?? profile.timeDeltas[index];
    return { id, window, weight };
  });
}

/** The windows that measure the case: busy, `handler` on the stack often enough, and none of `others` on it. */
function keptWindows(timed: TimedSample[], stackOf: StackOf, handler: string, others: string[]): Set<number> {
  const windows = new Map<number, { busy: number; hits: number; other: boolean }>();
  for (const sample of timed) {
    const stack = stackOf(sample.id);
    if (idle(stack[0])) {
      continue;
    }
    const window = windows.get(sample.window) ?? { busy: 0, hits: 0, other: false };
    window.busy += 1;
    const names = stack.map((node) => node.callFrame.functionName);
    if (names.includes(handler)) {
      window.hits += 1;
    }
    if (others.some((other) => names.includes(other))) {
      window.other = true;
    }
    windows.set(sample.window, window);
  }
  return new Set(
    [...windows].filter(([, w]) => w.hits >= 3 && !w.other && w.busy >= 100).map(([index]) => index),
  );
}

/** The busy time of the kept windows by layer, their busy time, and their wall time. */
function layerTimes(
  timed: TimedSample[],
  kept: Set<number>,
  stackOf: StackOf,
): { layers: Map<string, number>; busy: number; wall: number } {
  const layers = new Map<string, number>();
  let busy = 0;
  let wall = 0;
  for (const sample of timed) {
    if (!kept.has(sample.window)) {
      continue;
    }
    wall += sample.weight;
    const stack = stackOf(sample.id);
    if (idle(stack[0])) {
      continue;
    }
    busy += sample.weight;
    const layer = layerOf(stack);
    layers.set(layer, (layers.get(layer) ?? 0) + sample.weight);
  }
  return { layers, busy, wall };
}

function layerOf(stack: ProfileNode[]): string {
  const leaf = stack[0].callFrame.functionName;
  if (leaf === '(garbage collector)') {
    return GC;
  }
  if (stack.some((node) => node.callFrame.functionName === 'writev' && node.callFrame.url === '')) {
    return WRITES;
  }
  for (const node of stack) {
    const url = node.callFrame.url;
    if (!url || url.startsWith('node:')) {
      continue;
    }
    const match = LAYERS.find(([, pattern]) => pattern.test(url));
    if (match) {
      return match[0];
    }
  }
  return HTTP;
}

main();
