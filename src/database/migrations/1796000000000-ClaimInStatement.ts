import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `isp_require_claim(claimed)`: true when `claimed`, else raises SQLSTATE IK409. A write that is one statement claims
 * its idempotency key in a CTE of that statement (claimCte); its final SELECT calls this on whether the claim took a
 * row, so a key found held aborts the statement and rolls back the effect the other CTEs wrote beside it.
 */
export class ClaimInStatement1796000000000 implements MigrationInterface {
  name = 'ClaimInStatement1796000000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION isp_require_claim(claimed boolean) RETURNS boolean
      LANGUAGE plpgsql VOLATILE AS $$
      BEGIN
        IF NOT claimed THEN
          RAISE EXCEPTION 'the idempotency key is held by another request' USING ERRCODE = 'IK409';
        END IF;
        RETURN true;
      END
      $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION isp_require_claim(boolean)`);
  }
}
