import { MigrationInterface, QueryRunner } from 'typeorm';

/** A UTC day of a timestamp expression. */
const DAY = (expression: string) => `(${expression} AT TIME ZONE 'UTC')::date`;

/**
 * When an issued invoice stopped being payable (paid, voided, written off; its finalisation for such a row without the
 * instant, which the report never counted open); null while it is payable.
 */
const ENDED_AT = (i: string) =>
  `COALESCE(CASE ${i}.status WHEN 'paid' THEN ${i}.paid_at WHEN 'void' THEN ${i}.voided_at WHEN 'written_off' THEN ${i}.written_off_at END, CASE WHEN ${i}.status IN ('paid', 'void', 'written_off') THEN ${i}.finalized_at END)`;

/**
 * The tables, the functions that write them and the triggers that call them (docs/reports.md, "How the reports are
 * kept": aging). Every delta is dated by the row's own timestamp (the app's Clock, moved by test clocks), never now().
 */
const SCHEMA = [
  `CREATE TABLE "aging_days" ("tenant_id" text NOT NULL, "currency" text NOT NULL, "due_date" date NOT NULL, "day" date NOT NULL, "shard" smallint NOT NULL, "open_amount" bigint NOT NULL DEFAULT 0, "invoices" integer NOT NULL DEFAULT 0, CONSTRAINT "PK_aging_days" PRIMARY KEY ("tenant_id", "currency", "due_date", "day", "shard"))`,
  `CREATE TABLE "aging_credit_days" ("tenant_id" text NOT NULL, "currency" text NOT NULL, "day" date NOT NULL, "shard" smallint NOT NULL, "unapplied" bigint NOT NULL DEFAULT 0, "subscribers" integer NOT NULL DEFAULT 0, CONSTRAINT "PK_aging_credit_days" PRIMARY KEY ("tenant_id", "currency", "day", "shard"))`,
  `CREATE TABLE "aging_subscriber_days" ("tenant_id" text NOT NULL, "subscriber_id" text NOT NULL, "currency" text NOT NULL, "day" date NOT NULL, "invoices" integer NOT NULL DEFAULT 0, "unapplied" bigint NOT NULL DEFAULT 0, "debtor" smallint NOT NULL DEFAULT 0, CONSTRAINT "PK_aging_subscriber_days" PRIMARY KEY ("tenant_id", "subscriber_id", "currency", "day"))`,
  `CREATE INDEX "ix_aging_subscriber_days_debtor" ON "aging_subscriber_days" ("tenant_id", "subscriber_id", "day") INCLUDE ("debtor") WHERE "debtor" <> 0`,
  // The tenant-level rows a payment writes are spread over 8 shards by the subscriber's id, so that concurrent payments
  // of one tenant on one day do not all queue on one row's lock.
  `CREATE OR REPLACE FUNCTION "aging_shard"(subscriber text) RETURNS smallint LANGUAGE sql IMMUTABLE AS $$
     SELECT (ascii(right(subscriber, 1)) % 8)::smallint $$`,
  // A subscriber's invoices open and money unapplied move on a day; its debtor steps are recomputed from its own rows
  // (a subscriber owes or holds credit at the end of a day when its open invoices or unapplied money sum above 0 up
  // to it), and the tenant's count of debtors moves by the difference.
  `CREATE OR REPLACE FUNCTION "aging_subscriber_add"(t text, s text, c text, d date, n integer, u bigint)
     RETURNS void LANGUAGE plpgsql AS $$
     BEGIN
       IF n = 0 AND u = 0 THEN
         RETURN;
       END IF;
       PERFORM pg_advisory_xact_lock(hashtext('aging ' || t || ' ' || s || ' ' || c));
       INSERT INTO aging_subscriber_days (tenant_id, subscriber_id, currency, day, invoices, unapplied)
       VALUES (t, s, c, d, n, u)
       ON CONFLICT (tenant_id, subscriber_id, currency, day) DO UPDATE
         SET invoices = aging_subscriber_days.invoices + EXCLUDED.invoices,
             unapplied = aging_subscriber_days.unapplied + EXCLUDED.unapplied;
       IF u <> 0 THEN
         INSERT INTO aging_credit_days (tenant_id, currency, day, shard, unapplied)
         VALUES (t, c, d, aging_shard(s), u)
         ON CONFLICT (tenant_id, currency, day, shard) DO UPDATE
           SET unapplied = aging_credit_days.unapplied + EXCLUDED.unapplied;
       END IF;
       WITH series AS (
              SELECT day, debtor AS old,
                     CASE WHEN SUM(invoices) OVER w > 0 OR SUM(unapplied) OVER w > 0 THEN 1 ELSE 0 END AS status
                FROM aging_subscriber_days WHERE tenant_id = t AND subscriber_id = s AND currency = c
              WINDOW w AS (ORDER BY day)),
            steps AS (
              SELECT day, old, status - COALESCE(lag(status) OVER (ORDER BY day), 0) AS new FROM series),
            moved AS (
              UPDATE aging_subscriber_days a SET debtor = steps.new FROM steps
               WHERE a.tenant_id = t AND a.subscriber_id = s AND a.currency = c AND a.day = steps.day
                 AND steps.new <> steps.old
              RETURNING a.day, steps.new - steps.old AS diff)
       INSERT INTO aging_credit_days (tenant_id, currency, day, shard, subscribers)
       SELECT t, c, moved.day, aging_shard(s), SUM(moved.diff) FROM moved GROUP BY moved.day
       ON CONFLICT (tenant_id, currency, day, shard) DO UPDATE
         SET subscribers = aging_credit_days.subscribers + EXCLUDED.subscribers;
     END $$`,
  // What an invoice still asks moves on a day (its due date bucketing it), and how many are open.
  `CREATE OR REPLACE FUNCTION "aging_invoice_add"(t text, s text, c text, due date, d date, amount bigint, n integer)
     RETURNS void LANGUAGE plpgsql AS $$
     BEGIN
       IF amount <> 0 OR n <> 0 THEN
         INSERT INTO aging_days (tenant_id, currency, due_date, day, shard, open_amount, invoices)
         VALUES (t, c, due, d, aging_shard(s), amount, n)
         ON CONFLICT (tenant_id, currency, due_date, day, shard) DO UPDATE
           SET open_amount = aging_days.open_amount + EXCLUDED.open_amount,
               invoices = aging_days.invoices + EXCLUDED.invoices;
       END IF;
       PERFORM aging_subscriber_add(t, s, c, d, n, 0);
     END $$`,
  // An issued invoice: +total and one more open on the day it was finalised; on the day it was paid, voided or written
  // off, what was still due then (total − amount_paid) and one fewer. An update takes the old row's share out and puts
  // the new row's in.
  `CREATE OR REPLACE FUNCTION "aging_invoices"() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE
       sign integer;
       r invoices;
       ended timestamptz;
     BEGIN
       IF TG_OP = 'UPDATE' AND NEW.status = OLD.status AND NEW.finalized_at IS NOT DISTINCT FROM OLD.finalized_at
          AND NEW.total = OLD.total AND NEW.due_date IS NOT DISTINCT FROM OLD.due_date AND NEW.currency = OLD.currency
          AND NEW.subscriber_id = OLD.subscriber_id AND NEW.paid_at IS NOT DISTINCT FROM OLD.paid_at
          AND NEW.voided_at IS NOT DISTINCT FROM OLD.voided_at
          AND NEW.written_off_at IS NOT DISTINCT FROM OLD.written_off_at
          AND (NEW.amount_paid = OLD.amount_paid OR NEW.status NOT IN ('paid', 'void', 'written_off')) THEN
         RETURN NULL;
       END IF;
       FOREACH sign IN ARRAY ARRAY[-1, 1] LOOP
         IF sign = -1 THEN
           CONTINUE WHEN TG_OP = 'INSERT';
           r := OLD;
         ELSE
           r := NEW;
         END IF;
         CONTINUE WHEN r.status = 'draft' OR r.finalized_at IS NULL;
         PERFORM aging_invoice_add(r.tenant_id, r.subscriber_id, r.currency, r.due_date, ${DAY('r.finalized_at')},
                                   sign * r.total, sign * (r.total > 0)::int);
         ended := ${ENDED_AT('r')};
         IF ended IS NOT NULL THEN
           PERFORM aging_invoice_add(r.tenant_id, r.subscriber_id, r.currency, r.due_date, ${DAY('ended')},
                                     -sign * (r.total - r.amount_paid), -sign * (r.total > 0)::int);
         END IF;
       END LOOP;
       RETURN NULL;
     END $$`,
  // An allocation to an invoice: less open on the invoice from its day (a credit that replaces part of a paid
  // invoice's payment counts from the day it was paid, which ended it), less unapplied on its payment or credit.
  `CREATE OR REPLACE FUNCTION "aging_allocations"() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE
       sign integer;
       r allocations;
       i invoices;
       m transactions;
     BEGIN
       FOREACH sign IN ARRAY ARRAY[-1, 1] LOOP
         IF sign = -1 THEN
           CONTINUE WHEN TG_OP = 'INSERT';
           r := OLD;
         ELSE
           CONTINUE WHEN TG_OP = 'DELETE';
           r := NEW;
         END IF;
         CONTINUE WHEN r.invoice_id IS NULL;
         SELECT * INTO i FROM invoices WHERE tenant_id = r.tenant_id AND id = r.invoice_id;
         IF FOUND THEN
           PERFORM aging_invoice_add(i.tenant_id, i.subscriber_id, i.currency, i.due_date,
             ${DAY(`LEAST(r.created_at, ${ENDED_AT('i')})`)}, -sign * r.amount, 0);
         END IF;
         SELECT * INTO m FROM transactions WHERE tenant_id = r.tenant_id AND id = r.transaction_id;
         IF FOUND AND m.kind IN ('payment', 'credit') THEN
           PERFORM aging_subscriber_add(m.tenant_id, m.subscriber_id, m.currency, ${DAY('r.created_at')}, 0,
                                        -sign * r.amount);
         END IF;
       END LOOP;
       RETURN NULL;
     END $$`,
  // A payment or credit: unapplied from its day; a refund: less unapplied on the payment it returns money from.
  `CREATE OR REPLACE FUNCTION "aging_transactions"() RETURNS trigger LANGUAGE plpgsql AS $$
     DECLARE
       m transactions;
     BEGIN
       IF NEW.kind IN ('payment', 'credit') THEN
         PERFORM aging_subscriber_add(NEW.tenant_id, NEW.subscriber_id, NEW.currency, ${DAY('NEW.created_at')}, 0,
                                      NEW.amount);
       ELSIF NEW.kind = 'refund' THEN
         SELECT * INTO m FROM transactions WHERE tenant_id = NEW.tenant_id AND id = NEW.refund_of;
         IF FOUND AND m.kind IN ('payment', 'credit') THEN
           PERFORM aging_subscriber_add(m.tenant_id, m.subscriber_id, m.currency, ${DAY('NEW.created_at')}, 0,
                                        -NEW.amount);
         END IF;
       END IF;
       RETURN NULL;
     END $$`,
  `CREATE TRIGGER "aging_invoices" AFTER INSERT OR UPDATE ON "invoices" FOR EACH ROW EXECUTE FUNCTION "aging_invoices"()`,
  `CREATE TRIGGER "aging_allocations" AFTER INSERT OR UPDATE OR DELETE ON "allocations" FOR EACH ROW EXECUTE FUNCTION "aging_allocations"()`,
  `CREATE TRIGGER "aging_transactions" AFTER INSERT ON "transactions" FOR EACH ROW EXECUTE FUNCTION "aging_transactions"()`,
];

