#!/usr/bin/env node
// User entry: runs podctl from its one-file bundle with the trained V8 code caches (all built by
// `npm run build` into dist/bundle/; see src/launch.ts). Without a bundle it falls back to the
// unbundled ESM path that bin/dev.js uses. CommonJS (bin/package.json), like the launcher it loads.
'use strict'
const {readFileSync} = require('node:fs')
const {dirname, join} = require('node:path')

const root = dirname(__dirname)
const filename = join(root, 'dist', 'bundle', 'podctl.cjs')
let source
try {
  source = readFileSync(filename, 'latin1')
} catch {}

// The name this script was started as (bin/crictl, or a link named crictl) picks the personality.
const program = process.argv[1]
if (source === undefined) {
  require('./unbundled.js').startUnbundled({program, argv: process.argv.slice(2)})
} else {
  const readShippedCache = (name) => {
    try {
      return readFileSync(join(root, 'dist', 'bundle', name))
    } catch {}
  }

  require('../dist/bundle/launch.cjs').launch({source, filename, readShippedCache, root, program, argv: process.argv.slice(2)})
}
