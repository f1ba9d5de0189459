#!/usr/bin/env node
// User entry: runs podctl from its one-file bundle with the trained V8 code caches (all built by
// `npm run build` into dist/bundle/; see src/launch.ts). Without a bundle it falls back to the
// unbundled ESM path that bin/dev.js uses.
import {readFileSync} from 'node:fs'
import {dirname} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = dirname(dirname(fileURLToPath(import.meta.url)))
const filename = `${root}/dist/bundle/podctl.cjs`
let source
try {
  source = readFileSync(filename, 'latin1')
} catch {}

if (source === undefined) {
  const [{execute}, {normalizeArgv}] = await Promise.all([import('@oclif/core'), import('../dist/lib/util/argv.js')])
  await execute({dir: import.meta.url, args: normalizeArgv(process.argv.slice(2))})
} else {
  // podctl.cache, or podctl.<group>.cache: the cache trained on that group's commands alone.
  const shippedCache = (group) => {
    try {
      return readFileSync(`${root}/dist/bundle/podctl${group ? `.${group}` : ''}.cache`)
    } catch {}
  }

  const {launch} = await import('../dist/launch.js')
  await launch({source, filename, shippedCache, root, argv: process.argv.slice(2)})
}