/** The backfill of one tenant ($1), as src/billing/reports/aging.repository.ts rebuilds it (a copy: a migration stays as it ran). */
const BACKFILL = [
  'DELETE FROM aging_days WHERE tenant_id = $1',
  'DELETE FROM aging_credit_days WHERE tenant_id = $1',
  'DELETE FROM aging_subscriber_days WHERE tenant_id = $1',
  `INSERT INTO aging_days (tenant_id, currency, due_date, day, shard, open_amount, invoices)
   WITH issued AS (
          SELECT i.*, ${ENDED_AT('i')} AS ended_at FROM invoices i
           WHERE i.tenant_id = $1 AND i.status <> 'draft' AND i.finalized_at IS NOT NULL),
        moves AS (
          SELECT subscriber_id, currency, due_date, ${DAY('finalized_at')} AS day, total AS amount,
                 (total > 0)::int AS n FROM issued
          UNION ALL
          SELECT subscriber_id, currency, due_date, ${DAY('ended_at')}, amount_paid - total, -(total > 0)::int
            FROM issued WHERE ended_at IS NOT NULL
          UNION ALL
          SELECT i.subscriber_id, i.currency, i.due_date,
                 ${DAY(`LEAST(a.created_at, ${ENDED_AT('i')})`)}, -a.amount, 0
            FROM allocations a JOIN invoices i ON i.tenant_id = a.tenant_id AND i.id = a.invoice_id
           WHERE a.tenant_id = $1)
   SELECT $1, currency, due_date, day, aging_shard(subscriber_id), SUM(amount), SUM(n)
     FROM moves GROUP BY currency, due_date, day, aging_shard(subscriber_id)`,
  `INSERT INTO aging_subscriber_days (tenant_id, subscriber_id, currency, day, invoices, unapplied, debtor)
   WITH issued AS (
          SELECT i.*, ${ENDED_AT('i')} AS ended_at FROM invoices i
           WHERE i.tenant_id = $1 AND i.status <> 'draft' AND i.finalized_at IS NOT NULL AND i.total > 0),
        moves AS (
          SELECT subscriber_id, currency, ${DAY('finalized_at')} AS day, 1 AS n, 0::bigint AS u FROM issued
          UNION ALL
          SELECT subscriber_id, currency, ${DAY('ended_at')}, -1, 0 FROM issued WHERE ended_at IS NOT NULL
          UNION ALL
          SELECT subscriber_id, currency, ${DAY('created_at')}, 0, amount FROM transactions
           WHERE tenant_id = $1 AND kind IN ('payment', 'credit')
          UNION ALL
          SELECT m.subscriber_id, m.currency, ${DAY('a.created_at')}, 0, -a.amount
            FROM allocations a JOIN transactions m ON m.tenant_id = a.tenant_id AND m.id = a.transaction_id
           WHERE a.tenant_id = $1 AND a.invoice_id IS NOT NULL AND m.kind IN ('payment', 'credit')
          UNION ALL
          SELECT m.subscriber_id, m.currency, ${DAY('r.created_at')}, 0, -r.amount
            FROM transactions r JOIN transactions m ON m.tenant_id = r.tenant_id AND m.id = r.refund_of
           WHERE r.tenant_id = $1 AND r.kind = 'refund' AND m.kind IN ('payment', 'credit')),
        days AS (
          SELECT subscriber_id, currency, day, SUM(n)::int AS invoices, SUM(u)::bigint AS unapplied
            FROM moves GROUP BY subscriber_id, currency, day),
        series AS (
          SELECT *, CASE WHEN SUM(invoices) OVER w > 0 OR SUM(unapplied) OVER w > 0 THEN 1 ELSE 0 END AS status
            FROM days WINDOW w AS (PARTITION BY subscriber_id, currency ORDER BY day))
   SELECT $1, subscriber_id, currency, day, invoices, unapplied,
          status - COALESCE(lag(status) OVER (PARTITION BY subscriber_id, currency ORDER BY day), 0)
     FROM series`,
  `INSERT INTO aging_credit_days (tenant_id, currency, day, shard, unapplied, subscribers)
   SELECT $1, currency, day, aging_shard(subscriber_id), SUM(unapplied), SUM(debtor)
     FROM aging_subscriber_days WHERE tenant_id = $1
    GROUP BY currency, day, aging_shard(subscriber_id)`,
];

