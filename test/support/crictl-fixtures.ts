import type * as grpc from '@grpc/grpc-js'

import {startFakeRuntime} from './fake-runtime.js'
import {nodeFixtures} from './training.js'

/**
 * The fixture node of training.ts, filled out with everything crictl prints as JSON: verbose info
 * maps (JSON and not), mounts, pod networks and namespaces, image specs, stats, filesystem usage,
 * and strings Go escapes (<, >, &). `now` is fixed, so the answers (and crictl's output) never
 * change: test/fixtures/crictl-golden/ holds what the reference crictl printed for CRICTL_CASES
 * (recorded by scripts/crictl-golden.mjs), and test/commands/crictl-json.test.ts checks that
 * podctl, as crictl, prints the same bytes.
 */
export const CRICTL_FIXTURE_NOW = Date.UTC(2026, 0, 1, 12, 0, 0)

const ns = (ms: number) => String(BigInt(ms) * 1_000_000n + 123_456n)
const u64 = (value: number) => ({value: String(value)})

export function crictlFixtures(now = CRICTL_FIXTURE_NOW) {
  const {pods, containers, images} = nodeFixtures(now)
  // Go's escapes and map order: keys that sort differently in UTF-16 and bytes, HTML characters.
  pods[0].annotations = {'kubernetes.io/config.source': 'api', 'z-last': 'a<b>&c', 'A-upper': 'x'}
  // What go-yaml quotes or folds: words YAML reads as other types, indicators, long text with spaces.
  pods[1].annotations = {
    bool: 'true',
    number: '123',
    float: '1.5e3',
    empty: '',
    date: '2026-01-01',
    dash: '- item',
    colon: 'key: value',
    hash: '#comment',
    quote: "it's",
    star: '*ref',
    spaces: ' padded ',
    long: 'a description that is long enough to pass the eighty columns go-yaml folds plain text at, with more words after it',
    key10: 'x',
    key9: 'y',
    Key2: 'z',
    ünïcode: 'wert',
  }
  containers[0].annotations = {'io.kubernetes.container.hash': 'a1b2', 'io.kubernetes.container.restartCount': '0'}
  const containerInfo = {
    sandboxID: pods[0].id,
    pid: 4242,
    removing: false,
    runtimeSpec: {ociVersion: '1.1.0', process: {args: ['sh', '-c', 'sleep 3600 && echo <done>'], cwd: '/'}, annotations: {}},
    snapshotter: 'overlayfs',
    empty: [],
  }
  const statusInfo = {
    config: JSON.stringify({
      containerd: {snapshotter: 'overlayfs', runtimes: {runc: {type: 'io.containerd.runc.v2'}}},
      sandboxImage: 'localhost:5000/podctl/pause:3.9',
      enableCDI: false,
      maxConcurrentDownloads: 3,
    }),
    golang: '"go1.20.14"',
    lastCNILoadStatus: '"OK"',
    'lastCNILoadStatus.default': 'OK',
    cniconfig: JSON.stringify({
      PluginDirs: ['/opt/cni/bin'],
      Networks: [{Config: {Name: 'cni-loopback', CNIVersion: '0.3.1'}, IFName: 'lo'}],
    }),
  }
  const containerStats = containers.map((container, i) => ({
    attributes: {id: container.id, metadata: container.metadata, labels: container.labels, annotations: container.annotations},
    cpu: {timestamp: ns(now), usageCoreNanoSeconds: u64(1_000_000_000 * (i + 1)), usageNanoCores: u64(1_000_000 * i)},
    memory: {
      timestamp: ns(now),
      workingSetBytes: u64(4_000_000 + i),
      availableBytes: u64(0),
      usageBytes: u64(5_000_000),
      rssBytes: u64(3_000_000),
      pageFaults: u64(10),
      majorPageFaults: u64(0),
    },
    writableLayer: {
      timestamp: ns(now),
      fsId: {mountpoint: '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs'},
      usedBytes: u64(4096 * i),
      inodesUsed: u64(i),
    },
  }))
  const podStats = pods.slice(0, 3).map((pod, i) => ({
    attributes: {id: pod.id, metadata: pod.metadata, labels: pod.labels, annotations: pod.annotations},
    linux: {
      cpu: {timestamp: ns(now), usageCoreNanoSeconds: u64(2_000_000_000 + i), usageNanoCores: u64(0)},
      memory: {timestamp: ns(now), workingSetBytes: u64(8_000_000 + i)},
      network: {
        timestamp: ns(now),
        defaultInterface: {name: 'eth0', rxBytes: u64(100), rxErrors: u64(0), txBytes: u64(200), txErrors: u64(0)},
        interfaces: [],
      },
      process: {timestamp: ns(now), processCount: u64(2)},
      containers: [containerStats[i]],
    },
  }))
  return {pods, containers, images, containerInfo, statusInfo, containerStats, podStats}
}

interface Filter {
  id?: string
  state?: {state: string}
  podSandboxId?: string
  labelSelector?: Record<string, string>
}

