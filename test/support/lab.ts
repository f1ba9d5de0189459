import {existsSync, mkdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {randomBytes} from 'node:crypto'

import {CriClient, type RuntimeRequest} from '../../src/lib/cri/client.js'
import {PodLabel} from '../../src/lib/kube/labels.js'
import {endpointEnv} from './podctl.js'

/** The runtimes of the lab (scripts/lab.sh): containerd 2.x, CRI-O, and Debian's containerd 1.6. */
export const LAB_RUNTIMES = ['containerd2', 'crio', 'containerd'] as const
export type LabRuntime = (typeof LAB_RUNTIMES)[number]

export interface Lab {
  /** Which of the lab's runtimes: PODCTL_LAB_RUNTIME, containerd2 by default (as scripts/lab.sh). */
  runtime: LabRuntime
  /** What the runtime calls itself in Version: containerd or cri-o. */
  runtimeName: string
  /** Its RuntimeVersion, e.g. v2.4.2, 1.34.0, 1.6.20~ds1. */
  runtimeVersion: string
  endpoint: string
  registry: string
  busybox: string
  pause: string
  logRoot: string
  /** The second runtime handler the lab configures (runtimeClassName). */
  runtimeHandler: string
  /** The pods' subnet, e.g. 10.235.0.0/16: each runtime of the lab has its own. */
  podCidr: string
  /** The reference crictl the lab built (cri-tools, pinned in scripts/lab/build.sh). */
  crictl: string
  /** The runtime daemon's log file. */
  runtimeLog: string
}

/** PODCTL_LAB_RUNTIME, checked; containerd2 when unset, as scripts/lab.sh. */
export function labRuntime(): LabRuntime {
  const runtime = process.env.PODCTL_LAB_RUNTIME || 'containerd2'
  if (!(LAB_RUNTIMES as readonly string[]).includes(runtime))
    throw new Error(`PODCTL_LAB_RUNTIME=${runtime}: expected one of ${LAB_RUNTIMES.join(', ')}`)
  return runtime as LabRuntime
}

/** Where scripts/lab.sh up writes the settings of a runtime's lab. */
export function labEnvFile(runtime: LabRuntime = labRuntime()): string {
  return `/run/podctl-lab/rt/${runtime}/env`
}

/** The env file's KEY=VALUE lines; a variable of the test's environment wins over the file. */
function labSettings(): (key: string) => string | undefined {
  const file = labEnvFile()
  const values: Record<string, string> = {}
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const eq = line.indexOf('=')
      if (eq > 0) values[line.slice(0, eq)] = line.slice(eq + 1)
    }
  }

  return (key) => process.env[key] ?? values[key]
}

/**
 * The runtime lab started by `scripts/lab.sh up` (PODCTL_LAB_RUNTIME picks which). End-to-end tests
 * fail (not skip) without it: a suite that silently skips its real checks proves nothing.
 */
export function lab(): Lab {
  const get = labSettings()
  const runtime = labRuntime()
  const endpoint = get('PODCTL_LAB_ENDPOINT')
  if (!endpoint) {
    const start = `sudo PODCTL_LAB_RUNTIME=${runtime} bash scripts/lab.sh up`
    throw new Error(`runtime lab (${runtime}) not running: no ${labEnvFile()}; start it with: ${start}`)
  }

  const required = (key: string) => {
    const value = get(key)
    if (!value)
      throw new Error(`${labEnvFile()} has no ${key}: update the lab with: sudo PODCTL_LAB_RUNTIME=${runtime} bash scripts/lab.sh up`)
    return value
  }

  return {
    runtime,
    runtimeName: required('PODCTL_LAB_RUNTIME_NAME'),
    runtimeVersion: required('PODCTL_LAB_RUNTIME_VERSION'),
    endpoint,
    registry: required('PODCTL_LAB_REGISTRY'),
    busybox: required('PODCTL_LAB_BUSYBOX'),
    pause: required('PODCTL_LAB_PAUSE'),
    logRoot: required('PODCTL_LAB_LOG_ROOT'),
    runtimeHandler: required('PODCTL_LAB_RUNTIME_HANDLER'),
    podCidr: required('PODCTL_LAB_POD_CIDR'),
    crictl: required('PODCTL_LAB_CRICTL'),
    runtimeLog: required('PODCTL_LAB_RUNTIME_LOG'),
  }
}

