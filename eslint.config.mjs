// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';
import { boundaryConfigs } from './eslint.boundaries.mjs';

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
      // IsOptional lets null through to services that test `!== undefined` (issue 27, item 4). A syntax rule, since
      // eslint.boundaries.mjs owns no-restricted-imports (its options do not merge across config objects).
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "ImportDeclaration[source.value='class-validator'] ImportSpecifier[imported.name='IsOptional']",
          message: 'Use Optional() or OptionalNullable() from src/common/validation/optional.',
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: { '@typescript-eslint/no-unsafe-argument': 'off', '@typescript-eslint/no-unsafe-call': 'off' },
  },
  // Module boundaries and no cycles between domains (eslint.boundaries.mjs, docs/architecture.md).
  ...boundaryConfigs,
);
