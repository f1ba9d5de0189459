#!/usr/bin/env node
/**
 * Benchmark (not a test): start and kill N one-container pods (image present).
 *
 *   podctl:  `podctl run -f <N-document manifest> --quiet --settle 0` then `podctl kill --all -n <ns>`,
 *            both with --parallel
 *   floor:   the same CRI calls made directly from this script with @grpc/grpc-js and the generated
 *            code (RunPodSandbox, PodSandboxStatus, ImageStatus, CreateContainer, StartContainer;
 *            StopContainer, StopPodSandbox, RemoveContainer, RemovePodSandbox), with the same number
 *            of pods in flight as podctl's --parallel, with minimal configs;
 *   replay:  the same calls again with the very requests podctl sends (taken from `podctl run
 *            --dry-run -o json` before the timing starts; the two files the container mounts, the
 *            pod's /etc/hosts and its termination-message file, are written first, as podctl and
 *            the kubelet write them): the kubelet's full configs make the runtime do more (the
 *            sandbox runs under the RuntimeDefault seccomp profile, masked paths, DNS), so this is
 *            the floor that isolates podctl's own cost.
 *
 * Prints both wall-clock times and the ratios per phase (podctl run ÷ floor start, podctl kill ÷ floor
 * kill) and in total; with --rounds > 1, podctl and the floor take turns going first, and the
 * median ratios are printed too. Needs the lab (scripts/lab.sh up) and a build (npm run build).
 *
 *   node bench/run-kill.mjs [--pods 20] [--parallel 3] [--namespace bench] [--rounds 1]
 */
import {spawn, spawnSync} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

import {labEnv} from './lib.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const BIN = join(ROOT, 'bin/run.js')
const GENERATED = join(ROOT, 'dist/generated/runtime/v1/api.js')

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`)
  return index > 0 ? process.argv[index + 1] : fallback
}

const PODS = Number(option('pods', '20'))
const PARALLEL = Number(option('parallel', '3'))
const NAMESPACE = option('namespace', 'bench')
const ROUNDS = Number(option('rounds', '1'))
const GRACE_SECONDS = 2
// PID 1 ends at once on SIGTERM (wait is interrupted by the trap), so both sides measure podctl, not the grace period.
const COMMAND = ['sh', '-c', 'trap "exit 0" TERM; sleep 3600 & wait']

const lab = labEnv()
const endpoint = lab.PODCTL_LAB_ENDPOINT
const image = lab.PODCTL_LAB_BUSYBOX
const logRoot = lab.PODCTL_LAB_LOG_ROOT

// ------------------------------------------------------------------------------------------------
// The floor: a minimal client, no validation, no events, no status reporting.

const grpc = await import('@grpc/grpc-js')
const api = await import(GENERATED)
const channel = new grpc.Client(endpoint, grpc.credentials.createInsecure(), {'grpc.default_authority': 'localhost'})

function call(service, method, request) {
  const definition = (service === 'runtime' ? api.RuntimeServiceService : api.ImageServiceService)[method]
  const name = definition.path.slice(definition.path.lastIndexOf('/') + 1)
  const type = api[`${name}Request`]
  return new Promise((resolve, reject) => {
    channel.makeUnaryRequest(
      definition.path,
      (value) => definition.requestSerialize(type.fromPartial(value)),
      definition.responseDeserialize,
      request,
      new grpc.Metadata(),
      {deadline: Date.now() + 120_000},
      (error, response) => (error ? reject(error) : resolve(response)),
    )
  })
}

async function mapLimit(items, limit, fn) {
  const results = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({length: Math.min(limit, items.length)}, async () => {
      while (next < items.length) {
        const index = next++
        results[index] = await fn(items[index], index)
      }
    }),
  )
  return results
}

function names(prefix) {
  return Array.from({length: PODS}, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`)
}

