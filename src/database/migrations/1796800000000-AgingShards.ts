import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #35 (docs/performance.md, round three): the tenant-level aging rows a payment or an allocation upserts
 * (`aging_days`, `aging_credit_days`) stay locked until the transaction commits. They were spread over 8 shards by the
 * last character of the subscriber's id, so two payments of a tenant collided whenever their subscribers did, and the
 * bench's pg_stat_statements found a payment spending most of its database time queued on those upserts. Now 64
 * shards by a hash of the whole id, still a function of the subscriber, so the tables stay equal to their rebuild.
 * The reports sum every shard of a key; the rows already written keep theirs.
 */
export class AgingShards1796800000000 implements MigrationInterface {
  name = 'AgingShards1796800000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE OR REPLACE FUNCTION "aging_shard"(subscriber text) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
         SELECT (abs(hashtext(subscriber)::bigint) % 64)::smallint $$`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE OR REPLACE FUNCTION "aging_shard"(subscriber text) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
         SELECT (ascii(right(subscriber, 1)) % 8)::smallint $$`,
    );
  }
}
