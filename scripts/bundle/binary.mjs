#!/usr/bin/env node
// npm run build:binary: a single executable, podctl-linux-<arch>, for nodes without Node.js. It is
// this machine's Node binary with Node's single-executable-application support: the bundles from
// `npm run build` and their code caches are embedded as assets and started by sea-main.js. A cache
// must come from the very Node binary that is embedded (V8 rejects any other), so they are trained
// again here with that binary.
//
//   node scripts/bundle/binary.mjs [--node /path/to/node] [--out FILE]
//
// Other architectures need that architecture's Node binary (and a machine or emulator to train
// the cache on); see docs/single-binary.md.
import {spawnSync} from 'node:child_process'
import {chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {basename, dirname, join, relative} from 'node:path'
import {fileURLToPath} from 'node:url'

import {rolldown} from 'rolldown'

import {injectBlob} from './inject.mjs'
import {CACHE_GROUPS, cacheFile, trainCaches} from './train.mjs'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const BUILD = join(ROOT, 'build', 'binary')
const SENTINEL = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2'

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`)
  return index > 0 ? process.argv[index + 1] : fallback
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, {encoding: 'utf8', ...options})
  if (result.status !== 0)
    throw new Error(`${command} ${args.join(' ')} failed (${result.status ?? result.error?.message}):\n${result.stderr ?? ''}`)
  return result.stdout
}

const node = option('node', process.execPath)
const arch = run(node, ['-p', 'process.arch']).trim()
const nodeVersion = run(node, ['-p', 'process.version']).trim()
const out = option('out', join(ROOT, `podctl-linux-${arch}`))
const bundles = Object.fromEntries(['podctl.cjs', 'podctl.quick.cjs'].map((name) => [name, join(ROOT, 'dist', 'bundle', name)]))
for (const [name, file] of Object.entries(bundles))
  if (!existsSync(file)) throw new Error(`dist/bundle/${name} is missing: run npm run build first`)
if (!readFileSync(node).includes(SENTINEL))
  throw new Error(`${node} has no single-executable fuse (${SENTINEL}); use an official Node.js >= 20.12 build`)

const started = performance.now()
rmSync(BUILD, {recursive: true, force: true})
mkdirSync(BUILD, {recursive: true})

// 1. The caches, trained by the Node binary being embedded.
trainCaches({full: bundles['podctl.cjs'], quick: bundles['podctl.quick.cjs'], outDir: BUILD, node})
const cacheFiles = [undefined, ...CACHE_GROUPS].map((group) => cacheFile(BUILD, group))
const caches = Object.fromEntries(cacheFiles.map((file) => [basename(file), file]))

// 2. The launcher: sea-main.js with src/launch.ts, one CommonJS file (Node's built-ins external).
const main = join(BUILD, 'sea-main.cjs')
const launcher = await rolldown({input: join(ROOT, 'scripts', 'bundle', 'sea-main.js'), platform: 'node', logLevel: 'warn'})
await launcher.write({file: main, format: 'cjs', codeSplitting: false})
await launcher.close()

// 3. The blob: launcher, bundles and caches; no experimental-feature warning on stderr.
const config = join(BUILD, 'sea-config.json')
const blob = join(BUILD, 'sea-prep.blob')
writeFileSync(
  config,
  JSON.stringify(
    {
      main,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: false,
      useSnapshot: false,
      assets: {...bundles, ...caches},
    },
    null,
    2,
  ),
)
run(node, ['--experimental-sea-config', config], {cwd: BUILD})

// 4. A copy of node with the blob injected at the fuse (postject's known harmless warnings left out:
// see inject.mjs). A failed injection leaves no plain copy of node behind under the binary's name.
rmSync(out, {force: true})
copyFileSync(node, out)
chmodSync(out, 0o755)
try {
  await injectBlob(out, readFileSync(blob), SENTINEL)
} catch (error) {
  rmSync(out, {force: true})
  throw error
}

// 5. Licenses: podctl's third-party notices, then Node.js's own (it is embedded too).
const nodeLicense = [join(dirname(node), '..', 'share', 'doc', 'nodejs', 'LICENSE'), join(dirname(node), '..', 'LICENSE')].find((path) =>
  existsSync(path),
)
const notices = [readFileSync(join(ROOT, 'dist', 'bundle', 'THIRD_PARTY_NOTICES'), 'utf8')]
if (nodeLicense) notices.push(`\n${'='.repeat(78)}\nNode.js ${nodeVersion}\n${'='.repeat(78)}\n${readFileSync(nodeLicense, 'utf8')}`)
else console.error(`warning: no LICENSE found for ${node}; add Node.js's license beside the executable yourself`)
writeFileSync(`${out}.LICENSES`, notices.join(''))

// 6. It must start from its own caches, or it is no faster than node + bundle without one
// (`--version` is in the help group).
const check = spawnSync(out, ['--version'], {
  encoding: 'utf8',
  env: {...process.env, PODCTL_CODE_CACHE_DEBUG: '1', HOME: BUILD, XDG_CACHE_HOME: BUILD},
})
if (check.status !== 0 || !check.stderr.includes('podctl code cache: podctl.quick.cjs shipped help accepted')) {
  throw new Error(`the executable does not start from its embedded cache (exit ${check.status}):\n${check.stdout}${check.stderr}`)
}

const size = readFileSync(out).length
console.error(
  `built ${relative(ROOT, out)} (${(size / 1e6).toFixed(0)} MB, node ${nodeVersion} ${arch})` +
    ` in ${((performance.now() - started) / 1000).toFixed(1)} s`,
)
