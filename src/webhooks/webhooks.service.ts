import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { assertIfMatch } from '../common/http/etag';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { Page } from '../common/envelope/envelope';
import { ApiError } from '../common/errors/api-error';
import { newId } from '../common/ids';
import { PageQueryDto } from '../common/pagination';
import { APP_CONFIG, type AppConfig } from '../config/app-config';
import type { AuthContext } from '../common/request-context';
import { TransactionRunner, type Tx } from '../database/transaction-runner';
import { EventRecord, EventsService } from '../events';
import { assertPublicHost, ForbiddenAddressError, hostOf } from './callback-address';
import {
  CreateWebhookDto,
  RedeliveryDto,
  UpdateWebhookDto,
  WebhookDto,
  WebhookTestDto,
  WebhookWithSecretDto,
} from './dto/webhook.dto';
import { ListDeliveriesQueryDto } from './dto/webhook-delivery.dto';
import { generateWebhookSecret } from './signing';
import { WebhookWorker } from './webhook-worker';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { DeliveryStatus, Webhook, WebhookAttempt, WebhookDelivery } from './webhook.entity';
import { WebhooksRepository } from './webhooks.repository';

const SECRET_GRACE_MS = 24 * 60 * 60 * 1000;

@Injectable()
export class WebhooksService implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly transactionRunner: TransactionRunner,
    private readonly events: EventsService,
    private readonly worker: WebhookWorker,
    private readonly webhooks: WebhooksRepository,
    private readonly webhookDeliveries: WebhookDeliveriesRepository,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    // Deliveries are queued by the event's own statement (WebhooksOutbox's fan-out); the worker wakes once that commits.
    this.events.onDeliveriesQueued(() => this.worker.wake());
  }

  async create(auth: AuthContext, dto: CreateWebhookDto): Promise<WebhookWithSecretDto> {
    const { tenantId } = auth;
    await this.assertCallbackUrl(dto.url);
    return this.transactionRunner.run(auth, async (tx) => {
      const now = this.clock.now();
      const webhook = Object.assign(new Webhook(), {
        id: newId('whk', now),
        tenantId,
        url: dto.url,
        events: [...new Set(dto.events)],
        description: dto.description ?? null,
        enabled: dto.enabled ?? true,
        disabledReason: null,
        secret: generateWebhookSecret(),
        previousSecret: null,
        previousSecretExpiresAt: null,
        failingSince: null,
        createdAt: now,
        updatedAt: now,
      });
      await this.webhooks.insert(tx.manager, webhook);
      await this.events.append(tx, {
        tenantId,
        type: 'webhook.created',
        subjectId: webhook.id,
        object: WebhookDto.from(webhook),
      });
      return WebhookWithSecretDto.from(webhook);
    });
  }

  async update(auth: AuthContext, id: string, dto: UpdateWebhookDto): Promise<Webhook> {
    const { tenantId } = auth;
    if (dto.url !== undefined) {
      await this.assertCallbackUrl(dto.url);
    }
    return this.transactionRunner.run(auth, async (tx) => {
      const { manager } = tx;
      const webhook = await this.webhooks.lockForUpdate(manager, tenantId, id);
      await assertIfMatch(() => WebhookDto.from(webhook));
      if (dto.url !== undefined) {
        webhook.url = dto.url;
      }
      if (dto.events !== undefined) {
        webhook.events = [...new Set(dto.events)];
      }
      if (dto.description !== undefined) {
        webhook.description = dto.description;
      }
      const disabling = dto.enabled === false && webhook.enabled;
      if (dto.enabled !== undefined) {
        webhook.enabled = dto.enabled;
        webhook.disabledReason = dto.enabled ? null : 'disabled by request';
        if (dto.enabled) {
          webhook.failingSince = null;
        }
      }
      webhook.updatedAt = this.clock.now();
      await this.webhooks.update(manager, webhook);
      if (disabling) {
        await this.webhookDeliveries.cancelPending(manager, tenantId, webhook.id);
      }
      await this.events.append(tx, {
        tenantId,
        type: 'webhook.updated',
        subjectId: webhook.id,
        object: WebhookDto.from(webhook),
      });
      if (webhook.enabled) {
        tx.afterCommit(() => this.worker.wake());
      }
      return webhook;
    });
  }

  remove(auth: AuthContext, id: string): Promise<Webhook> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const { manager } = tx;
      const webhook = await this.webhooks.lockForUpdate(manager, tenantId, id);
      await assertIfMatch(() => WebhookDto.from(webhook));
      await this.webhookDeliveries.deleteForWebhook(manager, tenantId, id);
      await this.webhooks.delete(manager, tenantId, id);
      await this.events.append(tx, {
        tenantId,
        type: 'webhook.deleted',
        subjectId: webhook.id,
        object: WebhookDto.from(webhook),
      });
      return webhook;
    });
  }

  /** A new secret; the old one keeps signing beside it for 24 h so receivers can switch without losing events. */
  rotateSecret(auth: AuthContext, id: string): Promise<Webhook> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const { manager } = tx;
      const webhook = await this.webhooks.lockForUpdate(manager, tenantId, id);
      await assertIfMatch(() => WebhookDto.from(webhook));
      webhook.previousSecret = webhook.secret;
      const now = this.clock.now();
      webhook.previousSecretExpiresAt = new Date(now.getTime() + SECRET_GRACE_MS);
      webhook.secret = generateWebhookSecret();
      webhook.updatedAt = now;
      await this.webhooks.update(manager, webhook);
      await this.events.append(tx, {
        tenantId,
        type: 'webhook.secret_rotated',
        subjectId: webhook.id,
        object: WebhookDto.from(webhook),
      });
      return webhook;
    });
  }

  /** Sends a `webhook.test` event to this endpoint alone. */
  sendTest(auth: AuthContext, id: string): Promise<WebhookTestDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const webhook = await this.webhooks.lockForUpdate(tx.manager, tenantId, id);
      this.assertEnabled(webhook);
      const event = await this.events.append(
        tx,
        { tenantId, type: 'webhook.test', subjectId: webhook.id, object: WebhookDto.from(webhook) },
        { fanOut: false },
      );
      const delivery = await this.queueDelivery(tx, event, webhook.id);
      tx.afterCommit(() => this.worker.wake());
      return { event_id: event.id, delivery_id: delivery.id };
    });
  }

  /** Sends the event of a past delivery again, as a new delivery with a fresh attempt count. */
  redeliver(auth: AuthContext, deliveryId: string): Promise<RedeliveryDto> {
    const { tenantId } = auth;
    return this.transactionRunner.run(auth, async (tx) => {
      const original = await this.webhookDeliveries.getById(tx.manager, tenantId, deliveryId);
      this.assertEnabled(await this.webhooks.lockForUpdate(tx.manager, tenantId, original.webhookId));
      const delivery = await this.queueDelivery(
        tx,
        { id: original.eventId, type: original.eventType, tenantId },
        original.webhookId,
      );
      tx.afterCommit(() => this.worker.wake());
      return {
        id: delivery.id,
        webhook_id: delivery.webhookId,
        event_id: delivery.eventId,
        status: delivery.status,
      };
    });
  }

  getById(tenantId: string, id: string): Promise<Webhook> {
    return this.webhooks.getById(this.dataSource.manager, tenantId, id);
  }

  list(tenantId: string, query: PageQueryDto): Promise<Page<Webhook>> {
    return this.webhooks.page(this.dataSource.manager, tenantId, query);
  }

  async attempts(tenantId: string, webhookId: string, query: PageQueryDto): Promise<Page<WebhookAttempt>> {
    await this.getById(tenantId, webhookId);
    return this.webhookDeliveries.attemptsPage(this.dataSource.manager, tenantId, webhookId, query);
  }

  /** The deliveries of a subscription, newest first, with their status (`cancelled` ones included). */
  async deliveries(tenantId: string, query: ListDeliveriesQueryDto): Promise<Page<WebhookDelivery>> {
    await this.getById(tenantId, query.webhook_id);
    const filter = { webhookId: query.webhook_id, statuses: query.status };
    return this.webhookDeliveries.page(this.dataSource.manager, tenantId, filter, query);
  }

  /** A disabled subscription takes no deliveries; queueing one that would never go out is refused. */
  private assertEnabled(webhook: Webhook): void {
    if (!webhook.enabled) {
      throw new ApiError(
        'invalid_state_transition',
        `The webhook is disabled${webhook.disabledReason ? ` (${webhook.disabledReason})` : ''}; enable it first.`,
      );
    }
  }

  /** A new pending delivery, due at the database's now() (the clock the worker's claim reads). */
  private async queueDelivery(
    tx: Tx,
    event: Pick<EventRecord, 'id' | 'type' | 'tenantId'>,
    webhookId: string,
  ): Promise<WebhookDelivery> {
    const now = this.clock.now();
    const delivery = Object.assign(new WebhookDelivery(), {
      id: newId('dlv', now),
      tenantId: event.tenantId,
      webhookId,
      eventId: event.id,
      eventType: event.type,
      status: DeliveryStatus.Pending,
      attempts: 0,
      nextAttemptAt: now,
      lockedUntil: null,
      createdAt: now,
      updatedAt: now,
    });
    await this.webhookDeliveries.insert(tx.manager, delivery);
    return delivery;
  }

  /** https only (unless WEBHOOK_ALLOW_INSECURE), and no host that resolves to a private address (unless allowed). */
  private async assertCallbackUrl(raw: string): Promise<void> {
    const url = new URL(raw);
    if (url.protocol !== 'https:' && !this.config.webhooks.allowInsecure) {
      throw new ApiError('validation_failed', 'url must use https.', 'url');
    }
    if (url.username || url.password) {
      throw new ApiError('validation_failed', 'url must not carry credentials.', 'url');
    }
    if (this.config.webhooks.allowPrivate) {
      return;
    }
    try {
      await assertPublicHost(hostOf(url));
    } catch (error) {
      const reason =
        error instanceof ForbiddenAddressError ? error.message : `${hostOf(url)} does not resolve`;
      throw new ApiError('validation_failed', `url is not allowed: ${reason}.`, 'url');
    }
  }
}