function matches(
  item: {id: string; state?: string; podSandboxId?: string; labels?: Record<string, string>},
  filter: Filter | undefined,
): boolean {
  if (!filter) return true
  if (filter.id && !item.id.startsWith(filter.id)) return false
  if (filter.state && item.state !== filter.state.state) return false
  if (filter.podSandboxId && !item.podSandboxId?.startsWith(filter.podSandboxId)) return false
  return Object.entries(filter.labelSelector ?? {}).every(([key, value]) => item.labels?.[key] === value)
}

const answer =
  <R>(value: unknown | ((request: R) => unknown)): grpc.handleUnaryCall<R, unknown> =>
  (call, callback) =>
    callback(null, typeof value === 'function' ? value(call.request) : value)

/** Starts the fake runtime serving crictlFixtures() on a unix socket; resolves to its stop function. */
export function startCrictlFixtureRuntime(socket: string, now = CRICTL_FIXTURE_NOW): Promise<() => Promise<void>> {
  const {pods, containers, images, containerInfo, statusInfo, containerStats, podStats} = crictlFixtures(now)
  const byPrefix = <T extends {id: string}>(items: T[], id: string): T | undefined => items.find((item) => item.id.startsWith(id))
  const runtime = {
    version: answer({version: '0.1.0', runtimeName: 'containerd', runtimeVersion: 'v1.6.20', runtimeApiVersion: 'v1'}),
    status: answer((request: {verbose: boolean}) => ({
      status: {
        conditions: [
          {type: 'RuntimeReady', status: true, reason: '', message: ''},
          {type: 'NetworkReady', status: false, reason: 'NetworkPluginNotReady', message: 'cni config load failed: <none>'},
        ],
      },
      info: request.verbose ? statusInfo : {},
    })),
    // Filters as containerd applies them: ID prefix, state, sandbox, labels.
    listPodSandbox: answer((request: {filter?: Filter}) => ({items: pods.filter((pod) => matches(pod, request.filter))})),
    listContainers: answer((request: {filter?: Filter}) => ({
      containers: containers.filter((container) => matches(container, request.filter)),
    })),
    podSandboxStatus: answer((request: {podSandboxId: string; verbose: boolean}) => {
      const pod = byPrefix(pods, request.podSandboxId) ?? pods[0]
      return {
        status: {
          ...pod,
          network: {ip: '10.234.0.7', additionalIps: [{ip: 'fd00::7'}]},
          linux: {namespaces: {options: {network: 'POD', pid: 'CONTAINER', ipc: 'POD', targetId: ''}}},
        },
        info: request.verbose
          ? {
              info: JSON.stringify({
                pid: 4000,
                processStatus: 'running',
                netNamespaceClosed: false,
                image: 'localhost:5000/podctl/pause:3.9',
              }),
            }
          : {},
      }
    }),
    containerStatus: answer((request: {containerId: string; verbose: boolean}) => {
      const container = byPrefix(containers, request.containerId) ?? containers[0]
      const exited = container.state === 'CONTAINER_EXITED'
      return {
        status: {
          ...container,
          startedAt: String(BigInt(container.createdAt) + 500_000_000n),
          finishedAt: exited ? String(BigInt(container.createdAt) + 3_600_000_000_000n) : '0',
          exitCode: exited ? 137 : 0,
          reason: exited ? 'Error' : '',
          message: '',
          mounts: [
            {
              containerPath: '/data',
              hostPath: '/var/lib/podctl/data',
              readonly: true,
              selinuxRelabel: false,
              propagation: 'PROPAGATION_PRIVATE',
            },
          ],
          logPath: `/var/log/pods/default_web/app/${container.metadata.attempt}.log`,
          resources: {
            linux: {
              cpuPeriod: '100000',
              cpuQuota: '50000',
              cpuShares: '512',
              memoryLimitInBytes: '67108864',
              oomScoreAdj: '-997',
              cpusetCpus: '',
              cpusetMems: '',
              unified: {},
            },
          },
        },
        info: request.verbose ? {info: JSON.stringify({...containerInfo, sandboxID: container.podSandboxId}), note: 'not json'} : {},
      }
    }),
    listContainerStats: answer((request: {filter?: Filter}) => ({
      stats: [...containerStats]
        .reverse()
        .filter((stats) =>
          matches({...stats.attributes, podSandboxId: containers.find((c) => c.id === stats.attributes.id)?.podSandboxId}, request.filter),
        ),
    })),
    listPodSandboxStats: answer((request: {filter?: Filter}) => ({
      stats: [...podStats].reverse().filter((stats) => matches(stats.attributes, request.filter)),
    })),
  }
  const image = {
    // A tag or an ID filter, as newer containerd applies it (1.6 ignores it; crictl prints what comes back).
    listImages: answer((request: {filter?: {image?: {image: string}}}) => {
      const wanted = request.filter?.image?.image
      return {images: wanted ? images.filter((candidate) => candidate.id === wanted || candidate.repoTags.includes(wanted)) : images}
    }),
    imageStatus: answer((request: {image: {image: string}; verbose: boolean}) => {
      const found =
        images.find((candidate) => candidate.id.startsWith(request.image.image) || candidate.repoTags.includes(request.image.image)) ??
        images[0]
      return {
        image: {
          ...found,
          uid: {value: '0'},
          username: '',
          spec: {image: found.id, annotations: {'io.cri-containerd.image': 'managed'}, userSpecifiedImage: '', runtimeHandler: ''},
        },
        info: request.verbose
          ? {
              info: JSON.stringify({
                chainID: 'sha256:' + '9'.repeat(64),
                imageSpec: {architecture: 'amd64', os: 'linux', config: {Env: ['PATH=/usr/local/sbin:/usr/bin'], Cmd: ['sh']}},
              }),
            }
          : {},
      }
    }),
    imageFsInfo: answer({
      imageFilesystems: [
        {
          timestamp: ns(now),
          fsId: {mountpoint: '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs'},
          usedBytes: u64(123_456_789),
          inodesUsed: u64(4321),
        },
      ],
      containerFilesystems: [],
    }),
  }
  return startFakeRuntime(socket, runtime, image)
}