/**
 * Receivables aging kept as data (docs/reports.md, "How the reports are kept"; docs/decisions.md): per tenant,
 * currency, due date and UTC day, what the invoices still asked and how many were open moved by (aging_days); per
 * subscriber, currency and day, how many of its invoices were open and how much of its money unapplied moved by, and
 * the day it became or stopped being a debtor (aging_subscriber_days); per tenant, currency and day, the unapplied
 * money and the debtors (aging_credit_days). Triggers on invoices, allocations and transactions write them, so every
 * writer (bill runs, imports, fees, credit notes, allocations by hand or auto-apply) keeps them; this migration fills
 * them for the rows already there, tenant by tenant.
 */
export class AgingKeptAsData1796730000000 implements MigrationInterface {
  name = 'AgingKeptAsData1796730000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`SET LOCAL statement_timeout = 0`);
    for (const statement of SCHEMA) {
      await queryRunner.query(statement);
    }
    const tenants: { id: string }[] = await queryRunner.query(
      `SELECT tenant_id AS id FROM invoices UNION SELECT tenant_id FROM transactions ORDER BY 1`,
    );
    for (const { id } of tenants) {
      for (const statement of BACKFILL) {
        await queryRunner.query(statement, [id]);
      }
    }
    // Fresh statistics: without them the page's scan of the debtor steps is planned as a hash of every one of them
    // (1.5 s at 1,000,000 subscribers) rather than a walk in subscriber order that stops at the page (1 ms).
    await queryRunner.query(`ANALYZE "aging_days", "aging_credit_days", "aging_subscriber_days"`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER IF EXISTS "aging_transactions" ON "transactions"`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS "aging_allocations" ON "allocations"`);
    await queryRunner.query(`DROP TRIGGER IF EXISTS "aging_invoices" ON "invoices"`);
    for (const fn of [
      'aging_transactions()',
      'aging_allocations()',
      'aging_invoices()',
      'aging_invoice_add(text, text, text, date, date, bigint, integer)',
      'aging_subscriber_add(text, text, text, date, integer, bigint)',
      'aging_shard(text)',
    ]) {
      await queryRunner.query(`DROP FUNCTION IF EXISTS ${fn}`);
    }
    await queryRunner.query(`DROP TABLE "aging_subscriber_days"`);
    await queryRunner.query(`DROP TABLE "aging_credit_days"`);
    await queryRunner.query(`DROP TABLE "aging_days"`);
  }
}