async function floorRun(namespace) {
  return mapLimit(names('floor'), PARALLEL, async (name) => {
    const uid = randomUUID()
    const labels = {'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid}
    const config = {
      metadata: {name, namespace, uid, attempt: 0},
      hostname: name,
      logDirectory: `${logRoot}/${namespace}_${name}_${uid}`,
      labels,
      annotations: {},
      linux: {},
    }
    const {podSandboxId} = await call('runtime', 'runPodSandbox', {config, runtimeHandler: ''})
    await call('runtime', 'podSandboxStatus', {podSandboxId})
    const {image: present} = await call('image', 'imageStatus', {image: {image}})
    const {containerId} = await call('runtime', 'createContainer', {
      podSandboxId,
      config: {
        metadata: {name: 'app', attempt: 0},
        image: {image: present.id, userSpecifiedImage: image},
        command: COMMAND,
        labels: {...labels, 'io.kubernetes.container.name': 'app'},
        logPath: 'app/0.log',
        linux: {},
      },
      sandboxConfig: config,
    })
    await call('runtime', 'startContainer', {containerId})
    return {podSandboxId, containerId}
  })
}

async function floorKill(pods) {
  await mapLimit(pods, PARALLEL, async ({podSandboxId, containerId}) => {
    await call('runtime', 'stopContainer', {containerId, timeout: String(GRACE_SECONDS)})
    await call('runtime', 'stopPodSandbox', {podSandboxId})
    await call('runtime', 'removeContainer', {containerId})
    await call('runtime', 'removePodSandbox', {podSandboxId})
  })
}

/** podctl's plan for N pods named prefix-NN: per pod, the RPCs and requests `run` would send. */
function plannedCalls(prefix, namespace, env) {
  const file = join(env.PODCTL_POD_DIR_ROOT, '..', `${prefix}.yaml`)
  writeFileSync(file, manifest(namespace, prefix))
  const plan = spawnSync(process.execPath, [BIN, 'run', '-f', file, '--dry-run', '-o', 'json'], {
    env: {...process.env, ...env, NO_COLOR: '1'},
    encoding: 'utf8',
  })
  if (plan.status !== 0) throw new Error(`podctl run --dry-run exited ${plan.status}: ${plan.stderr}`)
  return JSON.parse(plan.stdout).pods.map((pod) => pod.calls)
}

/** A request of the plan with podctl's placeholders filled in. */
function fill(request, values) {
  return JSON.parse(
    JSON.stringify(request).replaceAll(/<(sandbox id|image ID of [^>]*|container id of [^>]*|random)>/g, (_, key) => values(key)),
  )
}

async function replayRun(plans) {
  return mapLimit(plans, PARALLEL, async (calls) => {
    const request = (rpc) => calls.find((call) => call.rpc === rpc).request
    const ids = {random: randomUUID()}
    const values = (key) =>
      key.startsWith('image ID') ? ids.image : key.startsWith('container id') ? ids.container : key === 'random' ? ids.random : ids.sandbox
    ids.sandbox = (await call('runtime', 'runPodSandbox', request('RuntimeService/RunPodSandbox'))).podSandboxId
    await call('runtime', 'podSandboxStatus', fill(request('RuntimeService/PodSandboxStatus'), values))
    ids.image = (await call('image', 'imageStatus', request('ImageService/ImageStatus'))).image.id
    const create = fill(request('RuntimeService/CreateContainer'), values)
    for (const {hostPath} of create.config.mounts) {
      mkdirSync(dirname(hostPath), {recursive: true})
      writeFileSync(hostPath, '')
    }

    ids.container = (await call('runtime', 'createContainer', create)).containerId
    await call('runtime', 'startContainer', fill(request('RuntimeService/StartContainer'), values))
    return {podSandboxId: ids.sandbox, containerId: ids.container}
  })
}

// ------------------------------------------------------------------------------------------------
// podctl

function podctl(args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {env: {...process.env, ...env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']})
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.stdout.resume()
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`podctl ${args[0]} exited ${code}: ${stderr.trim()}`))))
  })
}

function manifest(namespace, prefix = 'pod') {
  return names(prefix)
    .map((name) =>
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {name, namespace},
        spec: {terminationGracePeriodSeconds: GRACE_SECONDS, containers: [{name: 'app', image, command: COMMAND}]},
      }),
    )
    .join('\n---\n')
}

