import { readdirSync, readFileSync } from 'node:fs';

/** What the bench's processes use, read from /proc: CPU time, and resident memory. */

const TICK_MS = 10; // /proc times are in clock ticks of 1/100 s (getconf CLK_TCK) on Linux

/** CPU time a process has used (user + system), in ms, from /proc/<pid>/stat; 0 when it is gone. */
export function processCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/**
 * CPU time of each process named `postgres` on this machine (the server and its backends), in ms by pid; with
 * `postmasterPid` (--own-cluster), of that cluster alone: the postmaster and its children. A backend that exits inside
 * a window takes its time with it, so a delta is a slight undercount, never negative.
 */
export function postgresCpuMs(postmasterPid?: number): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) {
      continue;
    }
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') {
        continue;
      }
      const pid = Number(entry);
      if (postmasterPid !== undefined && pid !== postmasterPid && parentOf(pid) !== postmasterPid) {
        continue;
      }
      byPid.set(pid, processCpuMs(pid));
    } catch {
      // gone between the listing and the read
    }
  }
  return byPid;
}

/** The parent pid of a process, from /proc/<pid>/stat. */
function parentOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

/** A memory field of /proc/<pid>/status, in kB; 0 when the process is gone. */
function fieldOf(pid: number, name: 'VmRSS' | 'VmHWM'): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * Peak resident memory of a process, sampled from /proc: the peak inside a window, and VmHWM over its life. Of
 * several processes (the server's instances), the largest of them: each is a process of its own, with its own limit.
 */
export class RssSampler {
  private readonly timer: NodeJS.Timeout;
  private windowPeakKb = 0;

  constructor(private readonly pids: number[]) {
    this.timer = setInterval(() => this.sample(), 200);
    this.timer.unref();
  }

  private field(name: 'VmRSS' | 'VmHWM'): number {
    return Math.max(0, ...this.pids.map((pid) => fieldOf(pid, name)));
  }

  private sample(): void {
    this.windowPeakKb = Math.max(this.windowPeakKb, this.field('VmRSS'));
  }

  /** Starts a new window; returns the peak of the one that ends, in MB. */
  window(): number {
    this.sample();
    const peak = this.windowPeakKb;
    this.windowPeakKb = this.field('VmRSS');
    return peak / 1024;
  }

  /** The process's high-water mark since it started, in MB. */
  highWaterMb(): number {
    return this.field('VmHWM') / 1024;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
