import { closeSync, linkSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { StartupError } from '../common/startup-error';

export class DataDirInUseError extends StartupError {
  constructor(dataDir: string, pid: number) {
    super(
      `The data folder ${dataDir} is in use by another process (pid ${pid}). ` +
        'Stop the running server first, or point DATA_DIR at another folder.',
    );
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Folders this process has open: a second opener in the same process is refused like one in another process. */
const openHere = new Set<string>();

const sleep = (ms: number): void => void Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function readOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return null;
    }
    throw error;
  }
}

/**
 * Removes a lock that still holds `stale` (the pid of a dead process). Whoever creates `<lock>.break-<pid>` first
 * re-reads the lock and removes it only if it still holds that pid, so of several processes that saw the same dead
 * pid one removes it, and none removes the lock a winner has written since.
 */
function breakStaleLock(lockPath: string, stale: string): void {
  const claim = `${lockPath}.break-${stale.replace(/[^0-9]/g, '') || 'empty'}`;
  let fd: number;
  try {
    fd = openSync(claim, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw error;
    }
    return sleep(10); // another process is removing it: look again shortly
  }
  try {
    if (readOrNull(lockPath) === stale) {
      unlinkSync(lockPath);
    }
  } finally {
    closeSync(fd);
    unlinkSync(claim);
  }
}

/**
 * PGlite holds its files in one process only; a lock file turns a second opener into a clear error. The lock is
 * made complete (pid inside) under a private name and linked into place, which fails if one exists: it is never
 * seen empty, and of processes starting together exactly one links it.
 */
export function acquireLock(dataDir: string): string {
  if (openHere.has(dataDir)) {
    throw new DataDirInUseError(dataDir, process.pid);
  }
  const lockPath = join(dataDir, 'isp-api.lock');
  const mine = `${lockPath}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    for (let attempt = 0; attempt < 100; attempt++) {
      try {
        linkSync(mine, lockPath);
        openHere.add(dataDir);
        return lockPath;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
          throw error;
        }
      }
      const holder = readOrNull(lockPath);
      if (holder === null) {
        continue;
      } // released in between: try again
      const pid = Number(holder);
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DataDirInUseError(dataDir, pid);
      }
      breakStaleLock(lockPath, holder); // left behind by a process that died
    }
  } finally {
    rmSync(mine, { force: true });
  }
  throw new StartupError(
    `Could not lock the data folder ${dataDir}: if no server is running, delete ${lockPath} and ${lockPath}.break-*.`,
  );
}

export function releaseLock(dataDir: string | null, lockPath: string | null): void {
  if (!dataDir || !lockPath) {
    return;
  }
  rmSync(lockPath, { force: true });
  openHere.delete(dataDir);
}
