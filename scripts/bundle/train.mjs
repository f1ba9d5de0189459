#!/usr/bin/env node
// Trains the bundle's V8 code cache: runs the common commands (pods, ps, images, status, version,
// help) in one process against the fake runtime of test/support/fake-runtime.ts, then asks V8 for
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

/** The commands the cache is trained on: the common read-only ones, in the forms people use. */
export function trainingRuns(socket) {
  const r = ['-r', `unix://${socket}`]
  return [
    ['pods', ...r],
    ['pods', ...r, '--color'],
    ['pods', ...r, '-o', 'wide'],
    ['pods', ...r, '-o', 'json'],
    ['pods', ...r, '-q'],
    ['ps', ...r],
    ['ps', '-a', ...r],
    ['ps', '-a', ...r, '--color'],
    ['ps', ...r, '-o', 'json'],
    ['images', ...r],
    ['images', ...r, '--color'],
    ['status', ...r],
    ['status', ...r, '--color'],
    ['status', ...r, '-o', 'json'],
    ['version', ...r],
    ['--version'],
    ['--help'],
    [],
    ['pods', '--help'],
    ['ps', '--help'],
    // The failures people meet first: no runtime there, and a mistyped flag.
    ['pods', '-r', `unix://${socket}.missing`],
    ['pods', ...r, '--bogus'],
  ]
}

const NOW_NS = BigInt(Date.now()) * 1_000_000n

function fixtures() {
  const pods = []
  const containers = []
  for (let i = 0; i < 8; i++) {
    const name = `web-${i}`
    const namespace = i % 2 ? 'default' : 'kube-system'
    const uid = `0000000${i}-1111-2222-3333-444444444444`
    const labels = {'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid}
    const podId = `${i}`.repeat(8) + 'a'.repeat(56)
    pods.push({
      id: podId,
      metadata: {name, namespace, uid, attempt: 0},
      state: i === 7 ? 'SANDBOX_NOTREADY' : 'SANDBOX_READY',
      createdAt: String(NOW_NS - BigInt(i) * 3_600_000_000_000n),
      labels,
      annotations: {},
      runtimeHandler: '',
    })
    containers.push({
      id: `${i}`.repeat(8) + 'c'.repeat(56),
      podSandboxId: podId,
      metadata: {name: 'app', attempt: i % 3},
      image: {image: 'sha256:' + 'd'.repeat(64), userSpecifiedImage: 'localhost:5000/podctl/busybox:1.36'},
      imageRef: 'sha256:' + 'd'.repeat(64),
      state: i === 7 ? 'CONTAINER_EXITED' : 'CONTAINER_RUNNING',
      createdAt: String(NOW_NS - BigInt(i) * 3_500_000_000_000n),
      labels: {...labels, 'io.kubernetes.container.name': 'app'},
      annotations: {},
    })
  }

  const images = [
    {id: 'sha256:' + 'd'.repeat(64), repoTags: ['localhost:5000/podctl/busybox:1.36'], repoDigests: [], size: '1200000'},
    {id: 'sha256:' + 'e'.repeat(64), repoTags: ['localhost:5000/podctl/pause:3.9'], repoDigests: [], size: '300000', pinned: true},
    {id: 'sha256:' + 'f'.repeat(64), repoTags: [], repoDigests: ['registry.example/app@sha256:' + 'f'.repeat(64)], size: '52000000'},
  ]
  return {pods, containers, images}
}

function handlers() {
  const {pods, containers, images} = fixtures()
  const ok = (value) => (_call, callback) => callback(null, typeof value === 'function' ? value(_call.request) : value)
  const runtime = {
    version: ok({version: '0.1.0', runtimeName: 'containerd', runtimeVersion: 'v1.6.20', runtimeApiVersion: 'v1'}),
    status: ok({
      status: {
        conditions: [
          {type: 'RuntimeReady', status: true, reason: '', message: ''},
          {type: 'NetworkReady', status: true, reason: '', message: ''},
        ],
      },
      info: {},
    }),
    runtimeConfig: ok({linux: {cgroupDriver: 'SYSTEMD'}}),
    listPodSandbox: ok({items: pods}),
    listContainers: ok({containers}),
    podSandboxStatus: ok((request) => {
      const pod = pods.find((p) => p.id === request.podSandboxId) ?? pods[0]
      return {status: {...pod, network: {ip: '10.234.0.7', additionalIps: []}, linux: {namespaces: {options: {}}}}, info: {}}
    }),
    containerStatus: ok((request) => {
      const container = containers.find((c) => c.id === request.containerId) ?? containers[0]
      return {status: {...container, startedAt: container.createdAt, exitCode: 0, reason: '', message: '', mounts: [], logPath: '/var/log/pods/x/app/0.log'}, info: {}}
    }),
  }
  const image = {
    listImages: ok({images}),
    imageStatus: ok({image: images[0], info: {}}),
    imageFsInfo: ok({imageFilesystems: [], containerFilesystems: []}),
  }
  return {runtime, image}
}

/** Compiles test/support/fake-runtime.ts (TypeScript) to a module this script can import. */
async function loadFakeRuntime(dir) {
  const {rolldown} = await import('rolldown')
  const bundle = await rolldown({
    input: join(ROOT, 'test', 'support', 'fake-runtime.ts'),
    platform: 'node',
    external: (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0'),
    resolve: {extensionAlias: {'.js': ['.ts', '.js']}},
    logLevel: 'warn',
  })
  const file = join(dir, 'fake-runtime.mjs')
  await bundle.write({file, format: 'esm'})
  await bundle.close()
  return import(pathToFileURL(file).href)
}

async function train(bundleFile, out) {
  const {compileBundle, cacheHeader} = await import(pathToFileURL(join(ROOT, 'dist', 'launch.js')).href)
  // Next to the bundle (not in /tmp) so the compiled fake runtime resolves grpc-js from node_modules.
  const work = join(ROOT, 'dist', 'bundle', '.train')
  rmSync(work, {recursive: true, force: true})
  mkdirSync(work, {recursive: true})
  const {startFakeRuntime} = await loadFakeRuntime(work)
  const socket = join(work, 'cri.sock')
  const {runtime, image} = handlers()
  const stop = await startFakeRuntime(socket, runtime, image)

  // The commands would read the developer's crictl config and exit on failure; keep them to the fake.
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
      if (process.exitCode && !argv.includes('--bogus') && !argv.some((a) => a.endsWith('.missing'))) failures.push(`${argv.join(' ')} exited ${process.exitCode}`)
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
    if (process.execArgv.length > 0) throw new Error(`train without Node options (got ${process.execArgv.join(' ')}): V8 rejects caches made under other flags`)
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
