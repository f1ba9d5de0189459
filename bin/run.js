#!/usr/bin/env node
// User entry: runs podctl from its one-file bundles with the trained V8 code caches (all built by
// `npm run build` into dist/bundle/; see src/launch.ts). Without a bundle it falls back to the
// unbundled ESM path that bin/dev.js uses. CommonJS (bin/package.json), like the launcher it loads.
'use strict'
const {existsSync, readFileSync} = require('node:fs')
const {dirname, join} = require('node:path')

const root = dirname(__dirname)
const bundles = join(root, 'dist', 'bundle')

// The name this script was started as (bin/crictl, or a link named crictl) picks the personality.
const program = process.argv[1]
if (existsSync(join(bundles, 'podctl.cjs'))) {
  const readBundle = (name) => {
    const filename = join(bundles, name)
    try {
      return {source: readFileSync(filename, 'latin1'), filename}
    } catch {}
  }

  const readShippedCache = (name) => {
    try {
      return readFileSync(join(bundles, name))
    } catch {}
  }

  require('../dist/bundle/launch.cjs').launch({readBundle, readShippedCache, root, program, argv: process.argv.slice(2)})
} else {
  require('./unbundled.js').startUnbundled({program, argv: process.argv.slice(2)})
}
