import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue #35 (docs/performance.md, round three): the tenant-level aging rows a payment or an allocation upserts were
 * spread over 8 shards by the last character of the subscriber's id, and each stays locked until its transaction
 * commits, so at most 8 of a tenant's payments made progress at once and the rest queued on those rows. 64 shards,
 * by a hash of the whole id. The rows already written keep their shard: the reports sum every shard of a key, so
 * where a delta sits does not change a total, and no row needs rewriting.
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
