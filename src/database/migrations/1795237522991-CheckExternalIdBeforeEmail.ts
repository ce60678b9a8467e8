import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Postgres checks unique indexes in creation order. A resent record repeating both external_id and email must be
 * reported as the external_id duplicate (the README's "Subscribers": 409 duplicate_subscriber, field external_id), so
 * the email index is recreated after the external_id one.
 */
export class CheckExternalIdBeforeEmail1795237522991 implements MigrationInterface {
  name = 'CheckExternalIdBeforeEmail1795237522991';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."uq_subscribers_email"`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_subscribers_email" ON "subscribers" ("tenant_id", "email_normalized") WHERE "status" <> 'archived' AND "email_normalized" IS NOT NULL`,
    );
  }

  public async down(): Promise<void> {
    // The index is the same; only its position among the table's indexes changed.
  }
}
