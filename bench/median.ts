/**
 * The median of several `npm run bench` runs, as issue #19 reports them:
 *
 *   npx ts-node --transpile-only bench/median.ts bench/results/bench-A.json bench/results/bench-B.json …
 *
 * Prints, for each case and connection count the runs share, the median of each column (errors and 5xx summed, RSS
 * the largest), then each target's per-run value and its median: a ratio is taken within its own run, then the
 * median of those ratios is reported, never a ratio of medians.
 */
import { readFileSync } from 'node:fs';
import type { Measurement } from './report';

interface TargetRow {
  name: string;
  bound: string;
  value: string;
  met: boolean | null;
}

interface BenchResult {
  environment: { commit: string };
  startedAt: string;
  measurements: Measurement[];
  targets: TargetRow[];
  peakRssMb: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function main(): void {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    throw new Error('usage: median.ts <bench-result.json>…');
  }
  const runs = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as BenchResult);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(
    `${runs.length} runs: ${runs.map((run) => `${run.startedAt} (${run.environment.commit})`).join(', ')}\n`,
  );

  out(
    '| case | conns | req/s | p50 ms | p99 ms | max ms | errors | 5xx | RSS MB | CPU srv/db | srv ms/req | db ms/req |',
  );
  out('|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const first of runs[0].measurements) {
    const same = runs
      .map((run) =>
        run.measurements.find((m) => m.case === first.case && m.connections === first.connections),
      )
      .filter((m): m is Measurement => m !== undefined);
    if (same.length !== runs.length) {
      continue;
    }
    const med = (pick: (m: Measurement) => number, digits = 0) => median(same.map(pick)).toFixed(digits);
    const sum = (pick: (m: Measurement) => number) => same.reduce((total, m) => total + pick(m), 0);
    out(
      `| ${first.label} | ${first.connections} | ${med((m) => m.rps)} | ${med((m) => m.latencyMs.p50)} | ` +
        `${med((m) => m.latencyMs.p99)} | ${med((m) => m.latencyMs.max)} | ${sum((m) => m.errors + m.timeouts)} | ` +
        `${sum((m) => m.status5xx)} | ${Math.max(...same.map((m) => m.serverRssMb)).toFixed(0)} | ` +
        `${med((m) => m.cpu.serverCores, 2)}/${med((m) => m.cpu.databaseCores, 2)} | ` +
        `${med((m) => m.cpu.serverMsPerRequest, 2)} | ${med((m) => m.cpu.databaseMsPerRequest, 2)} |`,
    );
  }

  out('\n| target | bound | ' + runs.map((_, index) => `run ${index + 1}`).join(' | ') + ' | median | met |');
  out('|:--|:--|' + runs.map(() => '--:|').join('') + '--:|:--|');
  for (const target of runs[0].targets) {
    const values = runs.map(
      (run) => run.targets.find((t) => t.name === target.name)?.value ?? 'not measured',
    );
    const numbers = values.map(Number).filter((value) => Number.isFinite(value));
    if (numbers.length !== runs.length) {
      continue;
    }
    const mid = median(numbers);
    const [op, bound] = target.bound.split(' ');
    const limit = Number(bound);
    const met = op === '>=' ? mid >= limit : op === '<=' ? mid <= limit : op === '=' ? mid === limit : null;
    out(
      `| ${target.name} | ${target.bound} | ${values.join(' | ')} | ${mid.toFixed(2)} | ` +
        `${met === null ? '—' : met ? 'yes' : '**no**'} |`,
    );
  }
  out(
    `\nserver peak RSS (VmHWM), largest of the runs: ${Math.max(...runs.map((run) => run.peakRssMb)).toFixed(0)} MB`,
  );
}

main();
