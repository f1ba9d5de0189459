#!/usr/bin/env node
// Builds the library's CommonJS entry (package.json exports["."].require): dist/cjs/index.cjs, the
// compiled ESM API (dist/lib/api/index.js) in one CommonJS file, its npm dependencies left as
// require() calls, beside a copy of the API's declarations in a folder whose package.json says
// "type": "commonjs", so that tsc reads them as CommonJS for a `require` consumer.
// Run by `npm run build` (scripts/bundle/build.mjs) after tsc.
import {copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {builtinModules} from 'node:module'
import {dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {rolldown} from 'rolldown'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const DIST = join(ROOT, 'dist')
const OUT_DIR = join(DIST, 'cjs')
export const LIBRARY_CJS = join(OUT_DIR, 'index.cjs')

const dependencies = Object.keys(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies)
const isExternal = (id) =>
  id.startsWith('node:') || builtinModules.includes(id) || dependencies.some((name) => id === name || id.startsWith(`${name}/`))

export async function buildLibraryCjs() {
  const started = performance.now()
  const input = join(DIST, 'lib', 'api', 'index.js')
  if (!existsSync(input)) throw new Error(`${relative(ROOT, input)} is missing: run tsc first (npm run build)`)
  const bundle = await rolldown({
    input,
    platform: 'node',
    external: isExternal,
    logLevel: 'warn',
    onLog(level, log, handler) {
      if (log.code === 'UNRESOLVED_IMPORT') throw new Error(log.message)
      handler(level, log)
    },
  })
  const {output} = await bundle.generate({format: 'cjs', codeSplitting: false, sourcemap: false})
  await bundle.close()
  if (output.length !== 1) throw new Error(`expected one file, got ${output.map((o) => o.fileName).join(', ')}`)
  rmSync(OUT_DIR, {recursive: true, force: true})
  mkdirSync(OUT_DIR, {recursive: true})
  writeFileSync(LIBRARY_CJS, output[0].code)
  writeFileSync(join(OUT_DIR, 'package.json'), `${JSON.stringify({type: 'commonjs'})}\n`)
  // The declarations the API's index.d.ts reaches (lib/ and generated/), in the same tree.
  for (const folder of ['lib', 'generated']) copyDeclarations(join(DIST, folder), join(OUT_DIR, folder))
  const ms = performance.now() - started
  const modules = output[0].moduleIds.length
  console.error(`bundled the library's CommonJS entry ${relative(ROOT, LIBRARY_CJS)} (${modules} modules) in ${ms.toFixed(0)} ms`)
}

function copyDeclarations(from, to) {
  for (const entry of readdirSync(from, {recursive: true, withFileTypes: true})) {
    if (!entry.isFile() || !entry.name.endsWith('.d.ts')) continue
    const source = join(entry.parentPath, entry.name)
    const target = join(to, relative(from, source))
    mkdirSync(dirname(target), {recursive: true})
    copyFileSync(source, target)
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await buildLibraryCjs()
