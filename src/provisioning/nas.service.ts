import { Injectable } from '@nestjs/common';
import { assertIfMatch } from '../common/http/etag';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { isUniqueViolation } from '../common/errors/postgres-errors';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventsService } from '../events';
import { CreateNasDto, ListNasQueryDto, NasDto, UpdateNasDto } from './dto/nas.dto';
import { NasRepository } from './nas.repository';
import { NasDevice, type NasType } from './provisioning.entity';
import { RadiusRepository } from './radius.repository';
import { IpPoolsRepository } from './ipam/ip-pools.repository';

function writeError(error: unknown): ApiError | null {
  return isUniqueViolation(error, 'uq_nas_devices_ip')
    ? new ApiError('duplicate_nas', 'A NAS with this address is already registered.', 'ip')
    : null;
}

const FIELDS = [
  ['name', 'name'],
  ['ip', 'ip'],
  ['secret', 'secret'],
  ['type', 'type'],
  ['coa_port', 'coaPort'],
  ['description', 'description'],
] as const;

/**
 * The NAS registry: each router is a row of nas_devices and a client of FreeRADIUS in its `nas` table, written
 * together (FreeRADIUS reads its clients when it starts: docs/network.md). Its secret is write-only.
 */
@Injectable()
export class NasService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly nas: NasRepository,
    private readonly radius: RadiusRepository,
    private readonly clock: Clock,
    private readonly pools: IpPoolsRepository,
  ) {}

  async create(auth: AuthContext, dto: CreateNasDto): Promise<NasDto> {
    const now = this.clock.now();
    const nas = Object.assign(new NasDevice(), {
      tenantId: auth.tenantId,
      id: newId('nas', now),
      name: dto.name,
      ip: dto.ip,
      secret: dto.secret,
      type: dto.type as NasType,
      coaPort: dto.coa_port,
      description: dto.description ?? null,
      createdAt: now,
      updatedAt: now,
    });
    try {
      return await this.transactionRunner.run(auth, async (tx) => {
        await this.nas.insert(tx.manager, nas);
        await this.writeClient(tx, nas, null);
        return this.emit(tx, nas, 'nas.created');
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  async get(tenantId: string, id: string): Promise<NasDevice> {
    const nas = await this.nas.findById(this.dataSource.manager, tenantId, id);
    if (!nas) {
      throw ApiError.notFound('NAS', id);
    }
    return nas;
  }

  list(tenantId: string, query: ListNasQueryDto): Promise<Page<NasDevice>> {
    return this.nas.page(this.dataSource.manager, tenantId, query);
  }

  async update(auth: AuthContext, id: string, dto: UpdateNasDto): Promise<NasDto> {
    try {
      return await this.transactionRunner.run(auth, async (tx) => {
        const nas = await this.nas.lockForUpdate(tx.manager, auth.tenantId, id);
        await assertIfMatch(() => NasDto.from(nas));
        const previousIp = nas.ip;
        const next = {
          name: dto.name ?? nas.name,
          ip: dto.ip ?? nas.ip,
          secret: dto.secret ?? nas.secret,
          type: (dto.type as NasType | undefined) ?? nas.type,
          coaPort: dto.coa_port ?? nas.coaPort,
          description: dto.description === undefined ? nas.description : dto.description,
        };
        const changed = FIELDS.filter(([, key]) => next[key] !== nas[key]);
        if (changed.length === 0) {
          return NasDto.from(nas);
        }
        Object.assign(nas, next, { updatedAt: this.clock.now() });
        await this.nas.update(tx.manager, nas);
        await this.writeClient(tx, nas, previousIp === nas.ip ? null : previousIp);
        // The event names a changed secret (never its value).
        return this.emit(tx, nas, 'nas.updated', { changed_fields: changed.map(([field]) => field) });
      });
    } catch (error) {
      throw writeError(error) ?? error;
    }
  }

  remove(auth: AuthContext, id: string): Promise<NasDto> {
    return this.transactionRunner.run(auth, async (tx) => {
      const nas = await this.nas.lockForUpdate(tx.manager, auth.tenantId, id);
      await assertIfMatch(() => NasDto.from(nas));
      await this.nas.delete(tx.manager, auth.tenantId, id);
      await this.pools.clearNas(tx.manager, auth.tenantId, id);
      await this.radius.writeClient(tx.manager, nas.ip, null);
      return this.emit(tx, nas, 'nas.deleted');
    });
  }

  private writeClient(tx: Tx, nas: NasDevice, previousIp: string | null): Promise<void> {
    return this.radius.writeClient(
      tx.manager,
      nas.ip,
      { shortname: nas.name, type: nas.type, secret: nas.secret, description: nas.id },
      previousIp,
    );
  }

  private async emit(
    tx: Tx,
    nas: NasDevice,
    type: 'nas.created' | 'nas.updated' | 'nas.deleted',
    details?: Record<string, unknown>,
  ): Promise<NasDto> {
    const answer = NasDto.from(nas);
    await this.events.append(tx, {
      tenantId: nas.tenantId,
      type,
      subjectId: nas.id,
      object: answer,
      details,
    });
    return answer;
  }
}
