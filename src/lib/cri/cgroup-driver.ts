/**
 * The runtime's cgroup driver, which decides the form of a pod's cgroup parent (a path for cgroupfs,
 * a slice for systemd): a parent of the wrong form fails every RunPodSandbox. Asked the newest way
 * first: RuntimeConfig (containerd 2.x, CRI-O 1.28+); then containerd's verbose Status (the default
 * runtime's SystemdCgroup option, containerd 1.6/1.7); then CRI-O's /info endpoint (CRI-O 1.26/1.27).
 * Undefined when none says, and the caller then sends no parent (the runtime's own default place).
 */
import type {CriClient} from './client.js'
import {cgroupDriverFromCrioInfo, crioInspect} from './crio-inspect.js'

export type CgroupDriver = 'cgroupfs' | 'systemd'

/** A driver changes only with the runtime's configuration and a restart: asked again after this long. */
const REMEMBER_MS = 5 * 60_000
const remembered = new Map<string, {at: number; driver: Promise<CgroupDriver | undefined>}>()

/** The driver of the client's runtime, remembered per endpoint for a few minutes (a supervisor creates many sandboxes). */
export async function runtimeCgroupDriver(client: CriClient, now = Date.now()): Promise<CgroupDriver | undefined> {
  const known = remembered.get(client.runtimeEndpoint)
  if (known && now - known.at < REMEMBER_MS) return known.driver
  const entry = {at: now, driver: askCgroupDriver(client)}
  remembered.set(client.runtimeEndpoint, entry)
  // A question nothing answered is asked again next time, not remembered.
  const forget = () => {
    if (remembered.get(client.runtimeEndpoint) === entry) remembered.delete(client.runtimeEndpoint)
  }

  entry.driver.then((value) => value === undefined && forget(), forget)
  return entry.driver
}

async function askCgroupDriver(client: CriClient): Promise<CgroupDriver | undefined> {
  const config = await client.runtimeOptional('runtimeConfig', {}).catch(() => undefined)
  const reported = config?.linux?.cgroupDriver
  if (reported === 'SYSTEMD') return 'systemd'
  if (reported === 'CGROUPFS') return 'cgroupfs'
  const status = await client.runtime('status', {verbose: true}).catch(() => undefined)
  return cgroupDriverFromContainerdInfo(status?.info) ?? cgroupDriverFromCrioInfo(await crioInspect(client.runtimeEndpoint, '/info'))
}

interface ContainerdConfig {
  containerd?: {defaultRuntimeName?: unknown; runtimes?: Record<string, {options?: {SystemdCgroup?: unknown} | null}>}
}

/** containerd 1.x's verbose Status: `config.containerd.runtimes[defaultRuntimeName].options.SystemdCgroup`. */
export function cgroupDriverFromContainerdInfo(info: Readonly<Record<string, string>> | undefined): CgroupDriver | undefined {
  if (!info?.config) return undefined
  let config: ContainerdConfig
  try {
    config = JSON.parse(info.config) as ContainerdConfig
  } catch {
    return undefined
  }

  const name = config.containerd?.defaultRuntimeName
  const runtime = typeof name === 'string' ? config.containerd?.runtimes?.[name] : undefined
  if (!runtime) return undefined
  return runtime.options?.SystemdCgroup === true ? 'systemd' : 'cgroupfs'
}
