/**
 * The header of `podctl ui`: the runtime and its version, its conditions, the image filesystem's use,
 * and who owns the node — a kubelet that uses this runtime (local-kubelet/detect.ts), podctl
 * supervisors (the pods' supervisor locks), or nobody. Version once; the rest every few seconds,
 * not on every refresh: they change rarely and a kubelet sighting reads /proc.
 */
import {statfs} from 'node:fs/promises'

import type {CriClient} from '../cri/client.js'
import {kubeletOfRuntime} from '../local-kubelet/detect.js'
import {nameOf} from '../local-kubelet/runtime-owner.js'
import {imageFsInfo, runtimeVersion} from '../node/runtime-info.js'
import type {NodeSnapshot} from './node-snapshot.js'

export interface NodeHeader {
  /** `containerd v2.4.2`. */
  runtime: string
  endpoint: string
  /** False conditions first; RuntimeReady and NetworkReady are the ones that matter. */
  conditions: Array<{type: string; status: boolean; reason: string}>
  imageFs?: {usedBytes: number; capacityBytes?: number}
  /** Who restarts pods here: `kubelet pid 812`, `podctl supervisor pid 4242 (3 pods)`, or `none`. */
  owner: string
  /** A kubelet owns the runtime: what podctl starts it may kill. */
  kubelet: boolean
}

const SLOW_EVERY_MS = 5000

export class HeaderSampler {
  private version?: string
  private slow?: {at: number; conditions: NodeHeader['conditions']; imageFs?: NodeHeader['imageFs']; kubelet?: string}

  constructor(private readonly client: CriClient) {}

  /** The runtime answered again after it was lost: it may be another version now. */
  forgetVersion(): void {
    this.version = undefined
    this.slow = undefined
  }

  async sample(snapshot: NodeSnapshot | undefined, now = Date.now()): Promise<NodeHeader> {
    if (this.version === undefined) {
      const version = await runtimeVersion(this.client)
      this.version = `${version.runtimeName} ${version.runtimeVersion}`
    }

    if (!this.slow || now - this.slow.at >= SLOW_EVERY_MS) this.slow = {at: now, ...(await this.slowParts())}
    const {conditions, imageFs, kubelet} = this.slow
    return {
      runtime: this.version,
      endpoint: this.client.runtimeEndpoint,
      conditions,
      imageFs,
      owner: kubelet ?? supervisors(snapshot),
      kubelet: kubelet !== undefined,
    }
  }

  private async slowParts(): Promise<Omit<NonNullable<HeaderSampler['slow']>, 'at'>> {
    const [status, fs, kubelet] = await Promise.all([
      this.client.runtime('status', {verbose: false}),
      imageFsInfo(this.client).catch(() => undefined),
      kubeletOfRuntime(this.client.runtimeEndpoint).catch(() => undefined),
    ])
    const conditions = (status.status?.conditions ?? [])
      .map(({type, status, reason}) => ({type, status, reason}))
      .sort((a, b) => Number(a.status) - Number(b.status))
    const image = fs?.status.imageFilesystems[0]
    let imageFs: NodeHeader['imageFs']
    if (image) {
      const capacity = image.fsId?.mountpoint ? await statfs(image.fsId.mountpoint).catch(() => undefined) : undefined
      imageFs = {usedBytes: Number(image.usedBytes?.value ?? 0), capacityBytes: capacity && capacity.blocks * capacity.bsize}
    }

    return {conditions, imageFs, kubelet: kubelet && nameOf(kubelet)}
  }
}

/** `podctl supervisor pid 4242 (3 pods)`, several pids joined, or `none` when no live supervisor holds a pod. */
export function supervisors(snapshot: NodeSnapshot | undefined): string {
  const byPid = new Map<number, {holder: string; pods: number}>()
  for (const pod of snapshot?.pods ?? []) {
    if (!pod.supervisor) continue
    const seen = byPid.get(pod.supervisor.pid) ?? {holder: pod.supervisor.holder, pods: 0}
    seen.pods++
    byPid.set(pod.supervisor.pid, seen)
  }

  if (byPid.size === 0) return 'none (no kubelet, no podctl supervisor)'
  return [...byPid]
    .map(([pid, {holder, pods}]) => `${holder || 'podctl supervisor'} pid ${pid} (${pods} pod${pods === 1 ? '' : 's'})`)
    .join(', ')
}