const POD = '1'.repeat(8) + 'a'.repeat(56)
const EXITED = '7'.repeat(8) + 'c'.repeat(56)
const RUNNING = '2'.repeat(8) + 'c'.repeat(56)
const IMAGE = 'sha256:' + 'd'.repeat(64)

/**
 * One case a file: crictl v1.29's argv (after its global flags), which podctl as crictl takes as it is,
 * and the time zone both run in (TZ; UTC unless said).
 */
export const CRICTL_CASES: ReadonlyArray<{name: string; crictl: string[]; tz?: string}> = [
  {name: 'pods-json', crictl: ['pods', '-o', 'json']},
  {name: 'pods-yaml', crictl: ['pods', '-o', 'yaml']},
  {name: 'pods-name-json', crictl: ['pods', '--name', 'web-3', '-o', 'json']},
  {name: 'pods-notready-json', crictl: ['pods', '--state', 'notready', '-o', 'json']},
  {name: 'pods-last-json', crictl: ['pods', '--last', '2', '-o', 'json']},
  {name: 'pods-none-json', crictl: ['pods', '--name', 'nothing', '-o', 'json']},
  {name: 'ps-json', crictl: ['ps', '-o', 'json']},
  {name: 'ps-all-json', crictl: ['ps', '-a', '-o', 'json']},
  {name: 'ps-all-yaml', crictl: ['ps', '-a', '-o', 'yaml']},
  {name: 'ps-latest-json', crictl: ['ps', '--latest', '-o', 'json']},
  {name: 'ps-pod-label-json', crictl: ['ps', '-a', '-p', POD, '--label', 'io.kubernetes.container.name=app', '-o', 'json']},
  {name: 'images-json', crictl: ['images', '-o', 'json']},
  {name: 'images-yaml', crictl: ['images', '-o', 'yaml']},
  {name: 'images-repo-json', crictl: ['images', '-o', 'json', 'localhost:5000/podctl/pause:3.9']},
  {name: 'inspect-running', crictl: ['inspect', RUNNING]},
  {name: 'inspect-exited', crictl: ['inspect', EXITED]},
  {name: 'inspect-yaml', crictl: ['inspect', '-o', 'yaml', RUNNING]},
  {name: 'inspect-quiet', crictl: ['inspect', '-q', RUNNING]},
  {name: 'inspect-two', crictl: ['inspect', RUNNING, EXITED]},
  // inspect's times are local: a zone east of UTC, and one west with a half hour.
  {name: 'inspect-berlin', crictl: ['inspect', EXITED], tz: 'Europe/Berlin'},
  {name: 'inspectp-newfoundland', crictl: ['inspectp', POD], tz: 'America/St_Johns'},
  {name: 'inspectp', crictl: ['inspectp', POD]},
  {name: 'inspectp-yaml', crictl: ['inspectp', '-o', 'yaml', POD]},
  {name: 'inspecti', crictl: ['inspecti', IMAGE]},
  {name: 'info', crictl: ['info']},
  {name: 'info-yaml', crictl: ['info', '-o', 'yaml']},
  {name: 'info-quiet', crictl: ['info', '-q']},
  {name: 'stats-json', crictl: ['stats', '-o', 'json']},
  {name: 'stats-yaml', crictl: ['stats', '-o', 'yaml']},
  {name: 'stats-one-json', crictl: ['stats', '-o', 'json', RUNNING]},
  {name: 'stats-pod-json', crictl: ['stats', '-o', 'json', '-p', POD]},
  {name: 'statsp-json', crictl: ['statsp', '-o', 'json']},
  {name: 'statsp-id-yaml', crictl: ['statsp', '--id', POD, '-o', 'yaml']},
  {name: 'imagefsinfo', crictl: ['imagefsinfo']},
  {name: 'version', crictl: ['version']},
  {name: 'imagefsinfo-yaml', crictl: ['imagefsinfo', '-o', 'yaml']},
]

/** protojson puts one or two spaces after a key's colon depending on the crictl binary (its detrand): compared with one. */
export function oneSpaceAfterKeys(text: string): string {
  return text.replaceAll(/^(\s*"(?:[^"\\]|\\.)*":) {2,}/gm, '$1 ')
}
