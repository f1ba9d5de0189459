#!/usr/bin/env node
// Development entry: the unbundled ESM path (dist/ from tsc, commands through dist/command-index.js;
// `npm run build` first). oclif prints full stacks here, which helps while changing commands; with
// NODE_ENV=production it runs like bin/run.js does, only unbundled (test/e2e/parity.test.ts
// compares the two that way).
// argv goes through normalizeArgv first, or crictl's command line when started as crictl, as in the
// bundle (scripts/bundle/entry.js); see bin/unbundled.js.
// CommonJS (bin/package.json); oclif finds podctl's package.json from the root given as dir.
'use strict'
require('./unbundled.js').startUnbundled({
  program: process.argv[1],
  argv: process.argv.slice(2),
  development: process.env.NODE_ENV !== 'production',
})
