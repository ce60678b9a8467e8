import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * FreeRADIUS's accounting table `radacct` and its client table `nas`, in the layout of its PostgreSQL schema.sql
 * (columns lower-case), beside the tables of the Provisioning migration.
 */
const FREERADIUS_TABLES = [
  `CREATE TABLE IF NOT EXISTS "radacct" ("radacctid" bigserial PRIMARY KEY, "acctsessionid" text NOT NULL,
    "acctuniqueid" text NOT NULL UNIQUE, "username" text, "realm" text, "nasipaddress" inet NOT NULL, "nasportid" text,
    "nasporttype" text, "acctstarttime" timestamptz, "acctupdatetime" timestamptz, "acctstoptime" timestamptz,
    "acctinterval" bigint, "acctsessiontime" bigint, "acctauthentic" text, "connectinfo_start" text,
    "connectinfo_stop" text, "acctinputoctets" bigint, "acctoutputoctets" bigint, "calledstationid" text,
    "callingstationid" text, "acctterminatecause" text, "servicetype" text, "framedprotocol" text,
    "framedipaddress" inet, "framedipv6address" inet, "framedipv6prefix" inet, "framedinterfaceid" text,
    "delegatedipv6prefix" inet, "class" text)`,
  `CREATE INDEX IF NOT EXISTS "radacct_active_session_idx" ON "radacct" ("acctuniqueid") WHERE "acctstoptime" IS NULL`,
  `CREATE INDEX IF NOT EXISTS "radacct_bulk_close" ON "radacct" ("nasipaddress", "acctstarttime") WHERE "acctstoptime" IS NULL`,
  `CREATE INDEX IF NOT EXISTS "radacct_start_user_idx" ON "radacct" ("acctstarttime", "username")`,
  `CREATE INDEX IF NOT EXISTS "radacct_calss_idx" ON "radacct" ("class")`,
  // The API's reads: a username's sessions newest first, and its open ones.
  `CREATE INDEX IF NOT EXISTS "radacct_username_start" ON "radacct" ("username", "acctstarttime", "radacctid")`,
  `CREATE TABLE IF NOT EXISTS "nas" ("id" serial PRIMARY KEY, "nasname" text NOT NULL, "shortname" text NOT NULL,
    "type" text NOT NULL DEFAULT 'other', "ports" integer, "secret" text NOT NULL, "server" text, "community" text,
    "description" text)`,
  `CREATE INDEX IF NOT EXISTS "nas_nasname" ON "nas" ("nasname")`,
];

/**
 * Daily usage, which radacct cannot give (it keeps each session's running totals only): a trigger on radacct adds
 * what each accounting packet added to a session's octets to that session's row for the UTC day of the packet, so a
 * session that spans midnight counts on both days. It is the API's own table, written only by the trigger.
 */
const USAGE = [
  `CREATE TABLE IF NOT EXISTS "radacct_daily_usage" ("radacctid" bigint NOT NULL, "day" date NOT NULL,
    "bytes_in" bigint NOT NULL DEFAULT 0, "bytes_out" bigint NOT NULL DEFAULT 0, PRIMARY KEY ("radacctid", "day"))`,
  `CREATE OR REPLACE FUNCTION "radacct_daily_usage_add"() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      added_in bigint := greatest(coalesce(NEW.acctinputoctets, 0) -
        CASE WHEN TG_OP = 'UPDATE' THEN coalesce(OLD.acctinputoctets, 0) ELSE 0 END, 0);
      added_out bigint := greatest(coalesce(NEW.acctoutputoctets, 0) -
        CASE WHEN TG_OP = 'UPDATE' THEN coalesce(OLD.acctoutputoctets, 0) ELSE 0 END, 0);
      at timestamptz := coalesce(NEW.acctstoptime, NEW.acctupdatetime, NEW.acctstarttime, now());
    BEGIN
      IF added_in > 0 OR added_out > 0 THEN
        INSERT INTO radacct_daily_usage (radacctid, day, bytes_in, bytes_out)
        VALUES (NEW.radacctid, (at AT TIME ZONE 'UTC')::date, added_in, added_out)
        ON CONFLICT (radacctid, day) DO UPDATE
          SET bytes_in = radacct_daily_usage.bytes_in + EXCLUDED.bytes_in,
              bytes_out = radacct_daily_usage.bytes_out + EXCLUDED.bytes_out;
      END IF;
      RETURN NULL;
    END $$`,
  `DROP TRIGGER IF EXISTS "radacct_daily_usage" ON "radacct"`,
  `CREATE TRIGGER "radacct_daily_usage" AFTER INSERT OR UPDATE OF "acctinputoctets", "acctoutputoctets" ON "radacct"
    FOR EACH ROW EXECUTE FUNCTION "radacct_daily_usage_add"()`,
];

/**
 * Issue #17, the network with a real FreeRADIUS: the NAS registry (`nas_devices`, mirrored into FreeRADIUS's `nas`),
 * the outcome of Disconnect and CoA requests on orders, FreeRADIUS's accounting table and the daily usage it feeds.
 */
export class NetworkSessions1795900000000 implements MigrationInterface {
  name = 'NetworkSessions1795900000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    for (const sql of [...FREERADIUS_TABLES, ...USAGE]) {
      await queryRunner.query(sql);
    }
    await queryRunner.query(
      `CREATE TABLE "nas_devices" ("tenant_id" text NOT NULL, "id" text NOT NULL, "name" text NOT NULL, "ip" text NOT NULL, "secret" text NOT NULL, "type" text NOT NULL, "coa_port" integer NOT NULL, "description" text, "created_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_nas_devices_coa_port" CHECK ("coa_port" BETWEEN 1 AND 65535), CONSTRAINT "chk_nas_devices_type" CHECK ("type" IN ('mikrotik', 'cisco', 'juniper', 'huawei', 'other')), CONSTRAINT "PK_54eda873d168571202f06e767fc" PRIMARY KEY ("id"))`,
    );
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_nas_devices_ip" ON "nas_devices"  ("ip") `);
    await queryRunner.query(
      `CREATE INDEX "ix_nas_devices_tenant_created" ON "nas_devices"  ("tenant_id", "created_at", "id") `,
    );
    await queryRunner.query(`ALTER TABLE "provisioning_orders" ADD "disconnect" text`);
    await queryRunner.query(`ALTER TABLE "provisioning_orders" ADD "coa" text`);
    await queryRunner.query(
      `ALTER TABLE "nas_devices" ADD CONSTRAINT "fk_nas_devices_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "nas_devices" DROP CONSTRAINT "fk_nas_devices_tenant"`);
    await queryRunner.query(`ALTER TABLE "provisioning_orders" DROP COLUMN "coa"`);
    await queryRunner.query(`ALTER TABLE "provisioning_orders" DROP COLUMN "disconnect"`);
    await queryRunner.query(`DROP INDEX "public"."ix_nas_devices_tenant_created"`);
    await queryRunner.query(`DROP INDEX "public"."uq_nas_devices_ip"`);
    await queryRunner.query(`DROP TABLE "nas_devices"`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS "radacct_daily_usage" ON "radacct"`);
    await queryRunner.query(`DROP FUNCTION IF EXISTS "radacct_daily_usage_add"()`);
    await queryRunner.query(`DROP TABLE IF EXISTS "radacct_daily_usage"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "radacct"`);
    await queryRunner.query(`DROP TABLE IF EXISTS "nas"`);
  }
}
