import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Page } from '../../common/envelope/envelope';
import { type ListNotificationsQueryDto, NotificationDetailDto } from '../dto/notification.dto';
import { NotificationsRepository } from '../notifications.repository';

/** GET /notifications and GET /notifications/{id}: each with its attempts. */
@Injectable()
export class NotificationsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly notifications: NotificationsRepository,
  ) {}

  async list(tenantId: string, query: ListNotificationsQueryDto): Promise<Page<NotificationDetailDto>> {
    const { manager } = this.dataSource;
    const page = await this.notifications.page(
      manager,
      tenantId,
      { subscriberId: query.subscriber_id, kinds: query.kind, statuses: query.status },
      query,
    );
    const attempts = await this.notifications.attempts(
      manager,
      tenantId,
      page.items.map((notification) => notification.id),
    );
    return page.map((notification) =>
      NotificationDetailDto.withAttempts(
        notification,
        attempts.filter((attempt) => attempt.notificationId === notification.id),
      ),
    );
  }

  async get(tenantId: string, id: string): Promise<NotificationDetailDto> {
    const { manager } = this.dataSource;
    const notification = await this.notifications.getById(manager, tenantId, id);
    return NotificationDetailDto.withAttempts(
      notification,
      await this.notifications.attempts(manager, tenantId, [id]),
    );
  }
}
