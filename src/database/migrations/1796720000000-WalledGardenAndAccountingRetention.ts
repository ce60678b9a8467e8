import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The daily usage stands on its own (issue 33, accounting at scale): each row carries its session's username and
 * start, so `GET /services/{id}/usage` reads it without radacct, and radacct's old closed sessions can be pruned
 * (RADACCT_RETENTION_DAYS) with the daily usage kept. The trigger writes both columns; a session whose start or
 * username FreeRADIUS corrects later (a Start after its Interim-Update) has its earlier days corrected too.
 */
const USAGE = [
  `ALTER TABLE "radacct_daily_usage" ADD COLUMN IF NOT EXISTS "username" text`,
  `ALTER TABLE "radacct_daily_usage" ADD COLUMN IF NOT EXISTS "acctstarttime" timestamptz`,
  `UPDATE "radacct_daily_usage" u SET "username" = r."username", "acctstarttime" = r."acctstarttime"
     FROM "radacct" r WHERE r."radacctid" = u."radacctid"`,
  `CREATE INDEX IF NOT EXISTS "radacct_daily_usage_username_day" ON "radacct_daily_usage" ("username", "day")`,
  `CREATE OR REPLACE FUNCTION "radacct_daily_usage_add"() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      added_in bigint := greatest(coalesce(NEW.acctinputoctets, 0) -
        CASE WHEN TG_OP = 'UPDATE' THEN coalesce(OLD.acctinputoctets, 0) ELSE 0 END, 0);
      added_out bigint := greatest(coalesce(NEW.acctoutputoctets, 0) -
        CASE WHEN TG_OP = 'UPDATE' THEN coalesce(OLD.acctoutputoctets, 0) ELSE 0 END, 0);
      at timestamptz := coalesce(NEW.acctstoptime, NEW.acctupdatetime, NEW.acctstarttime, now());
    BEGIN
      IF TG_OP = 'UPDATE' AND (NEW.username IS DISTINCT FROM OLD.username
          OR NEW.acctstarttime IS DISTINCT FROM OLD.acctstarttime) THEN
        UPDATE radacct_daily_usage SET username = NEW.username, acctstarttime = NEW.acctstarttime
         WHERE radacctid = NEW.radacctid;
      END IF;
      IF added_in > 0 OR added_out > 0 THEN
        INSERT INTO radacct_daily_usage (radacctid, day, bytes_in, bytes_out, username, acctstarttime)
        VALUES (NEW.radacctid, (at AT TIME ZONE 'UTC')::date, added_in, added_out, NEW.username, NEW.acctstarttime)
        ON CONFLICT (radacctid, day) DO UPDATE
          SET bytes_in = radacct_daily_usage.bytes_in + EXCLUDED.bytes_in,
              bytes_out = radacct_daily_usage.bytes_out + EXCLUDED.bytes_out;
      END IF;
      RETURN NULL;
    END $$`,
  `DROP TRIGGER IF EXISTS "radacct_daily_usage" ON "radacct"`,
  `CREATE TRIGGER "radacct_daily_usage" AFTER INSERT OR UPDATE OF "acctinputoctets", "acctoutputoctets", "username",
    "acctstarttime" ON "radacct" FOR EACH ROW EXECUTE FUNCTION "radacct_daily_usage_add"()`,
  // The retention worker's batches: the oldest closed sessions first, open ones never in the index.
  `CREATE INDEX IF NOT EXISTS "radacct_closed_stop" ON "radacct" ("acctstoptime") WHERE "acctstoptime" IS NOT NULL`,
];

/**
 * Suspended usernames move from the shared group `suspended` to their tenant's `suspended:<slug>` (the realm of the
 * username), whose rows say what a suspended login gets under the tenant's suspension mode: every tenant rejects
 * until it chooses the walled garden, so each such group starts with the reject rows.
 */
