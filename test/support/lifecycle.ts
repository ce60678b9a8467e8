import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * What a describe block makes and must clean up: its temporary directories, and the servers or hosts its tests start.
 * Each helper registers its hook where it is called, in the describe block's body.
 */

/** A function answering a fresh temporary directory (`prefix` in its name) per call; all removed after the block. */
export function tempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
}

/**
 * A list for what each test starts: after the test, every one still in it is taken out and stopped with `stop`
 * (the hook allowed `timeout` ms).
 */
export function stoppedAfterEach<T>(stop: (started: T) => Promise<unknown>, timeout: number): T[] {
  const started: T[] = [];
  afterEach(async () => {
    for (const each of started.splice(0)) {
      await stop(each);
    }
  }, timeout);
  return started;
}
