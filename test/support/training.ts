import type * as grpc from '@grpc/grpc-js'

import {startFakeRuntime} from './fake-runtime.js'

/**
 * A small, fixed node for the fake runtime: 8 pods (one not ready) with one container each (one
 * exited), 3 images. Used by the build to train the bundle's code cache
 * (scripts/bundle/train.mjs) and by test/e2e/parity.test.ts, so both run the same invocations.
 * Times are relative to `now` so the tables' CREATED column reads the same for a while.
 */
export function nodeFixtures(now = Date.now()) {
  const nowNs = BigInt(now) * 1_000_000n
  const hourNs = 3_600_000_000_000n
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
      createdAt: String(nowNs - BigInt(i + 1) * 2n * hourNs),
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
      createdAt: String(nowNs - BigInt(i + 1) * 2n * hourNs + 1_000_000_000n),
      labels: {...labels, 'io.kubernetes.container.name': 'app'},
      annotations: {},
    })
  }

  const images: Array<{id: string; repoTags: string[]; repoDigests: string[]; size: string; pinned?: boolean}> = [
    {id: 'sha256:' + 'd'.repeat(64), repoTags: ['localhost:5000/podctl/busybox:1.36'], repoDigests: [], size: '1200000'},
    {id: 'sha256:' + 'e'.repeat(64), repoTags: ['localhost:5000/podctl/pause:3.9'], repoDigests: [], size: '300000', pinned: true},
    {id: 'sha256:' + 'f'.repeat(64), repoTags: [], repoDigests: ['registry.example/app@sha256:' + 'f'.repeat(64)], size: '52000000'},
  ]
  return {pods, containers, images}
}

type Handler = grpc.handleUnaryCall<any, any>

function answer(value: unknown | ((request: any) => unknown)): Handler {
  return (call, callback) => callback(null, typeof value === 'function' ? value(call.request) : value)
}

/** Starts the fake runtime serving nodeFixtures() on a unix socket; resolves to its stop function. */
export function startFixtureRuntime(socket: string, now = Date.now()): Promise<() => Promise<void>> {
  const {pods, containers, images} = nodeFixtures(now)
  const runtime = {
    version: answer({version: '0.1.0', runtimeName: 'containerd', runtimeVersion: 'v1.6.20', runtimeApiVersion: 'v1'}),
    status: answer({
      status: {
        conditions: [
          {type: 'RuntimeReady', status: true, reason: '', message: ''},
          {type: 'NetworkReady', status: true, reason: '', message: ''},
        ],
      },
      info: {},
    }),
    runtimeConfig: answer({linux: {cgroupDriver: 'SYSTEMD'}}),
    listPodSandbox: answer({items: pods}),
    listContainers: answer({containers}),
    podSandboxStatus: answer((request: {podSandboxId: string}) => {
      const pod = pods.find((p) => p.id === request.podSandboxId) ?? pods[0]
      return {status: {...pod, network: {ip: '10.234.0.7', additionalIps: []}, linux: {namespaces: {options: {}}}}, info: {}}
    }),
    containerStatus: answer((request: {containerId: string}) => {
      const container = containers.find((c) => c.id === request.containerId) ?? containers[0]
      return {
        status: {
          ...container,
          startedAt: container.createdAt,
          exitCode: 0,
          reason: '',
          message: '',
          mounts: [],
          logPath: '/var/log/pods/x/app/0.log',
        },
        info: {},
      }
    }),
  }
  const image = {
    listImages: answer({images}),
    imageStatus: answer({image: images[0], info: {}}),
    imageFsInfo: answer({imageFilesystems: [], containerFilesystems: []}),
  }
  return startFakeRuntime(socket, runtime, image)
}

/**
 * The invocations the code caches are trained on, by group (src/launch.ts cacheGroup): the common
 * read-only commands in the forms people use, against the fixture runtime at `socket`. Each group
 * gets a cache of its own, trained on its runs alone; scripts/bundle/train.mjs names the groups.
 */
export function trainingGroups(socket: string): Record<string, string[][]> {
  const r = ['-r', `unix://${socket}`]
  return {
    pods: [
      ['pods', ...r],
      ['pods', ...r, '--color'],
      ['pods', ...r, '-o', 'wide'],
      ['pods', ...r, '-o', 'json'],
      ['pods', ...r, '-q'],
    ],
    // crictl's order: in ps, -r after the command is --resolve-image-path.
    ps: [
      [...r, 'ps'],
      [...r, 'ps', '-a'],
      [...r, 'ps', '-a', '--color'],
      [...r, 'ps', '-o', 'json'],
    ],
    images: [
      ['images', ...r],
      ['images', ...r, '--color'],
    ],
    status: [
      ['status', ...r],
      ['status', ...r, '--color'],
      ['status', ...r, '-o', 'json'],
    ],
    version: [['version', ...r]],
    help: [['--version'], ['--help'], [], ['pods', '--help'], ['ps', '--help']],
  }
}

/**
 * The invocations the cache for every other command is trained on: all the groups' runs, and the
 * first failures people meet.
 */
export function trainingRuns(socket: string): string[][] {
  return [
    ...Object.values(trainingGroups(socket)).flat(),
    ['pods', '-r', `unix://${socket}.missing`],
    ['pods', '-r', `unix://${socket}`, '--bogus'],
  ]
}

/** Training runs that are expected to fail (exit code other than 0). */
export function expectedToFail(argv: string[]): boolean {
  return argv.includes('--bogus') || argv.some((arg) => arg.endsWith('.missing'))
}
