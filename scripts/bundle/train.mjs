#!/usr/bin/env node
// Trains the bundle's V8 code cache: runs the common commands (pods, ps, images, status, version,
// help) in one process against the fake runtime (test/support/training.ts), then asks V8 for
// a cache of everything that was compiled (Script#createCachedData) and writes
// dist/bundle/podctl.cache. A cache made right after compiling holds little, because V8 compiles
// functions lazily; one made after running holds what a real start needs.
//
//   node scripts/bundle/train.mjs [--bundle FILE] [--out FILE]
//
// Must run on the Node binary that will load the cache (the single executable embeds this very
// binary), and without any Node/V8 option: V8 rejects a cache made under other flags.
// build.mjs runs it in a child process, with stdout discarded.
import {spawnSync} from 'node:child_process'
import {mkdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

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

async function train(bundleFile, out) {
  const {compileBundle, cacheHeader} = await import(pathToFileURL(join(ROOT, 'dist', 'launch.js')).href)
  // Next to the bundle (not in /tmp) so the compiled support code resolves grpc-js from node_modules.
  const work = join(ROOT, 'dist', 'bundle', '.train')
  rmSync(work, {recursive: true, force: true})
  mkdirSync(work, {recursive: true})
  const {startFixtureRuntime, trainingRuns, expectedToFail} = await loadTrainingSupport(work)
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
    for (const argv of trainingRuns(socket)) {
      process.exitCode = undefined
      await bundle.exports.execute(argv, ROOT)
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
  writeFileSync(out, Buffer.concat([Buffer.from(cacheHeader(bundle.id, ['trained']), 'latin1'), data]))
  rmSync(work, {recursive: true, force: true})
  return data.length
}

/** Runs the training in a fresh Node process with no options, stdout discarded; fails loudly. */
export function trainInChild({bundle, out, node = process.execPath}) {
  const started = performance.now()
  const result = spawnSync(node, [fileURLToPath(import.meta.url), '--child', '--bundle', bundle, '--out', out], {
    cwd: ROOT,
    env: {...process.env, NODE_OPTIONS: ''},
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
    timeout: 180_000,
  })
  if (result.status !== 0) throw new Error(`training the code cache failed (exit ${result.status ?? result.signal}):\n${result.stderr}`)
  const size = readFileSync(out).length
  console.error(`trained ${out.slice(ROOT.length)} (${(size / 1e6).toFixed(2)} MB) in ${(performance.now() - started).toFixed(0)} ms`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bundle = option('bundle', join(ROOT, 'dist', 'bundle', 'podctl.cjs'))
  const out = option('out', join(ROOT, 'dist', 'bundle', 'podctl.cache'))
  if (process.argv.includes('--child')) {
    if (process.execArgv.length > 0)
      throw new Error(`train without Node options (got ${process.execArgv.join(' ')}): V8 rejects caches made under other flags`)
    await train(bundle, out)
    // grpc-js keeps timers; the cache is written, so end now.
    exit0()
  } else {
    trainInChild({bundle, out})
  }
}

function exit0() {
  process.exit(0)
}
