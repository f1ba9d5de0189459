#!/usr/bin/env node
// Trains the bundles' V8 code caches: runs commands in one process against the fake runtime
// (test/support/training.ts), then asks V8 for a cache of everything that was compiled
// (Script#createCachedData). A cache made right after compiling holds little, because V8 compiles
// functions lazily; one made after running holds what a real start needs.
//
// One cache per group of common commands (CACHE_GROUPS: podctl.<group>.cache, trained on the quick
// bundle in a fresh process on that group's runs alone, so it holds only what they compile), and
// podctl.cache, trained on the full bundle with all of them, for every other command. src/launch.ts
// picks the bundle and the cache by the invocation.
//
//   node scripts/bundle/train.mjs [--full FILE] [--quick FILE] [--out-dir DIR]
//
// Must run on the Node binary that will load the caches (the single executable embeds this very
// binary), and without any Node/V8 option: V8 rejects a cache made under other flags.
// build.mjs runs it in child processes, with stdout discarded.
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {basename, dirname, join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The groups with a cache of their own: the keys of trainingGroups() in test/support/training.ts. */
export const CACHE_GROUPS = ['pods', 'ps', 'images', 'status', 'version', 'help']

/**
 * Where the cache of a group (or, with none, of every other command) is written: under
 * src/launch.ts shippedCacheName, which test/unit/launch.test.ts checks this against (this build
 * script cannot import dist/ before tsc has run).
 */
export function cacheFile(dir, group) {
  return join(dir, group ? `podctl.${group}.cache` : 'podctl.cache')
}

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`)
  return index > 0 ? process.argv[index + 1] : fallback
}

/** Compiles test/support/training.ts (TypeScript, with the fake runtime) to a module this script can import. */
async function loadTrainingSupport(dir) {
  const {rolldown} = await import('rolldown')
  const bundle = await rolldown({
    input: join(ROOT, 'test', 'support', 'training.ts'),
    platform: 'node',
    external: (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0'),
    resolve: {extensionAlias: {'.js': ['.ts', '.js']}},
    logLevel: 'warn',
  })
  const file = join(dir, 'training.mjs')
  await bundle.write({file, format: 'esm'})
  await bundle.close()
  return import(pathToFileURL(file).href)
}

async function train(bundleFile, out, group) {
  const {compileBundle, cacheHeader, LEFT_OUT} = await import(pathToFileURL(join(ROOT, 'dist', 'launch.js')).href)
  // Next to the bundle (not in /tmp) so the compiled support code resolves grpc-js from node_modules.
  const work = join(ROOT, 'dist', 'bundle', `.train-${group ?? 'all'}`)
  rmSync(work, {recursive: true, force: true})
  mkdirSync(work, {recursive: true})
  const {startFixtureRuntime, trainingGroups, trainingRuns, expectedToFail} = await loadTrainingSupport(work)
  const groups = trainingGroups('')
  if (Object.keys(groups).sort().join(',') !== [...CACHE_GROUPS].sort().join(','))
    throw new Error(`train.mjs CACHE_GROUPS (${CACHE_GROUPS}) and training.ts trainingGroups (${Object.keys(groups)}) differ`)
  const socket = join(work, 'cri.sock')
  const stop = await startFixtureRuntime(socket)

  // The commands would read the developer's crictl config, and exit on failure; keep them to the fake.
  process.env.CRI_CONFIG_FILE = join(work, 'crictl.yaml')
  writeFileSync(process.env.CRI_CONFIG_FILE, '')
  delete process.env.CONTAINER_RUNTIME_ENDPOINT
  delete process.env.NO_COLOR
  const exit = process.exit
  process.exit = (code) => {
    process.exitCode = code
  }

  const source = readFileSync(bundleFile, 'latin1')
  const bundle = compileBundle(source, bundleFile)
  const failures = []
  try {
    for (const argv of group ? trainingGroups(socket)[group] : trainingRuns(socket)) {
      process.exitCode = undefined
      const result = await bundle.exports.execute(argv, ROOT)
      if (result === LEFT_OUT) failures.push(`podctl ${argv.join(' ')} needs a command ${basename(bundleFile)} left out`)
      // oclif's flush waits for 'drain' on a stream that never needs one here; drop the listener.
      process.stdout.removeAllListeners('drain')
      if (Boolean(process.exitCode) !== expectedToFail(argv)) failures.push(`podctl ${argv.join(' ')} exited ${process.exitCode ?? 0}`)
    }
  } finally {
    process.exit = exit
    process.exitCode = undefined
    await stop()
  }

  if (failures.length > 0) throw new Error(`training runs failed:\n${failures.join('\n')}`)
  const data = bundle.script.createCachedData()
  writeFileSync(out, Buffer.concat([Buffer.from(cacheHeader(bundle.id, [group ? `trained-${group}` : 'trained']), 'latin1'), data]))
  rmSync(work, {recursive: true, force: true})
  return data.length
}

/**
 * Trains one cache (a group's, or with none every other command's) in a fresh Node process with no
 * options, stdout discarded; fails loudly.
 */
function trainOne({bundle, out, node, group}) {
  const args = [fileURLToPath(import.meta.url), '--child', '--bundle', bundle, '--out', out, ...(group ? ['--group', group] : [])]
  const result = spawnSync(node, args, {
    cwd: ROOT,
    env: {...process.env, NODE_OPTIONS: ''},
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    timeout: 180_000,
  })
  if (result.status !== 0)
    throw new Error(`training the ${group ?? 'general'} code cache failed (exit ${result.status ?? result.signal}):\n${result.stderr}`)
  return readFileSync(out).length
}

/**
 * Trains every cache into outDir: podctl.cache on the full bundle, and podctl.<group>.cache for each
 * of CACHE_GROUPS on the quick bundle, which those groups run from (src/launch.ts).
 */
export function trainCaches({full, quick, outDir = dirname(full), node = process.execPath}) {
  const started = performance.now()
  const sizes = [undefined, ...CACHE_GROUPS].map((group) => {
    const out = cacheFile(outDir, group)
    return `${basename(out)} ${(trainOne({bundle: group ? quick : full, out, node, group}) / 1e6).toFixed(2)} MB`
  })
  console.error(`trained ${sizes.join(', ')} in ${(performance.now() - started).toFixed(0)} ms`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--child')) {
    const bundle = option('bundle', join(ROOT, 'dist', 'bundle', 'podctl.cjs'))
    if (process.execArgv.length > 0)
      throw new Error(`train without Node options (got ${process.execArgv.join(' ')}): V8 rejects caches made under other flags`)
    const group = option('group', undefined)
    if (group !== undefined && !CACHE_GROUPS.includes(group)) throw new Error(`no training group ${group} (${CACHE_GROUPS.join(', ')})`)
    await train(bundle, option('out', cacheFile(dirname(bundle), group)), group)
    // grpc-js keeps timers; the cache is written, so end now.
    exit0()
  } else {
    const full = option('full', join(ROOT, 'dist', 'bundle', 'podctl.cjs'))
    const quick = option('quick', join(ROOT, 'dist', 'bundle', 'podctl.quick.cjs'))
    trainCaches({full, quick, outDir: option('out-dir', dirname(full))})
  }
}

function exit0() {
  process.exit(0)
}
