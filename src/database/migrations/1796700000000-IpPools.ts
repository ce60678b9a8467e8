import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue 33 item 1, IPAM: a tenant's IP pools (IPv4 addresses, IPv6 delegated prefixes; static ones the API hands out,
 * dynamic ones the NAS does), the allocations of their addresses to services (the primary key keeps two services from
 * one address), and a service's pools and delegated prefix.
 */
export class IpPools1796700000000 implements MigrationInterface {
  name = 'IpPools1796700000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE TABLE "ip_pools" ("tenant_id" text NOT NULL, "id" text NOT NULL, "name" text NOT NULL, "family" integer NOT NULL, "cidr" text NOT NULL, "gateway" text, "excluded" text array NOT NULL, "kind" text NOT NULL, "delegated_prefix_length" integer, "nas_id" text, "cooldown_s" integer NOT NULL, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_ip_pools_cooldown" CHECK ("cooldown_s" >= 0), CONSTRAINT "chk_ip_pools_family" CHECK ("family" IN (4, 6)), CONSTRAINT "chk_ip_pools_kind" CHECK ("kind" IN ('static', 'dynamic')), CONSTRAINT "PK_b02072d25407b853dafa93ca8a1" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX "uq_ip_pools_tenant_id" ON "ip_pools"  ("tenant_id", "id") `,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_ip_pools_name" ON "ip_pools"  ("tenant_id", "name") `);
    await queryRunner.query(
      `CREATE INDEX "ix_ip_pools_tenant_created" ON "ip_pools"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(
      `CREATE TABLE "ip_allocations" ("tenant_id" text NOT NULL, "pool_id" text NOT NULL, "address" text NOT NULL, "service_id" text NOT NULL, "allocated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "released_at" TIMESTAMP(3) WITH TIME ZONE, "available_at" TIMESTAMP(3) WITH TIME ZONE, CONSTRAINT "PK_7fe765b31579bd2bb624e032c73" PRIMARY KEY ("pool_id", "address"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_ip_allocations_tenant_service" ON "ip_allocations"  ("tenant_id", "service_id") `,
    );
    await queryRunner.query(`ALTER TABLE "services" ADD "ip_pool_id" text`);
    await queryRunner.query(`ALTER TABLE "services" ADD "ipv6_pool_id" text`);
    await queryRunner.query(`ALTER TABLE "services" ADD "delegated_ipv6_prefix" text`);
    await queryRunner.query(
      `ALTER TABLE "ip_pools" ADD CONSTRAINT "fk_ip_pools_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    await queryRunner.query(
      `ALTER TABLE "ip_allocations" ADD CONSTRAINT "fk_ip_allocations_pool" FOREIGN KEY ("tenant_id", "pool_id") REFERENCES "ip_pools"("tenant_id","id") ON DELETE CASCADE ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "ip_allocations" DROP CONSTRAINT "fk_ip_allocations_pool"`);
    await queryRunner.query(`ALTER TABLE "ip_pools" DROP CONSTRAINT "fk_ip_pools_tenant"`);
    await queryRunner.query(`ALTER TABLE "services" DROP COLUMN "delegated_ipv6_prefix"`);
    await queryRunner.query(`ALTER TABLE "services" DROP COLUMN "ipv6_pool_id"`);
    await queryRunner.query(`ALTER TABLE "services" DROP COLUMN "ip_pool_id"`);
    await queryRunner.query(`DROP INDEX "public"."ix_ip_allocations_tenant_service"`);
    await queryRunner.query(`DROP TABLE "ip_allocations"`);
    await queryRunner.query(`DROP INDEX "public"."ix_ip_pools_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_ip_pools_name"`);
    await queryRunner.query(`DROP INDEX "public"."uq_ip_pools_tenant_id"`);
    await queryRunner.query(`DROP TABLE "ip_pools"`);
  }
}
