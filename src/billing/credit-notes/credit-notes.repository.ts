import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Page } from '../../common/envelope/envelope';
import { ApiError } from '../../common/errors/api-error';
import { paginate } from '../../common/pagination';
import { CreditNote } from './credit-note.entity';
import type { ListCreditNotesQueryDto } from './dto/credit-note.dto';

/** The only place the credit_notes table is read and written. */
@Injectable()
export class CreditNotesRepository {
  async insert(manager: EntityManager, row: CreditNote): Promise<CreditNote> {
    const note = manager.create(CreditNote, row);
    await manager.insert(CreditNote, note);
    return note;
  }

  async getById(manager: EntityManager, tenantId: string, id: string): Promise<CreditNote> {
    const note = await manager.findOneBy(CreditNote, { tenantId, id });
    if (!note) {
      throw ApiError.notFound('credit_note', id);
    }
    return note;
  }

  /** The credit notes of an invoice, oldest first (the caller holds the invoice's lock, so none is added meanwhile). */
  ofInvoice(manager: EntityManager, tenantId: string, invoiceId: string): Promise<CreditNote[]> {
    return manager.find(CreditNote, {
      where: { tenantId, invoiceId },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
  }

  page(manager: EntityManager, tenantId: string, query: ListCreditNotesQueryDto): Promise<Page<CreditNote>> {
    const qb = manager
      .getRepository(CreditNote)
      .createQueryBuilder('note')
      .where('note.tenantId = :tenantId', { tenantId });
    if (query.invoice_id) {
      qb.andWhere('note.invoiceId = :invoiceId', { invoiceId: query.invoice_id });
    }
    if (query.subscriber_id) {
      qb.andWhere('note.subscriberId = :subscriberId', { subscriberId: query.subscriber_id });
    }
    return paginate(qb, query);
  }

  /** Deletes every credit_notes row of the tenant: its test clock is deleted (docs/test-clocks.md). */
  async purgeTenant(manager: EntityManager, tenantId: string): Promise<void> {
    await manager.query('DELETE FROM credit_notes WHERE tenant_id = $1', [tenantId]);
  }
}
