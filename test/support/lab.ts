import {existsSync, readFileSync} from 'node:fs'
import {randomBytes} from 'node:crypto'

import {CriClient, type RuntimeRequest} from '../../src/lib/cri/client.js'
import {PodLabel} from '../../src/lib/kube/labels.js'
import {endpointEnv} from './podctl.js'

export interface Lab {
  endpoint: string
  registry: string
  busybox: string
  pause: string
  logRoot: string
}

const ENV_FILE = '/run/podctl-lab/env'

/**
 * The runtime lab started by `scripts/lab.sh up`. End-to-end tests fail (not skip) without it:
 * a suite that silently skips its real checks proves nothing.
 */
export function lab(): Lab {
  const values: Record<string, string> = {}
  if (existsSync(ENV_FILE)) {
    for (const line of readFileSync(ENV_FILE, 'utf8').split('\n')) {
      const eq = line.indexOf('=')
      if (eq > 0) values[line.slice(0, eq)] = line.slice(eq + 1)
    }
  }

  const get = (key: string) => process.env[key] ?? values[key]
  const endpoint = get('PODCTL_LAB_ENDPOINT')
  if (!endpoint) throw new Error(`runtime lab not running: no ${ENV_FILE}; start it with: sudo bash scripts/lab.sh up`)
  return {
    endpoint,
    registry: get('PODCTL_LAB_REGISTRY') ?? 'localhost:5000',
    busybox: get('PODCTL_LAB_BUSYBOX') ?? 'localhost:5000/podctl/busybox:1.36',
    pause: get('PODCTL_LAB_PAUSE') ?? 'localhost:5000/podctl/pause:3.9',
    logRoot: get('PODCTL_LAB_LOG_ROOT') ?? '/var/lib/podctl-lab/pod-logs',
  }
}

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
export function sandboxConfig(spec: SandboxConfigSpec): RuntimeRequest<'runPodSandbox'>['config'] & {metadata: {uid: string}} {
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

/** RunPodSandbox with sandboxConfig(spec); returns the sandbox ID and the config sent. */
export async function runSandbox(
  client: CriClient,
  spec: SandboxConfigSpec,
): Promise<{id: string; config: ReturnType<typeof sandboxConfig>}> {
  const config = sandboxConfig(spec)
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
  const values: Record<string, string> = {}
  for (const line of existsSync(ENV_FILE) ? readFileSync(ENV_FILE, 'utf8').split('\n') : []) {
    const eq = line.indexOf('=')
    if (eq > 0) values[line.slice(0, eq)] = line.slice(eq + 1)
  }

  const get = (key: string) => process.env[key] ?? values[key]
  const [registry, busybox, user, password] = ['REGISTRY', 'BUSYBOX', 'USER', 'PASSWORD'].map((key) => get(`PODCTL_LAB_AUTH_${key}`))
  if (!registry || !busybox || !user || !password) {
    throw new Error(`the lab has no login registry (PODCTL_LAB_AUTH_* in ${ENV_FILE}); update it with: sudo bash scripts/lab.sh up`)
  }

  return {registry, busybox, user, password}
}

/** Where the lab builds the reference crictl (scripts of the lab: go install …/cmd/crictl@v1.37.0 into the lab's cache). */
export const REFERENCE_CRICTL_PATH = '/var/cache/podctl-lab/bin/crictl-v1.37.0/crictl'

/**
 * The reference crictl v1.37.0 to compare podctl as crictl with: PODCTL_REFERENCE_CRICTL, else the
 * lab's PODCTL_LAB_REFERENCE_CRICTL, else the lab's build path when it is there; undefined without one.
 */
export function referenceCrictl(): string | undefined {
  const fromEnv = process.env.PODCTL_REFERENCE_CRICTL
  if (fromEnv) return fromEnv
  if (existsSync(ENV_FILE)) {
    const line = readFileSync(ENV_FILE, 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('PODCTL_LAB_REFERENCE_CRICTL='))
    if (line) return line.slice(line.indexOf('=') + 1)
  }

  return existsSync(REFERENCE_CRICTL_PATH) ? REFERENCE_CRICTL_PATH : undefined
}
