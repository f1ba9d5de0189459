#!/usr/bin/env node
/**
 * Benchmark (not a test): a test's pod's whole life through the library against the same done with
 * crictl, paired in one run (issue 36).
 *
 *   library: `runtime.runPod(manifest, {wait: 'ready'})` then `pod.kill()` on one connection (the
 *            library's defaults: no settle, 2 s grace), one one-container pod at a time;
 *   crictl:  the reference crictl's own calls for the same pod: `runp`, `create`, `start`, then
 *            `stopp`, `rmp` (one process each, as a shell script drives it).
 *
 * Each pod takes turns going first (library, crictl, crictl, library, ...), so machine noise hits
 * both alike. Prints p50 and p95 over the pods of each side, for run-to-ready, kill and the whole
 * life, and the median of the per-pod ratios (library ÷ crictl, paired). PID 1 ends on SIGTERM on
 * both sides, so neither measures a grace period. Needs the lab (scripts/lab.sh up) and a build.
 *
 *   node bench/library-lifecycle.mjs [--pods 20] [--namespace bench-lib]
 */
import {execFileSync} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {labEnv, ROOT} from './lib.mjs'

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`)
  return index > 0 ? process.argv[index + 1] : fallback
}

const PODS = Number(option('pods', '20'))
const NAMESPACE = `${option('namespace', 'bench-lib')}-${randomUUID().slice(0, 6)}`
const COMMAND = ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait']
const lab = labEnv()
const endpoint = lab.PODCTL_LAB_ENDPOINT
const crictl = lab.PODCTL_LAB_CRICTL || '/var/cache/podctl-lab/bin/crictl-v1.37.0/crictl'
const work = mkdtempSync(join(tmpdir(), 'podctl-bench-lib-'))
const {connect} = await import(join(ROOT, 'dist/lib/api/index.js'))

function crictlCall(...args) {
  // The lab's crictl.yaml for this runtime (endpoints, timeout), so crictl looks for no other config.
  const config = `/run/podctl-lab/rt/${lab.PODCTL_LAB_RUNTIME}/crictl.yaml`
  return execFileSync(crictl, ['--config', config, '--runtime-endpoint', endpoint, ...args], {encoding: 'utf8'}).trim()
}

async function timed(action) {
  const started = performance.now()
  const value = await action()
  return {ms: performance.now() - started, value}
}

async function libraryLife(runtime, index) {
  const manifest = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name: `lib-${index}`, namespace: NAMESPACE},
    spec: {containers: [{name: 'app', image: lab.PODCTL_LAB_BUSYBOX, command: COMMAND}]},
  }
  const run = await timed(() => runtime.runPod(manifest, {wait: 'ready'}))
  const kill = await timed(() => run.value.kill())
  return {run: run.ms, kill: kill.ms}
}

async function crictlLife(index) {
  const name = `crictl-${index}`
  const logDirectory = join(work, 'logs', name)
  mkdirSync(logDirectory, {recursive: true})
  const podConfig = join(work, `${name}-pod.json`)
  const containerConfig = join(work, `${name}-container.json`)
  writeFileSync(
    podConfig,
    JSON.stringify({metadata: {name, namespace: NAMESPACE, uid: randomUUID(), attempt: 0}, log_directory: logDirectory, linux: {}}),
  )
  writeFileSync(
    containerConfig,
    JSON.stringify({metadata: {name: 'app'}, image: {image: lab.PODCTL_LAB_BUSYBOX}, command: COMMAND, log_path: 'app/0.log', linux: {}}),
  )
  let sandbox = ''
  const run = await timed(() => {
    sandbox = crictlCall('runp', podConfig)
    const container = crictlCall('create', sandbox, containerConfig, podConfig)
    crictlCall('start', container)
  })
  const kill = await timed(() => {
    crictlCall('stopp', sandbox)
    crictlCall('rmp', sandbox)
  })
  return {run: run.ms, kill: kill.ms}
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

const median = (values) => percentile(values, 50)

const runtime = await connect({runtimeEndpoint: endpoint, podLogsRoot: lab.PODCTL_LAB_LOG_ROOT, podDirRoot: join(work, 'pods'), env: {}})
const sides = {library: [], crictl: []}
try {
  // One untimed pod each first: the image's layers and the runtime's caches warm for both.
  await libraryLife(runtime, 'warm')
  await crictlLife('warm')
  for (let index = 0; index < PODS; index++) {
    const libraryFirst = index % 4 === 0 || index % 4 === 3
    if (libraryFirst) sides.library.push(await libraryLife(runtime, index))
    sides.crictl.push(await crictlLife(index))
    if (!libraryFirst) sides.library.push(await libraryLife(runtime, index))
  }
} finally {
  await runtime[Symbol.asyncDispose]()
  rmSync(work, {recursive: true, force: true})
}

const left = crictlCall('pods', '--namespace', NAMESPACE, '-q')
if (left) throw new Error(`pods left in ${NAMESPACE}: ${left}`)

const whole = (life) => life.run + life.kill
const rows = [
  ['run to ready', (life) => life.run],
  ['kill', (life) => life.kill],
  ['whole life', whole],
].map(([label, pick]) => {
  const lib = sides.library.map(pick)
  const cri = sides.crictl.map(pick)
  const ratios = lib.map((ms, index) => ms / cri[index])
  return {label, lib, cri, ratio: median(ratios)}
})
console.log(`${PODS} pods each, one at a time, ${lab.PODCTL_LAB_RUNTIME_NAME} ${lab.PODCTL_LAB_RUNTIME_VERSION}; ms (p50 / p95)`)
for (const {label, lib, cri, ratio} of rows) {
  const cell = (values) => `${median(values).toFixed(0)} / ${percentile(values, 95).toFixed(0)}`
  console.log(
    `${label.padEnd(13)} library ${cell(lib).padEnd(12)} crictl ${cell(cri).padEnd(12)} paired ratio (median) ${ratio.toFixed(2)}`,
  )
}
