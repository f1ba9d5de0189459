#!/usr/bin/env node
// Start-up and listing cost, side by side with the Node floor (bench/floor-list.mjs: grpc-js and
// one List call), at the lab's current size and with 100 more pods, each running one container.
// Not a test: run `npm run bench` with the lab up and podctl built. Prints medians and the median
// of the per-round ratios to the floor.
//   ROUNDS=15 node bench/listing.mjs
// Rows for the single executable appear when ./podctl-linux-<arch> exists (npm run build:binary) or
// PODCTL_BINARY names one; rows for crictl when crictl is on PATH.
// Then big nodes (issue 23): the listings against bench/fake-cri.mjs answering 1000 and 5000 kubelet-like
// pods (2 containers each) from pre-encoded bytes, so the runtime's own time is out of the picture.
//   FAKE_PODS=1000,5000 (the sizes; empty for none)   FAKE_ONLY=1 (skip the lab rows)
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {CriClient} from '../dist/lib/cri/client.js'
import {compare, labEnv, PODCTL, ROOT, startFakeCri, table} from './lib.mjs'

const rounds = Number(process.env.ROUNDS ?? 15)
const env = labEnv()
const endpoint = env.PODCTL_LAB_ENDPOINT
const runEnv = {CONTAINER_RUNTIME_ENDPOINT: endpoint, NO_COLOR: '1'}
const namespace = `bench-list-${process.pid}`
const node = process.execPath
const floor = (method) => [node, `${ROOT}bench/floor-list.mjs`, endpoint, method]
const binary = process.env.PODCTL_BINARY ?? `${ROOT}podctl-linux-${process.arch}`
const crictl = spawnSync('sh', ['-c', 'command -v crictl'], {encoding: 'utf8'}).stdout.trim()

const PODS = 'floor: ListPodSandbox'
const CONTAINERS = 'floor: ListContainers'
const cases = [
  {name: PODS, argv: floor('ListPodSandbox')},
  {name: CONTAINERS, argv: floor('ListContainers')},
  {name: 'podctl --help', argv: [node, PODCTL, '--help'], floor: PODS},
  {name: 'podctl pods', argv: [node, PODCTL, 'pods'], floor: PODS},
  {name: 'podctl pods -o json', argv: [node, PODCTL, 'pods', '-o', 'json'], floor: PODS},
  {name: 'podctl ps -a', argv: [node, PODCTL, 'ps', '-a'], floor: CONTAINERS},
  {name: 'podctl status', argv: [node, PODCTL, 'status'], floor: PODS},
  // What a first run costs when no cache fits (another Node version): one such start, then the above.
  {name: 'podctl pods, no code cache', argv: [node, PODCTL, 'pods'], env: {PODCTL_CODE_CACHE: '0'}, floor: PODS},
  // The unbundled ESM path as bin/run.js ran it before the bundle (bin/dev.js outside oclif's development mode).
  {name: 'podctl pods, unbundled (bin/dev.js)', argv: [node, `${ROOT}bin/dev.js`, 'pods'], env: {NODE_ENV: 'production'}, floor: PODS},
]
if (existsSync(binary)) {
  const name = binary.slice(binary.lastIndexOf('/') + 1)
  cases.push(
    {name: `${name} --help`, argv: [binary, '--help'], floor: PODS},
    {name: `${name} pods`, argv: [binary, 'pods'], floor: PODS},
    {name: `${name} ps -a`, argv: [binary, 'ps', '-a'], floor: CONTAINERS},
    {name: `${name} status`, argv: [binary, 'status'], floor: PODS},
  )
}

if (crictl) {
  cases.push(
    {name: 'crictl pods', argv: [crictl, 'pods'], floor: PODS},
    {name: 'crictl ps -a', argv: [crictl, 'ps', '-a'], floor: CONTAINERS},
  )
}

const client = new CriClient({runtimeEndpoint: endpoint, callTimeoutMs: 120_000})

async function measure(label) {
  const [{items}, {containers}] = await Promise.all([client.runtime('listPodSandbox', {}), client.runtime('listContainers', {})])
  const results = compare(cases, rounds, runEnv)
  return [
    [`${label}: ${items.length} pods, ${containers.length} containers`, 'median ms', 'x floor'],
    ...cases.map(({name}) => [name, results[name].ms.toFixed(1), results[name].ratio?.toFixed(2) ?? '']),
  ]
}

async function pool(items, fn) {
  const queue = [...items]
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item)
  }

  await Promise.all(Array.from({length: 4}, worker))
}

