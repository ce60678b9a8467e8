import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The contract's lint rules (redocly.yaml: Redocly's recommended set plus ours, the envelope rule in
 * scripts/openapi-lint/isp-plugin.js) pass a document that keeps them and name each rule a broken one breaks.
 */
const ROOT = join(__dirname, '..', '..');
const CLI = require.resolve('@redocly/cli/bin/cli.js', { paths: [ROOT] });

interface Problem {
  ruleId: string;
  severity: string;
  location: { pointer: string }[];
}

function lint(document: object): Problem[] {
  const dir = mkdtempSync(join(tmpdir(), 'openapi-rules-'));
  try {
    const file = join(dir, 'fixture.json');
    writeFileSync(file, JSON.stringify(document));
    const run = spawnSync(
      process.execPath,
      [CLI, 'lint', file, `--config=${join(ROOT, 'redocly.yaml')}`, '--format=json', '--max-problems=1000'],
      { cwd: dir, encoding: 'utf8', env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
    );
    return (JSON.parse(run.stdout) as { problems: Problem[] }).problems;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const META = { request_id: 'req_01', api_version: 'v1' };
const ERROR_EXAMPLE = {
  success: false,
  error: { code: 'not_found', message: 'No such record.', field: null },
  meta: META,
};

/** A one-operation document as the generator writes it: everything the rules ask for, present. */
function goodDocument() {
  return {
    openapi: '3.0.0',
    info: {
      title: 'Fixture',
      version: 'v1',
      description: 'A fixture.',
      contact: { name: 'Team' },
      license: { name: 'Proprietary' },
    },
    servers: [{ url: 'http://localhost:3000' }],
    security: [{ bearer: [] }],
    tags: [{ name: 'Subscribers', description: 'The people an ISP serves.' }],
    paths: {
      '/api/v1/subscribers': {
        post: {
          operationId: 'createSubscriber',
          summary: 'Create a subscriber',
          tags: ['Subscribers'],
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { $ref: '#/components/schemas/CreateSubscriber' },
                examples: { default: { value: { full_name: 'Ada Lovelace' } } },
              },
            },
          },
          responses: {
            '201': {
              description: 'Created',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['success', 'data', 'meta'],
                    properties: {
                      success: { type: 'boolean', enum: [true] },
                      data: { $ref: '#/components/schemas/Subscriber' },
                      meta: { $ref: '#/components/schemas/Meta' },
                    },
                  },
                  example: { success: true, data: { id: 'sub_01', full_name: 'Ada Lovelace' }, meta: META },
                },
              },
            },
            '404': {
              description: 'Not found',
              content: {
                'application/json': {
                  schema: { $ref: '#/components/schemas/ErrorEnvelope' },
                  example: ERROR_EXAMPLE,
                },
              },
            },
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: {
        CreateSubscriber: {
          type: 'object',
          required: ['full_name'],
          properties: { full_name: { type: 'string', minLength: 1, example: 'Ada Lovelace' } },
        },
        Subscriber: {
          type: 'object',
          required: ['id', 'full_name'],
          properties: {
            id: { type: 'string', minLength: 1, example: 'sub_01' },
            full_name: { type: 'string', minLength: 1, example: 'Ada Lovelace' },
          },
        },
        Meta: {
          type: 'object',
          required: ['request_id', 'api_version'],
          properties: {
            request_id: { type: 'string', minLength: 1, example: 'req_01' },
            api_version: { type: 'string', minLength: 1, example: 'v1' },
          },
        },
        ErrorEnvelope: {
          type: 'object',
          required: ['success', 'error', 'meta'],
          properties: {
            success: { type: 'boolean', enum: [false] },
            error: {
              type: 'object',
              required: ['code', 'message', 'field'],
              properties: {
                code: { type: 'string', minLength: 1, example: 'not_found' },
                message: { type: 'string', minLength: 1, example: 'No such record.' },
                field: { type: 'string', nullable: true, example: null },
              },
            },
            meta: { $ref: '#/components/schemas/Meta' },
          },
        },
      },
    },
  };
}

type Fixture = ReturnType<typeof goodDocument>;
type Post = Fixture['paths']['/api/v1/subscribers']['post'];

function withOperation(change: (operation: Partial<Post> & Record<string, unknown>) => void): Fixture {
  const document = goodDocument();
  change(document.paths['/api/v1/subscribers'].post);
  return document;
}

function ruleIds(problems: Problem[]): string[] {
  return [...new Set(problems.map((problem) => problem.ruleId))].sort();
}

describe('openapi lint rules (redocly.yaml)', () => {
  it('pass a document that keeps every rule', () => {
    expect(lint(goodDocument())).toEqual([]);
  });

  it('want an operationId, a summary and a 4xx answer on every operation', () => {
    const problems = lint(
      withOperation((operation) => {
        delete operation.operationId;
        delete operation.summary;
        delete (operation.responses as Record<string, unknown>)['404'];
      }),
    );
    expect(ruleIds(problems)).toEqual(
      expect.arrayContaining(['operation-4xx-response', 'operation-operationId', 'operation-summary']),
    );
  });

  it('want an example of every request body and every 2xx body', () => {
    const problems = lint(
      withOperation((operation) => {
        delete (operation.requestBody?.content['application/json'] as Record<string, unknown>).examples;
        delete (operation.responses?.['201'].content['application/json'] as Record<string, unknown>).example;
      }),
    );
    expect(ruleIds(problems)).toEqual(['rule/request-body-example', 'rule/success-response-example']);
  });

  it('want every 2xx body to be the envelope, success the constant true', () => {
    const bare = lint(
      withOperation((operation) => {
        const media = operation.responses!['201'].content['application/json'] as Record<string, unknown>;
        media.schema = { $ref: '#/components/schemas/Subscriber' };
        media.example = { id: 'sub_01', full_name: 'Ada Lovelace' };
      }),
    );
    expect(ruleIds(bare)).toEqual(['isp/success-envelope']);

    const plainBoolean = lint(
      withOperation((operation) => {
        const media = operation.responses!['201'].content['application/json'];
        media.schema.properties.success = { type: 'boolean' } as typeof media.schema.properties.success;
      }),
    );
    expect(ruleIds(plainBoolean)).toEqual(['isp/success-envelope']);
  });

  it('want security on every operation, through the root or its own', () => {
    const document = goodDocument() as Partial<Fixture>;
    delete document.security;
    delete (document.components as Partial<Fixture['components']>).securitySchemes;
    expect(ruleIds(lint(document))).toEqual(['security-defined']);
  });
});
