import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import globalSetup from '../../support/global-setup';

/** The shared setup, plus one folder for the logs and secrets of the whole run (see log-capture.ts). */
export default async function reliabilitySetup(): Promise<void> {
  await globalSetup();
  process.env.RELIABILITY_LOG_DIR = mkdtempSync(join(tmpdir(), 'isp-reliability-logs-'));
}
