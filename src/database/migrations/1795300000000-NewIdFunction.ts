import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `isp_new_id(prefix, at)`: the app's id format (prefix, `_`, a 26-character Crockford ULID whose first 10 characters
 * are `at` in milliseconds) made inside Postgres, for rows a statement creates per matching row, such as the webhook
 * deliveries an event fans out to. The 16 random characters come from a SHA-256 of a random UUID (122 random bits).
 */
export class NewIdFunction1795300000000 implements MigrationInterface {
  name = 'NewIdFunction1795300000000';

  public async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION isp_new_id(prefix text, at timestamptz) RETURNS text
      LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
        SELECT prefix || '_' || string_agg(substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', digit + 1, 1), '' ORDER BY position)
        FROM (
          SELECT position, ((floor(extract(epoch FROM at) * 1000)::bigint >> (5 * (9 - position))) & 31)::int AS digit
          FROM generate_series(0, 9) AS position
          UNION ALL
          SELECT 10 + position, get_byte(random.bytes, position) % 32
          FROM (SELECT sha256(uuid_send(gen_random_uuid())) AS bytes) AS random, generate_series(0, 15) AS position
        ) AS digits
      $$`);
  }

  public async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION isp_new_id(text, timestamptz)`);
  }
}