async function createPods(n) {
  await client.image('pullImage', {image: {image: env.PODCTL_LAB_BUSYBOX}}, {timeoutMs: 300_000})
  const ids = []
  await pool(
    Array.from({length: n}, (_, i) => i),
    async (i) => {
      const name = `bench-${i}`
      const uid = `${process.pid}-${i}`
      const labels = {'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid}
      const config = {
        metadata: {name, namespace, uid},
        labels,
        logDirectory: `${env.PODCTL_LAB_LOG_ROOT}/${namespace}_${name}_${uid}`,
        linux: {},
      }
      const {podSandboxId} = await client.runtime('runPodSandbox', {config})
      ids.push(podSandboxId)
      const {containerId} = await client.runtime('createContainer', {
        podSandboxId,
        config: {
          metadata: {name: 'app'},
          image: {image: env.PODCTL_LAB_BUSYBOX},
          command: ['sleep', '3600'],
          labels: {...labels, 'io.kubernetes.container.name': 'app'},
          logPath: 'app/0.log',
        },
        sandboxConfig: config,
      })
      await client.runtime('startContainer', {containerId})
    },
  )
  return ids
}

async function removePods(ids) {
  await pool(ids, async (id) => {
    await client.runtime('stopPodSandbox', {podSandboxId: id}).catch(() => {})
    await client.runtime('removePodSandbox', {podSandboxId: id}).catch(() => {})
  })
}

/** The listings against a fake runtime of `pods` pods, in a process of its own (spawnSync blocks this one). */
async function measureFake(pods) {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-bench-fake-'))
  const socket = join(dir, 'cri.sock')
  let server
  try {
    server = await startFakeCri(socket, pods)
    const endpoint = `unix://${socket}`
    const fakeFloor = (method, window) => [node, `${ROOT}bench/floor-list.mjs`, endpoint, method, ...(window ? [window] : [])]
    // The same floors with podctl's 16 MiB HTTP/2 window (cri/client.ts), and for `pods` both of the calls it
    // makes (ListContainers too, for its CONTAINERS column): what is left is decoding and printing.
    const windowed = (name) => `${name}, 16 MiB window`
    const BOTH = 'floor: ListPodSandbox + ListContainers'
    const sameCalls = (name) => (/ pods/.test(name) ? windowed(BOTH) : windowed(CONTAINERS))
    const fakeCases = [
      {name: PODS, argv: fakeFloor('ListPodSandbox')},
      {name: CONTAINERS, argv: fakeFloor('ListContainers')},
      {name: windowed(PODS), argv: fakeFloor('ListPodSandbox', String(16 << 20))},
      {name: windowed(CONTAINERS), argv: fakeFloor('ListContainers', String(16 << 20))},
      {name: windowed(BOTH), argv: fakeFloor('ListPodSandbox+ListContainers', String(16 << 20))},
      ...cases
        .filter(({name}) => /^(podctl|crictl) (pods|ps -a)/.test(name) && !name.includes(','))
        .map((item) => ({...item, floor2: sameCalls(item.name)})),
    ]
    const results = compare(fakeCases, rounds, {...runEnv, CONTAINER_RUNTIME_ENDPOINT: endpoint})
    return [
      [`fake runtime: ${pods} pods, ${pods * 2} containers`, 'median ms', 'x floor', 'x floor of its calls, same window'],
      ...fakeCases.map(({name}) => [
        name,
        results[name].ms.toFixed(1),
        results[name].ratio?.toFixed(2) ?? '',
        results[name].ratio2?.toFixed(2) ?? '',
      ]),
    ]
  } finally {
    server?.kill()
    rmSync(dir, {recursive: true, force: true})
  }
}

const fakeSizes = (process.env.FAKE_PODS ?? '1000,5000').split(',').filter(Boolean).map(Number)
let ids = []
try {
  console.log(`podctl start-up and listing, ${rounds} interleaved rounds, node ${process.version}; x floor = median of per-round ratios\n`)
  if (process.env.FAKE_ONLY !== '1') {
    const before = await measure('as found')
    console.error(`creating 100 pods with one container each in ${namespace} ...`)
    ids = await createPods(100)
    const after = await measure('+100')
    console.log(table(before))
    console.log()
    console.log(table(after))
    console.log()
  }

  for (const pods of fakeSizes) {
    console.log(table(await measureFake(pods)))
    console.log()
  }
} finally {
  if (ids.length > 0) console.error(`removing ${ids.length} pods ...`)
  await removePods(ids)
  client.close()
}
