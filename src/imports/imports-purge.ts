import { Injectable } from '@nestjs/common';
import type { Tx } from '../database/transaction-runner';
import { ImportsRepository } from './imports.repository';

/** Deletes a test tenant's imports, their rows and errors (its test clock is deleted, docs/test-clocks.md). */
@Injectable()
export class ImportsPurge {
  constructor(private readonly imports: ImportsRepository) {}

  async purgeTenant(tx: Tx, tenantId: string): Promise<void> {
    // import_rows go with their import (ON DELETE CASCADE).
    await this.imports.purgeTenant(tx.manager, tenantId);
  }
}
