/**
 * Is there a live kubelet on this machine that uses podctl's runtime? Such a kubelet kills every pod it
 * did not start within about 2 s (HandlePodCleanups), so podctl must not start one beside it. The
 * signals, cheapest first: a process named `kubelet` whose endpoint (its flag, its --config file's
 * containerRuntimeEndpoint, or the default) is this runtime's socket; a `kubelet` process connected to
 * that socket; with no kubelet process in sight (another PID namespace), a pod-resources socket that
 * accepts connections. The healthz port and /var/lib/kubelet existing prove nothing and are not used.
 */
import {statSync} from 'node:fs'

import {describeEndpointSource, KUBELET_DEFAULT_ROOT_DIR, type KubeletSettings, kubeletSettings} from './kubelet-settings.js'
import {podResourcesSocket, socketAnswers} from './pod-resources.js'
import {type LocalProcess, processesNamed, type ProcOptions, seenBy} from './processes.js'
import {pidsConnectedTo} from './socket-peers.js'

export interface KubeletSighting {
  /** The kubelet's pid; undefined when only its pod-resources socket answered (it runs in another PID namespace). */
  pid?: number
  /** Why podctl holds that it uses this runtime, e.g. "its --container-runtime-endpoint". */
  evidence: string
  /** What the kubelet was told (undefined without a process to read). */
  settings?: KubeletSettings
  /** How it reads a path of its own from here (through /proc/PID/root when it has its own root). */
  see(path: string): string
}

export interface DetectOptions extends ProcOptions {
  /** Where a kubelet seen only by its pod-resources socket keeps it: PODCTL_KUBELET_ROOT_DIR, else /var/lib/kubelet. */
  rootDir?: string
}

/** The live kubelet that uses the runtime at `endpoint`, if any. */
export async function kubeletOfRuntime(endpoint: string, options: DetectOptions = {}): Promise<KubeletSighting | undefined> {
  const socket = unixSocketPath(endpoint)
  const kubelets = processesNamed('kubelet', options)
  if (kubelets.length === 0) return orphanPodResources(options.rootDir ?? (process.env.PODCTL_KUBELET_ROOT_DIR || KUBELET_DEFAULT_ROOT_DIR))
  const read = await Promise.all(kubelets.map(async (kubelet) => ({kubelet, settings: await kubeletSettings(kubelet)})))
  for (const {kubelet, settings} of read) {
    const theirs = unixSocketPath(settings.endpoint)
    if (socket !== undefined && theirs !== undefined && sameSocket(seenBy(kubelet, theirs), socket)) {
      return sighting(kubelet, settings, describeEndpointSource(settings))
    }
  }

  if (socket === undefined) return undefined
  const connected = await pidsConnectedTo(
    socket,
    kubelets.map(({pid}) => pid),
    options,
  )
  const found = read.find(({kubelet}) => connected?.includes(kubelet.pid))
  return found && sighting(found.kubelet, found.settings, 'it holds a connection to the runtime socket')
}

/** The path of a unix endpoint (`unix:///path` or `/path`); undefined for any other kind. */
export function unixSocketPath(endpoint: string): string | undefined {
  if (endpoint.startsWith('unix://')) return endpoint.slice('unix://'.length) || undefined
  return endpoint.startsWith('/') ? endpoint : undefined
}

function sighting(kubelet: LocalProcess, settings: KubeletSettings, evidence: string): KubeletSighting {
  return {pid: kubelet.pid, evidence, settings, see: (path) => seenBy(kubelet, path)}
}

async function orphanPodResources(rootDir: string): Promise<KubeletSighting | undefined> {
  const path = podResourcesSocket(rootDir)
  if (!(await socketAnswers(path))) return undefined
  return {evidence: `its pod-resources socket ${path} accepts connections`, see: (seen) => seen}
}

/** The same socket file: the same inode (paths differ through symlinks such as /var/run → /run, or another root). */
function sameSocket(a: string, b: string): boolean {
  try {
    const [left, right] = [statSync(a), statSync(b)]
    return left.dev === right.dev && left.ino === right.ino
  } catch {
    return false
  }
}
