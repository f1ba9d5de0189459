import oclif from 'eslint-config-oclif'
import prettier from 'eslint-config-prettier'

export default [
  {
    // Generated, built or data: never linted. Test fixtures are data kept byte for byte.
    ignores: ['dist/', 'build/', 'node_modules/', 'src/generated/', 'oclif.manifest.json', 'bench/results/', 'test/**/fixtures/'],
  },
  ...oclif,
  // Prettier owns layout: switch off every stylistic rule that would fight it.
  prettier,
  {
    rules: {
      // The one layout rule prettier cannot enforce: it does not break strings or comments (the issue asks for none over 140).
      '@stylistic/max-len': ['error', {code: 140, tabWidth: 2}],

      // Sorting object keys changes behaviour: JSON/YAML output key order, and the order of flags in --help (flagSortOrder none).
      'perfectionist/sort-objects': 'off',
      // Interface and object-type fields follow the CRI and Kubernetes field order, which readers compare against.
      'perfectionist/sort-interfaces': 'off',
      'perfectionist/sort-object-types': 'off',
      // Unions list states in lifecycle order ('created' | 'running' | 'exited'), not alphabetically.
      'perfectionist/sort-union-types': 'off',
      // Cases follow the CRI enum or the kubelet's own switch; reordering them only hides that.
      'perfectionist/sort-switch-case': 'off',
      // A Set iterates in insertion order, so sorting its literal can change what is printed.
      'perfectionist/sort-sets': 'off',
      // Members are in reading order (metadata, run(), then helpers as called); the autofix would move whole methods.
      'perfectionist/sort-classes': 'off',
      // Imports are grouped (node:, packages, then the project from the ground floor up); its autofix also pulls the first
      // import above the module comment, which then documents that import instead of the file.
      'perfectionist/sort-imports': 'off',

      // Blank lines between fields are the author's (the multi-line oclif statics are kept apart); only methods need one.
      '@stylistic/lines-between-class-members': [
        'error',
        {
          enforce: [
            {blankLine: 'always', next: 'method', prev: '*'},
            {blankLine: 'always', next: 'field', prev: 'method'},
          ],
        },
        {exceptAfterOverload: true},
      ],
      // Braces on every case add two lines to each one-line `case X: return y`; no-case-declarations already guards scoping.
      'unicorn/switch-case-braces': 'off',
      // Its autofix drops the type annotation (`const s: LogStream | undefined = flags.s` becomes `const {s} = flags`).
      'prefer-destructuring': 'off',
      // Its autofix writes Math.max over bigint resource quantities, a TypeError at run time.
      'unicorn/prefer-math-min-max': 'off',
      // Its autofix turns `(v): v is string => Boolean(v)` into `Boolean`, and TypeScript loses the narrowing.
      'unicorn/prefer-native-coercion-functions': 'off',
      // Its autofix turns `new Array<R>(n)` into `Array.from({length: n})`, typed unknown[].
      'unicorn/no-new-array': 'off',

      // TypeScript already checks what these check (typescript-eslint's advice), and their export maps (the 15k-line
      // generated CRI module, the dependencies) took 70 % of the lint time.
      'import/default': 'off',
      'import/namespace': 'off',
      'import/no-named-as-default': 'off',
      'import/no-named-as-default-member': 'off',

      // Sequential runtime calls are deliberate: the kubelet's step order, polling loops, one pull at a time.
      'no-await-in-loop': 'off',
      // snake_case names are crictl's JSON/YAML keys and ts-proto's generated type names (SecurityProfile_ProfileType).
      camelcase: 'off',
      // FNV-1a for the container hash and binary unit shifts (Ki = 1n << 10n) are deliberate bit operations.
      'no-bitwise': 'off',
      // Passing a named one-argument helper to map/filter/some is the house style.
      'unicorn/no-array-callback-reference': 'off',
      // The two reduces (resource sums, JSONPath walk) read better than the loops that would replace them.
      'unicorn/no-array-reduce': 'off',
      // One-line local helpers sit beside their only use; hoisting them to module scope adds distance, not value.
      'unicorn/consistent-function-scoping': 'off',
      // `.catch(() => undefined)` and an explicit `f(undefined)` in a test state intent; `return undefined` is still fixed.
      'unicorn/no-useless-undefined': ['error', {checkArguments: false, checkArrowFunctionBody: false}],
      // chalk's Chalk class and supportsColor are named exports; keep oclif's node:path setting.
      'unicorn/import-style': ['error', {styles: {'node:path': {named: true}, chalk: false}}],
      // `(chunk) => (stdout += chunk)`: a parenthesised assignment in an arrow body is a deliberate idiom (ESLint's default).
      'no-return-assign': ['error', 'except-parens'],
      // `void promise` marks a deliberate fire-and-forget; `return void x` is still reported.
      'no-void': ['error', {allowAsStatement: true}],
      // fetch/Response are unflagged in Node 20 (engines >=20); the rule only knows they became "stable" in 21.
      'n/no-unsupported-features/node-builtins': ['error', {ignores: ['fetch', 'Response']}],
      // False positive: package.json "files" lists "/bin" with a leading slash, which the rule does not match.
      'n/no-unpublished-bin': 'off',
    },
  },
  {
    // TypeScript itself reports undefined names (and knows DOM-free globals such as RequestInit); typescript-eslint advises this.
    files: ['**/*.ts'],
    rules: {'no-undef': 'off'},
  },
  {
    // bin/ is CommonJS (bin/package.json: a start without Node's ESM loader). eslint-plugin-n's package checks would
    // read bin/package.json, which lists no dependencies and no files; the root package.json is the one published.
    files: ['bin/*.js'],
    languageOptions: {sourceType: 'commonjs', globals: {__dirname: 'readonly', module: 'readonly', require: 'readonly'}},
    rules: {
      '@typescript-eslint/no-require-imports': 'off',
      'unicorn/prefer-module': 'off',
      'unicorn/prefer-top-level-await': 'off',
      'n/no-extraneous-import': 'off',
      'n/no-extraneous-require': 'off',
      'n/no-unpublished-import': 'off',
      'n/no-unpublished-require': 'off',
    },
  },
  {
    // Vitest, not mocha: several top-level describe blocks and file-level beforeAll/afterAll are normal there.
    files: ['test/**/*.ts'],
    rules: {
      'mocha/max-top-level-suites': 'off',
      'mocha/no-top-level-hooks': 'off',
    },
  },
  {
    // The bundle's build tooling: rolldown resolves the virtual podctl:* modules, the single-executable entry
    // uses node:sea (Node 20.12+, the only Node that runs it), and the training script ends its own process.
    files: ['scripts/bundle/**'],
    rules: {
      'import/no-unresolved': ['error', {ignore: ['^podctl:']}],
      'n/no-unsupported-features/node-builtins': ['error', {ignores: ['fetch', 'Response', 'sea', 'sea.getAsset']}],
      'n/no-process-exit': 'off',
      'unicorn/no-process-exit': 'off',
    },
  },
  {
    // The fake runtimes implement grpc-js handlers whose requests and answers are untyped on the wire.
    files: ['test/support/fake-*.ts', 'test/support/training.ts'],
    rules: {'@typescript-eslint/no-explicit-any': 'off'},
  },
  {
    // The bench and README scripts import the built CLI from dist/, which exists only after `npm run build`.
    files: ['bench/**/*.mjs', 'scripts/**/*.mjs'],
    rules: {'import/no-unresolved': ['error', {ignore: [String.raw`^\.\./dist/`]}]},
  },
]
