#!/usr/bin/env node
// Development entry: the unbundled ESM path (dist/ from tsc, commands through dist/command-index.js;
// `npm run build` first). oclif prints full stacks here, which helps while changing commands; with
// NODE_ENV=production it runs like bin/run.js does, only unbundled (test/e2e/parity.test.ts
// compares the two that way).
// argv goes through normalizeArgv first, as in the bundle (scripts/bundle/entry.js).
// CommonJS (bin/package.json); oclif finds podctl's package.json from the root given as dir.
'use strict'
const {dirname} = require('node:path')

const {execute} = require('@oclif/core')

import('../dist/lib/util/argv.js').then(({normalizeArgv}) =>
  execute({development: process.env.NODE_ENV !== 'production', dir: dirname(__dirname), args: normalizeArgv(process.argv.slice(2))}),
)