async function assertEmpty(namespace) {
  const {items} = await call('runtime', 'listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})
  if (items.length > 0)
    throw new Error(`namespace ${namespace} still has ${items.length} sandboxes; remove them first (podctl kill --all -n ${namespace})`)
}

async function timed(fn) {
  const started = performance.now()
  await fn()
  return performance.now() - started
}

const seconds = (ms) => `${(ms / 1000).toFixed(2)}s`

async function main() {
  await call('image', 'pullImage', {image: {image}})
  await assertEmpty(NAMESPACE)
  const dir = mkdtempSync(join(tmpdir(), 'podctl-bench-'))
  const file = join(dir, 'pods.yaml')
  writeFileSync(file, manifest(NAMESPACE))
  const env = {CONTAINER_RUNTIME_ENDPOINT: endpoint, PODCTL_POD_LOGS_ROOT: logRoot, PODCTL_POD_DIR_ROOT: join(dir, 'pods')}

  const rows = []
  const podctlRound = async () => {
    // --settle 0: the settle window is a deliberate watch (1 s after the last start by default), not
    // work; the floor does not watch either. --parallel on both, so both keep PARALLEL pods in flight.
    const podctlRun = await timed(() => podctl(['run', '-f', file, '--quiet', '--parallel', String(PARALLEL), '--settle', '0'], env))
    const podctlKill = await timed(() => podctl(['kill', '--all', '-n', NAMESPACE, '--parallel', String(PARALLEL)], env))
    await assertEmpty(NAMESPACE)
    return {podctlRun, podctlKill}
  }

  const floorRound = async () => {
    let pods
    const floorStart = await timed(async () => (pods = await floorRun(NAMESPACE)))
    const floorStop = await timed(() => floorKill(pods))
    await assertEmpty(NAMESPACE)
    let replayed
    const plans = plannedCalls('replay', NAMESPACE, env)
    const replayStart = await timed(async () => (replayed = await replayRun(plans)))
    await floorKill(replayed)
    await assertEmpty(NAMESPACE)
    return {floorStart, floorStop, replayStart}
  }

  try {
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which goes first, so a machine that speeds up or slows down favours neither.
      const [a, b] = round % 2 ? [await podctlRound(), await floorRound()] : [await floorRound(), await podctlRound()]
      rows.push({round, ...a, ...b})
    }
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }

  const ratio = (a, b) => `${(a / b).toFixed(2)}x`
  console.log(`${PODS} one-container pods, ${PARALLEL} in flight, image present, namespace ${NAMESPACE}, endpoint ${endpoint}`)
  console.log(
    'round   podctl run   floor start   run ratio   replay start   run ratio (replay)   ' +
      'podctl kill   floor kill   kill ratio   total ratio',
  )
  for (const row of rows) {
    console.log(
      [
        String(row.round).padEnd(8),
        seconds(row.podctlRun).padEnd(13),
        seconds(row.floorStart).padEnd(14),
        ratio(row.podctlRun, row.floorStart).padEnd(12),
        seconds(row.replayStart).padEnd(15),
        ratio(row.podctlRun, row.replayStart).padEnd(21),
        seconds(row.podctlKill).padEnd(14),
        seconds(row.floorStop).padEnd(13),
        ratio(row.podctlKill, row.floorStop).padEnd(13),
        ratio(row.podctlRun + row.podctlKill, row.floorStart + row.floorStop),
      ].join(''),
    )
  }

  if (rows.length > 1) {
    const median = (values) => [...values].sort((x, y) => x - y)[values.length >> 1]
    const runs = median(rows.map((row) => row.podctlRun / row.floorStart))
    const replays = median(rows.map((row) => row.podctlRun / row.replayStart))
    const kills = median(rows.map((row) => row.podctlKill / row.floorStop))
    const totals = median(rows.map((row) => (row.podctlRun + row.podctlKill) / (row.floorStart + row.floorStop)))
    console.log(
      `median of ${rows.length} rounds: run ${runs.toFixed(2)}x (${replays.toFixed(2)}x of the replayed requests), ` +
        `kill ${kills.toFixed(2)}x, total ${totals.toFixed(2)}x`,
    )
  }
}

try {
  await main()
} finally {
  channel.close()
}