/** True on the lab's CRI-O; false on either containerd. */
export const onCrio = (): boolean => lab().runtime === 'crio'

/** True on Debian's containerd 1.6 (the oldest runtime podctl supports, without container events). */
export const onContainerd16 = (): boolean => lab().runtime === 'containerd'

/**
 * Environment that points podctl at the lab and nowhere else. A supervisor collects no garbage
 * (PODCTL_GC_PERIOD=0): its collection is node-wide, as the kubelet's, and would remove the exited
 * containers and images of the test files running beside it; the tests of collection turn it on.
 */
export function labEnv(extra: Record<string, string | undefined> = {}): Record<string, string | undefined> {
  return endpointEnv(lab().endpoint, {PODCTL_GC_PERIOD: '0', ...extra})
}

export function labClient(): CriClient {
  return new CriClient({runtimeEndpoint: lab().endpoint, callTimeoutMs: 60_000})
}

/** A namespace no other test uses, so parallel files never see each other's pods. */
export function uniqueNamespace(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`
}

export interface SandboxSpec {
  name: string
  namespace: string
  uid?: string
  attempt?: number
  labels?: Record<string, string>
  runtimeHandler?: string
}

/** Creates a sandbox straight through the client (not through podctl), labelled like the kubelet does. */
export async function createSandbox(client: CriClient, spec: SandboxSpec): Promise<string> {
  return (await runSandbox(client, spec)).id
}

export interface SandboxConfigSpec extends SandboxSpec {
  /** Sandbox annotations, e.g. io.podctl.restartPolicy. */
  annotations?: Record<string, string>
}

/**
 * The PodSandboxConfig createSandbox sends, for tests that must pass the same config again as
 * CreateContainer's sandbox_config. `uid` is generated when absent.
 */
export function sandboxConfig(
  spec: SandboxConfigSpec,
): RuntimeRequest<'runPodSandbox'>['config'] & {metadata: {uid: string}; logDirectory: string} {
  const uid = spec.uid ?? randomBytes(8).toString('hex')
  const {logRoot} = lab()
  return {
    metadata: {name: spec.name, namespace: spec.namespace, uid, attempt: spec.attempt ?? 0},
    hostname: spec.name,
    logDirectory: `${logRoot}/${spec.namespace}_${spec.name}_${uid}`,
    labels: {
      ...spec.labels,
      [PodLabel.name]: spec.name,
      [PodLabel.namespace]: spec.namespace,
      [PodLabel.uid]: uid,
    },
    annotations: {...spec.annotations},
    linux: {},
  }
}

/**
 * The container's log directory under its pod's (`<pod log directory>/<container>/`), made as the
 * kubelet makes it before CreateContainer: containerd would make it itself, CRI-O does not.
 */
export function makeContainerLogDir(sandbox: {logDirectory: string}, container: string): void {
  mkdirSync(join(sandbox.logDirectory, container), {recursive: true})
}

/** RunPodSandbox with sandboxConfig(spec), its log directory made first as the kubelet does; returns the sandbox ID and the config sent. */
export async function runSandbox(
  client: CriClient,
  spec: SandboxConfigSpec,
): Promise<{id: string; config: ReturnType<typeof sandboxConfig>}> {
  const config = sandboxConfig(spec)
  mkdirSync(config.logDirectory, {recursive: true})
  const response = await client.runtime('runPodSandbox', {config, runtimeHandler: spec.runtimeHandler ?? ''}, {timeoutMs: 120_000})
  return {id: response.podSandboxId, config}
}

/** Stops and removes every sandbox (and so its containers) of a namespace; safe to call twice. */
export async function cleanupNamespace(client: CriClient, namespace: string): Promise<void> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
  await Promise.all(
    items.map(async (pod) => {
      await client.runtime('stopPodSandbox', {podSandboxId: pod.id}).catch(() => {})
      await client.runtime('removePodSandbox', {podSandboxId: pod.id}).catch(() => {})
    }),
  )
}

/** Sandboxes still present in a namespace: tests assert this is empty afterwards (no leaks). */
export async function sandboxesIn(client: CriClient, namespace: string): Promise<string[]> {
  const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {[PodLabel.namespace]: namespace}}})
  return items.map((pod) => pod.id)
}

export interface LoginRegistry {
  /** host:port as images name it, e.g. localhost:5001 */
  registry: string
  busybox: string
  user: string
  password: string
}

/** The lab's second registry, which requires a login (htpasswd); fails when the lab predates it. */
export function loginRegistry(): LoginRegistry {
  const get = labSettings()
  const [registry, busybox, user, password] = ['REGISTRY', 'BUSYBOX', 'USER', 'PASSWORD'].map((key) => get(`PODCTL_LAB_AUTH_${key}`))
  if (!registry || !busybox || !user || !password) {
    throw new Error(`the lab has no login registry (PODCTL_LAB_AUTH_* in ${labEnvFile()}); update it with: sudo bash scripts/lab.sh up`)
  }

  return {registry, busybox, user, password}
}

/** Where the lab builds the reference crictl (scripts of the lab: go install …/cmd/crictl@v1.37.0 into the lab's cache). */
export const REFERENCE_CRICTL_PATH = '/var/cache/podctl-lab/bin/crictl-v1.37.0/crictl'

/**
 * The reference crictl v1.37.0 to compare podctl as crictl with: PODCTL_REFERENCE_CRICTL, else the
 * lab's PODCTL_LAB_CRICTL, else the lab's build path when it is there; undefined without one.
 */
export function referenceCrictl(): string | undefined {
  const fromEnv = process.env.PODCTL_REFERENCE_CRICTL
  if (fromEnv) return fromEnv
  const built = existsSync(labEnvFile()) ? labSettings()('PODCTL_LAB_CRICTL') : undefined
  if (built && existsSync(built)) return built
  return existsSync(REFERENCE_CRICTL_PATH) ? REFERENCE_CRICTL_PATH : undefined
}

/** A regular expression's source for one address of the lab's pod subnet (a /16), e.g. `10\.235\.\d+\.\d+`. */
export function podAddressPattern(): string {
  const match = /^(\d+)\.(\d+)\.0\.0\/16$/.exec(lab().podCidr)
  if (!match) throw new Error(`the lab's pod subnet ${lab().podCidr} is not a /16: teach podAddressPattern() its shape`)
  return String.raw`${match[1]}\.${match[2]}\.\d+\.\d+`
}

/** True where the runtime streams container events (GetContainerEvents): all but containerd 1.6. */
export const hasContainerEvents = (): boolean => !onContainerd16()

/** The lab runtime's name as a regular expression's source (cri-o, containerd). */
export const runtimeNamePattern = (): string => lab().runtimeName.replaceAll(/[.*+?^${}()|[\]\\]/g, String.raw`\$&`)

/** An image ID as the lab's runtime gives it (ImageStatus, ListImages): containerd's `sha256:` and 64 hex, CRI-O's 64 hex alone. */
export const imageIdPattern = (): string => (onCrio() ? '[0-9a-f]{64}' : 'sha256:[0-9a-f]{64}')

/**
 * PullImage's image_ref for `image` as the lab's runtime answers it: containerd the image ID,
 * CRI-O the repository digest (`localhost:5000/podctl/busybox@sha256:…`), as crictl prints it.
 */
export function pulledRefPattern(image: string): string {
  if (!onCrio()) return imageIdPattern()
  const repository = image.replace(/[:@][^/]*$/, '')
  return `${repository.replaceAll('.', String.raw`\.`)}@sha256:[0-9a-f]{64}`
}
