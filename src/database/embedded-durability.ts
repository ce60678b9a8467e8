import { PGlite } from '@electric-sql/pglite';
import { closeSync, fsyncSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * PGlite's start parameters less `-F` (fsync=off), with the write-ahead log flushed by fsync(): in PGlite's WASM
 * build fdatasync() (Postgres' default on Linux) is a no-op, while fsync() reaches the file system's `fsync`.
 */
export const DURABLE_START_PARAMS = [
  ...PGlite.defaultStartParams.filter((param) => param !== '-F'),
  '-c',
  'wal_sync_method=fsync',
];

interface NodeFsInternals {
  stream_ops?: { fsync?: (stream: { nfd?: number }) => number };
  tryFSOperation?: (operation: () => void) => void;
}

/**
 * Emscripten's NODEFS writes through to the real files but has no `fsync`: Postgres' fsync calls return without
 * reaching the disk. This gives it one that calls fs.fsyncSync (errors become errno, so Postgres PANICs on EIO as it
 * would natively). False when PGlite's internals are not as expected; the database then runs without it.
 */
export function enableFsync(db: PGlite): boolean {
  const fs = db.Module.FS as unknown as { filesystems?: { NODEFS?: NodeFsInternals } };
  const nodefs = fs.filesystems?.NODEFS;
  const tryFSOperation = nodefs?.tryFSOperation;
  if (!nodefs?.stream_ops || !tryFSOperation) {
    return false;
  }
  nodefs.stream_ops.fsync = (stream) => {
    if (stream.nfd !== undefined) {
      tryFSOperation(() => fsyncSync(stream.nfd!));
    }
    return 0;
  };
  return true;
}

/** Flushes every file and folder under `dir`: what PGlite wrote before fsync was enabled (initdb, recovery). */
export function fsyncTree(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      fsyncTree(join(dir, entry.name));
    } else if (entry.isFile()) {
      fsyncPath(join(dir, entry.name));
    }
  }
  fsyncPath(dir);
}

/** Flushes one file or folder (a folder's entries: the names of the files in it). */
export function fsyncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
