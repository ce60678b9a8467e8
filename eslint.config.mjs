// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { boundaryConfigs } from './eslint.boundaries.mjs';

// IsOptional lets null through to services that test `!== undefined` (issue 27, item 4). A syntax rule, since
// eslint.boundaries.mjs owns no-restricted-imports (its options do not merge across config objects).
const NO_IS_OPTIONAL = {
  selector: "ImportDeclaration[source.value='class-validator'] ImportSpecifier[imported.name='IsOptional']",
  message: 'Use Optional() or OptionalNullable() from src/common/validation/optional.',
};

// One clock (issue 30, item 5): the time is read through the injected Clock (src/common/clock.ts), so a test moves it
// for the whole app; elapsed time is performance.now() or process.hrtime.
const CLOCK_MESSAGE =
  'Read the time through the injected Clock (src/common/clock.ts): this.clock.now(); elapsed time: performance.now().';
const NO_WALL_CLOCK = [
  { selector: "NewExpression[callee.name='Date'][arguments.length=0]", message: CLOCK_MESSAGE },
  {
    selector:
      "CallExpression[callee.type='MemberExpression'][callee.object.name='Date'][callee.property.name='now']",
    message: CLOCK_MESSAGE,
  },
];

/** What the portal's pages use of the browser (src/portal/web). */
const BROWSER_GLOBALS = Object.fromEntries(
  [
    'window',
    'document',
    'navigator',
    'location',
    'history',
    'sessionStorage',
    'fetch',
    'URL',
    'URLSearchParams',
    'Node',
    'requestAnimationFrame',
    'setTimeout',
  ].map((name) => [name, 'readonly']),
);

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'eslint.config.mjs',
      'eslint.boundaries.mjs',
      'scripts/*.js',
    ],
  },
  eslint.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  prettier,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/unbound-method': 'off',
      'no-restricted-syntax': ['error', NO_IS_OPTIONAL],
    },
  },
  // The same rule's options again, with the clock's selectors: options do not merge across config objects.
  {
    files: ['src/**/*.ts'],
    ignores: ['**/*.spec.ts', 'src/database/migrations/**', 'src/common/clock.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_IS_OPTIONAL, ...NO_WALL_CLOCK] },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-unsafe-argument': 'off', '@typescript-eslint/no-unsafe-call': 'off' },
  },
  // Sizes (issue 30, item 7): a file past 400 lines or a function past 80 holds more than one responsibility. Counted
  // with the rules' defaults (blank lines and comments count): the "why" comments are part of what a reader has to
  // hold, and leaving them out would reward stripping them. Migrations are generated and specs are lists of cases.
  {
    files: ['src/**/*.ts', 'bench/**/*.ts'],
    ignores: ['src/database/migrations/**', '**/*.spec.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  // No imports of libraries' internals (issue 30, item 7): a file inside a package (`@nestjs/throttler/dist/…`,
  // `@nestjs/core/helpers/…`, `typeorm/driver/postgres/…`) is not its public surface and moves without notice on a
  // minor upgrade. Import from the package's entry, derive the type from an exported one, or spell the constant
  // locally with a spec that checks it against the public decorators (src/common/http/nest-metadata.ts). Allowed
  // subpaths: Node's own modules, and entries a package documents as public (ajv/dist/2020, Ajv's JSON Schema
  // 2020-12 build). The typescript-eslint twin of no-restricted-imports, because eslint.boundaries.mjs owns the core
  // rule and its options do not merge across config objects.
  {
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(?!node:|ajv/dist/2020$)(?:@[^/.]+/[^/]+|[^@./][^/]*)/',
              message:
                "A file inside a package is not its public surface: import from the package's entry, or declare a local type.",
            },
          ],
        },
      ],
    },
  },
  // The customer portal's pages (src/portal/web): plain ES modules the browser runs as they are, so no compiler checks
  // them: linted without type information, with the browser's globals and the same sizes.
  { ...tseslint.configs.disableTypeChecked, files: ['src/portal/web/**/*.js'] },
  {
    files: ['src/portal/web/**/*.js'],
    languageOptions: { sourceType: 'module', globals: BROWSER_GLOBALS },
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80 }],
      'no-restricted-syntax': 'off',
    },
  },
  // Module boundaries and no cycles between domains (eslint.boundaries.mjs, docs/architecture.md).
  ...boundaryConfigs,
);
