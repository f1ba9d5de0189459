#!/usr/bin/env node
// A CRI runtime that answers List calls for N kubelet-labelled pods (2 containers each) from bytes
// encoded once at start, so a listing's time is the client's own: the runtime's time is out of the
// picture. A separate process, because the bench's spawnSync blocks its own event loop.
//   node bench/fake-cri.mjs SOCKET_PATH N      (prints "ready" on stdout once listening)
// With FAKE_CRI_LOG_CALLS=1 it also prints "call <RPC>" on stdout for each call it answers (tests
// count a command's calls with it: test/commands/pods-big.test.ts).
// Every other unary RPC answers its message's defaults (empty bytes), except Version and Status.
import {Server, ServerCredentials} from '@grpc/grpc-js'

import * as api from '../dist/generated/runtime/v1/api.js'

const [path, count = '0'] = process.argv.slice(2)
if (!path) throw new Error('usage: node bench/fake-cri.mjs SOCKET_PATH N')

const pods = Number(count)
const LOG_CALLS = process.env.FAKE_CRI_LOG_CALLS === '1'
const NOW_NS = BigInt(Date.now()) * 1_000_000n
const hex = (seed, length = 64) => {
  let out = ''
  for (let i = 0; out.length < length; i++) out += ((seed * 2_654_435_761 + i * 40_503) >>> 0).toString(16).padStart(8, '0')
  return out.slice(0, length)
}

const IMAGES = [
  {repo: 'registry.example.com/shop/web', tag: '1.27.3'},
  {repo: 'registry.example.com/shop/log-forwarder', tag: '2.1.0'},
  {repo: 'registry.k8s.io/pause', tag: '3.9'},
].map((image, i) => ({...image, id: `sha256:${hex(i + 7)}`}))

function podOf(i) {
  const name = `web-${hex(i, 10)}-${hex(i + 1, 5)}`
  const namespace = `team-${i % 20}`
  const uid = `${hex(i, 8)}-${hex(i, 4)}-${hex(i + 2, 4)}-${hex(i + 3, 4)}-${hex(i + 4, 12)}`
  const createdAt = String(NOW_NS - BigInt(i) * 7_000_000_000n)
  const kube = {'io.kubernetes.pod.name': name, 'io.kubernetes.pod.namespace': namespace, 'io.kubernetes.pod.uid': uid}
  return {name, namespace, uid, createdAt, kube, id: hex(i + 100)}
}

function sandboxOf(pod, i) {
  return {
    id: pod.id,
    metadata: {name: pod.name, uid: pod.uid, namespace: pod.namespace, attempt: 0},
    state: i % 10 === 9 ? 'SANDBOX_NOTREADY' : 'SANDBOX_READY',
    createdAt: pod.createdAt,
    labels: {...pod.kube, app: 'web', 'pod-template-hash': hex(i, 10), tier: 'frontend'},
    annotations: {
      'kubernetes.io/config.seen': '2026-12-01T10:00:00.000000000Z',
      'kubernetes.io/config.source': 'api',
      'kubectl.kubernetes.io/default-container': 'web',
    },
    runtimeHandler: '',
  }
}

function containersOf(pod, i) {
  return ['web', 'log-forwarder'].map((name, c) => ({
    id: hex(i * 2 + c + 10_000),
    podSandboxId: pod.id,
    metadata: {name, attempt: c},
    image: {image: IMAGES[c].id, annotations: {}, userSpecifiedImage: `${IMAGES[c].repo}:${IMAGES[c].tag}`},
    imageRef: IMAGES[c].id,
    state: i % 10 === 9 ? 'CONTAINER_EXITED' : 'CONTAINER_RUNNING',
    // The kubelet starts a pod's containers one after the other.
    createdAt: String(BigInt(pod.createdAt) + 1_000_000_000n + BigInt(c) * 40_000_000n),
    labels: {...pod.kube, 'io.kubernetes.container.name': name},
    annotations: {
      'io.kubernetes.container.hash': hex(i + c, 8),
      'io.kubernetes.container.restartCount': String(c),
      'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
      'io.kubernetes.container.terminationMessagePolicy': 'File',
      'io.kubernetes.pod.terminationGracePeriod': '30',
    },
  }))
}

const all = Array.from({length: pods}, (_, i) => [podOf(i), i])
const answers = {
  ListPodSandbox: api.ListPodSandboxResponse.encode(
    api.ListPodSandboxResponse.fromPartial({items: all.map(([pod, i]) => sandboxOf(pod, i))}),
  ).finish(),
  ListContainers: api.ListContainersResponse.encode(
    api.ListContainersResponse.fromPartial({containers: all.flatMap(([pod, i]) => containersOf(pod, i))}),
  ).finish(),
  ListImages: api.ListImagesResponse.encode(
    api.ListImagesResponse.fromPartial({
      images: IMAGES.map(({repo, tag, id}) => ({
        id,
        repoTags: [`${repo}:${tag}`],
        repoDigests: [`${repo}@sha256:${hex(9)}`],
        size: '4200000',
      })),
    }),
  ).finish(),
  Version: api.VersionResponse.encode(
    api.VersionResponse.fromPartial({version: '0.1.0', runtimeName: 'fake-cri', runtimeVersion: '1.0.0', runtimeApiVersion: 'v1'}),
  ).finish(),
  Status: api.StatusResponse.encode(
    api.StatusResponse.fromPartial({
      status: {
        conditions: [
          {type: 'RuntimeReady', status: true},
          {type: 'NetworkReady', status: true},
        ],
      },
    }),
  ).finish(),
}

/** The generated service with bytes in and out: requests are never decoded, answers never re-encoded. */
function raw(service) {
  const definition = {}
  const handlers = {}
  for (const [key, def] of Object.entries(service)) {
    if (def.requestStream || def.responseStream) continue
    const rpc = def.path.slice(def.path.lastIndexOf('/') + 1)
    const answer = Buffer.from(answers[rpc] ?? new Uint8Array(0))
    definition[key] = {...def, requestDeserialize: (buffer) => buffer, responseSerialize: (buffer) => buffer}
    handlers[key] = (_call, callback) => {
      if (LOG_CALLS) console.log(`call ${rpc}`)
      callback(null, answer)
    }
  }

  return [definition, handlers]
}

const server = new Server({'grpc.max_send_message_length': 64 << 20})
server.addService(...raw(api.RuntimeServiceService))
server.addService(...raw(api.ImageServiceService))
server.bindAsync(`unix://${path}`, ServerCredentials.createInsecure(), (error) => {
  if (error) throw error
  const kb = (bytes) => `${(bytes.length / 1024).toFixed(0)} KB`
  console.error(`fake-cri: ${pods} pods; ListPodSandbox ${kb(answers.ListPodSandbox)}, ListContainers ${kb(answers.ListContainers)}`)
  console.log('ready')
})
process.on('SIGTERM', () => server.forceShutdown())
