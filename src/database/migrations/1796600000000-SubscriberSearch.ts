import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #32, search: `GET /subscribers?q=` finds a subscriber by name, email, phone, external id, address or a
 * service's PPPoE username. One trigram GIN over the subscriber's search text (the expression of searchTextSql in
 * src/subscribers/subscriber-search.ts, which must stay the same text for the planner to use it), one over the
 * lower-cased PPPoE usernames (provisioning's), and a btree for `?phone=`. The GIN indexes use an operator class
 * TypeORM cannot declare (entities: synchronize false), as the tickets' do.
 */
export class SubscriberSearch1796600000000 implements MigrationInterface {
  name = 'SubscriberSearch1796600000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(`CREATE EXTENSION IF NOT EXISTS pg_trgm`);
    await queryRunner.query(
      `CREATE INDEX "ix_subscribers_search_trgm" ON "subscribers" USING gin ((lower("full_name" || E'\\n' || coalesce("email", '') || E'\\n' || coalesce("phone", '') || E'\\n' || coalesce("external_id", '') || E'\\n' || coalesce("address" ->> 'line1', '') || E'\\n' || coalesce("address" ->> 'city', '') || E'\\n' || coalesce("address" ->> 'state', '') || E'\\n' || coalesce("address" ->> 'postal_code', ''))) gin_trgm_ops)`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_subscribers_tenant_phone_created" ON "subscribers" ("tenant_id", "phone", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_services_pppoe_username_trgm" ON "services" USING gin (lower("pppoe_username") gin_trgm_ops)`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "public"."ix_services_pppoe_username_trgm"`);
    await queryRunner.query(`DROP INDEX "public"."ix_subscribers_tenant_phone_created"`);
    await queryRunner.query(`DROP INDEX "public"."ix_subscribers_search_trgm"`);
  }
}