const SUSPENDED_GROUPS = [
  `INSERT INTO "radgroupcheck" ("groupname", "attribute", "op", "value")
   SELECT DISTINCT 'suspended:' || split_part("username", '/', 1), 'Auth-Type', ':=', 'Reject' FROM "radusergroup"
    WHERE "groupname" = 'suspended' AND position('/' IN "username") > 1 AND NOT EXISTS (
      SELECT 1 FROM "radgroupcheck" c WHERE c."groupname" = 'suspended:' || split_part("username", '/', 1))`,
  `INSERT INTO "radgroupreply" ("groupname", "attribute", "op", "value")
   SELECT DISTINCT 'suspended:' || split_part("username", '/', 1), 'Reply-Message', ':=', 'Service suspended'
     FROM "radusergroup"
    WHERE "groupname" = 'suspended' AND position('/' IN "username") > 1 AND NOT EXISTS (
      SELECT 1 FROM "radgroupreply" c WHERE c."groupname" = 'suspended:' || split_part("username", '/', 1))`,
  `UPDATE "radusergroup" SET "groupname" = 'suspended:' || split_part("username", '/', 1)
    WHERE "groupname" = 'suspended' AND position('/' IN "username") > 1`,
];

/** Issue #33 items 4 and 5: the walled garden (network_settings, per-tenant suspended groups) and radacct's retention. */
export class WalledGardenAndAccountingRetention1796720000000 implements MigrationInterface {
  name = 'WalledGardenAndAccountingRetention1796720000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    await queryRunner.query(
      `CREATE TABLE "network_settings" ("tenant_id" text NOT NULL, "suspension_mode" text NOT NULL, "payment_page_url" text, "walled_garden_address_list" text NOT NULL, "walled_garden_filter_id" text NOT NULL, "version" integer NOT NULL, "applied_version" integer NOT NULL, "lease_until" TIMESTAMP(3) WITH TIME ZONE, "applied_at" TIMESTAMP(3) WITH TIME ZONE, "updated_at" TIMESTAMP(3) WITH TIME ZONE NOT NULL, CONSTRAINT "chk_network_settings_walled_garden" CHECK ("suspension_mode" <> 'walled_garden' OR "payment_page_url" IS NOT NULL), CONSTRAINT "chk_network_settings_mode" CHECK ("suspension_mode" IN ('reject', 'walled_garden')), CONSTRAINT "PK_b51cdf20e2f3cc90bcacf177792" PRIMARY KEY ("tenant_id"))`,
    );
    await queryRunner.query(
      `CREATE INDEX "ix_network_settings_pending" ON "network_settings"  ("tenant_id") WHERE "version" > "applied_version"`,
    );
    await queryRunner.query(
      `ALTER TABLE "network_settings" ADD CONSTRAINT "fk_network_settings_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants"("id") ON DELETE NO ACTION ON UPDATE NO ACTION`,
    );
    for (const sql of [...USAGE, ...SUSPENDED_GROUPS]) {
      await queryRunner.query(sql);
    }
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `UPDATE "radusergroup" SET "groupname" = 'suspended' WHERE "groupname" LIKE 'suspended:%'`,
    );
    await queryRunner.query(`DELETE FROM "radgroupcheck" WHERE "groupname" LIKE 'suspended:%'`);
    await queryRunner.query(`DELETE FROM "radgroupreply" WHERE "groupname" LIKE 'suspended:%'`);
    await queryRunner.query(`DROP INDEX IF EXISTS "radacct_closed_stop"`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS "radacct_daily_usage" ON "radacct"`);
    // The function of 1795900000000-NetworkSessions: the added octets only.
    await queryRunner.query(
      USAGE[4]
        .replace(/\n\s*IF TG_OP = 'UPDATE' AND \(NEW\.username[\s\S]*?END IF;/, '')
        .replace(', username, acctstarttime)', ')')
        .replace(', NEW.username, NEW.acctstarttime)', ')'),
    );
    await queryRunner.query(
      `CREATE TRIGGER "radacct_daily_usage" AFTER INSERT OR UPDATE OF "acctinputoctets", "acctoutputoctets" ON "radacct"
        FOR EACH ROW EXECUTE FUNCTION "radacct_daily_usage_add"()`,
    );
    await queryRunner.query(`DROP INDEX IF EXISTS "radacct_daily_usage_username_day"`);
    await queryRunner.query(`ALTER TABLE "radacct_daily_usage" DROP COLUMN "acctstarttime"`);
    await queryRunner.query(`ALTER TABLE "radacct_daily_usage" DROP COLUMN "username"`);
    await queryRunner.query(`ALTER TABLE "network_settings" DROP CONSTRAINT "fk_network_settings_tenant"`);
    await queryRunner.query(`DROP INDEX "public"."ix_network_settings_pending"`);
    await queryRunner.query(`DROP TABLE "network_settings"`);
  }
}
