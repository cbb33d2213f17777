import js from '@eslint/js';
import markdown from '@eslint/markdown';
import markdownLinks from 'eslint-plugin-markdown-links';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

/** The files that compose the application (docs/development.md, "Layout"): nothing below them imports them. */
const COMPOSITION = ['src/{main,cli.module,api-app,api.module,feature-modules,entities}.ts', 'src/cli/**'];

/**
 * The features from the top down (docs/development.md, "Layout"): a feature imports only features of the rows
 * below its own, never one above it nor one beside it.
 */
const FEATURE_ROWS = [
  ['secrets', 'mcp', 'mcp-servers'],
  ['mcp-oauth'],
  ['execution', 'connect-links'],
  ['oauth2', 'catalog'],
  ['linked-accounts'],
  ['app-configurations'],
  ['apps'],
  ['functions'],
  ['search'],
  ['catalog-rules'],
  ['audit-events', 'health'],
  ['projects'],
  ['audit', 'rate-limits'],
];

const FEATURE_ZONES = FEATURE_ROWS.flatMap((row, index) =>
  row.map((feature) => ({
    target: `src/${feature}`,
    from: [...FEATURE_ROWS.slice(0, index).flat(), ...row.filter((other) => other !== feature)].map(
      (other) => `src/${other}`,
    ),
    message: `src/${feature} imports only the features below its row (docs/development.md, "Layout"): one that needs a higher feature's rule takes it as an argument, or the shared piece moves down.`,
  })),
).filter((zone) => zone.from.length > 0);

/** The TypeScript sources; the Markdown files get only the link rules below. */
const CODE = ['**/*.ts'];

export default tseslint.config(
  { ignores: ['dist/**', 'dist-lab/**', 'lab/**', 'node_modules/**', 'data/**', 'coverage/**', '**/*.js', '**/*.mjs'] },
  { files: CODE, ...js.configs.recommended },
  ...tseslint.configs.recommendedTypeChecked.map((config) => ({ files: CODE, ...config })),
  {
    files: CODE,
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
    },
  },
  {
    // Layers import one way: no import cycle, and a lower layer never imports a higher one.
    files: ['src/**/*.ts', 'libs/**/*.ts', 'bench/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      // The imported files are TypeScript too: they are parsed to follow their own imports.
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
      // Sources import each other as `./x.js`; the file is `./x.ts`.
      'import-x/resolver-next': [
        createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } }),
      ],
    },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: 'libs', from: 'src', message: 'libs/ is domain-agnostic: it never imports src/.' },
            {
              target: 'src/config',
              from: 'src',
              except: ['config'],
              message: 'Configuration sits below every feature: it imports only libs/.',
            },
            {
              target: 'src/observability',
              from: 'src',
              except: ['observability', 'config'],
              message:
                'Metrics and traces sit below the database and every feature: they import only src/config and libs/.',
            },
            {
              target: 'src/database',
              from: 'src',
              except: ['database', 'config', 'observability'],
              message: 'The database layer sits below every feature: entities come in through DatabaseModule.forRoot.',
            },
            {
              target: 'src/catalog-rules',
              from: 'src',
              except: ['catalog-rules'],
              message: 'The catalogue rules sit below every feature that applies them: they import only libs/.',
            },
            {
              target: 'src/search',
              from: 'src',
              except: ['search', 'catalog-rules', 'config', 'observability', 'database'],
              message:
                'Search sits below the features that call it (apps, functions, catalog): it applies the catalogue rules of src/catalog-rules and imports no feature.',
            },
            ...FEATURE_ZONES,
            {
              target: 'src/!(cli)/**',
              from: COMPOSITION,
              message: 'A feature never imports the files that compose the application.',
            },
            {
              target: 'bench',
              from: ['src/*/**/!(index).ts', 'libs/*/src/**/!(index).ts'],
              message:
                "Benchmarks use the product through its entry points: a module's index.ts, libs/common/src/index.ts, or the files that compose the application.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', '**/*.spec.ts', '**/*.e2e-spec.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    // The README and the guides: every relative link reaches a file, and every #anchor a heading (offline).
    files: ['README.md', 'docs/**/*.md'],
    plugins: { markdown, 'markdown-links': markdownLinks },
    language: 'markdown/gfm',
    rules: {
      'markdown/no-missing-link-fragments': 'error',
      'markdown-links/no-missing-path': 'error',
    },
  },
);
