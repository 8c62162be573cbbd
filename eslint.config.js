// @ts-check
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/', '.cache/', 'node_modules/', 'charts/', 'coverage/'] },
  eslint.configs.recommended,
  tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['eslint.config.js', 'bin/*.js', 'scripts/runtime/*.js'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      // client-node's models are classes, but its documented usage is plain object literals.
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      // ...and their instances are plain data, so spreading them loses nothing.
      '@typescript-eslint/no-misused-spread': 'off',
    },
  },
  {
    files: ['test/**/*.ts', 'webhook/webhooks/*/*.test.ts'],
    rules: {
      // node:test's describe/it return promises that the runner awaits itself.
      '@typescript-eslint/no-floating-promises': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Assertions read more plainly with defensive optional chains.
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
);
