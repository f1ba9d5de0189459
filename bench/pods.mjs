#!/usr/bin/env node
// Start-up and `pods` cost, side by side with the Node floor (bench/floor-list-pods.mjs), at the
// lab's current pod count and with 100 more pods. Not a test: run `npm run bench` with the lab up
// and podctl built. Prints medians and the ratio to the floor.
import {CriClient} from '../dist/lib/cri/client.js'
import {compare, labEnv, PODCTL, ROOT, table} from './lib.mjs'

const rounds = Number(process.env.ROUNDS ?? 15)
const env = labEnv()
const endpoint = env.PODCTL_LAB_ENDPOINT
const runEnv = {CONTAINER_RUNTIME_ENDPOINT: endpoint, NO_COLOR: '1'}
const namespace = `bench-pods-${process.pid}`
const node = process.execPath

const cases = [
  {name: 'floor: ListPodSandbox (grpc-js only)', argv: [node, `${ROOT}bench/floor-list-pods.mjs`, endpoint]},
  {name: 'podctl --help', argv: [node, PODCTL, '--help']},
  {name: 'podctl pods', argv: [node, PODCTL, 'pods']},
  {name: 'podctl pods -o json', argv: [node, PODCTL, 'pods', '-o', 'json']},
]

const client = new CriClient({runtimeEndpoint: endpoint, callTimeoutMs: 120_000})
const count = async () => (await client.runtime('listPodSandbox', {})).items.length

async function measure(label) {
  const pods = await count()
  const medians = compare(cases, rounds, runEnv)
  const floor = medians[cases[0].name]
  return [
    [`${label} (${pods} pods)`, 'median ms', 'x floor'],
    ...cases.map(({name}) => [name, medians[name].toFixed(1), (medians[name] / floor).toFixed(2)]),
  ]
}

async function createPods(n) {
  const ids = []
  const queue = Array.from({length: n}, (_, i) => i)
  const worker = async () => {
    for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
      const name = `bench-${i}`
      const uid = `${process.pid}-${i}`
      const labels = {'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid}
      const {podSandboxId} = await client.runtime('runPodSandbox', {
        config: {metadata: {name, namespace, uid}, labels, logDirectory: `${env.PODCTL_LAB_LOG_ROOT}/${namespace}_${name}_${uid}`, linux: {}},
      })
      ids.push(podSandboxId)
    }
  }

  await Promise.all(Array.from({length: 4}, worker))
  return ids
}

async function removePods(ids) {
  const queue = [...ids]
  const worker = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      await client.runtime('stopPodSandbox', {podSandboxId: id}).catch(() => {})
      await client.runtime('removePodSandbox', {podSandboxId: id}).catch(() => {})
    }
  }

  await Promise.all(Array.from({length: 4}, worker))
}

let ids = []
try {
  const before = await measure('as found')
  console.error(`creating 100 sandboxes in ${namespace} ...`)
  ids = await createPods(100)
  const after = await measure('+100 pods')
  console.log(`podctl start-up and pods, ${rounds} interleaved rounds, node ${process.version}\n`)
  console.log(table(before))
  console.log()
  console.log(table(after))
} finally {
  console.error(`removing ${ids.length} sandboxes ...`)
  await removePods(ids)
  client.close()
}
