#!/usr/bin/env node
// Development entry: the unbundled ESM path (dist/ from tsc, commands through dist/command-index.js;
// `npm run build` first). oclif prints full stacks here, which helps while changing commands; with
// NODE_ENV=production it runs like bin/run.js does, only unbundled (test/e2e/parity.test.ts
// compares the two that way).
// argv goes through normalizeArgv first, as in the bundle (scripts/bundle/entry.js).
import {execute} from '@oclif/core'

import {normalizeArgv} from '../dist/lib/util/argv.js'

await execute({development: process.env.NODE_ENV !== 'production', dir: import.meta.url, args: normalizeArgv(process.argv.slice(2))})
