/**
 * The kubelet's termination order for a pod with sidecars (kuberuntime_termination_order.go):
 * every container of the pod is killed at once, within one grace period; a sidecar waits for its
 * turn before StopContainer: until the app containers and every sidecar declared after it have
 * stopped, but never longer than its grace period (the wait is taken out of what is left of it).
 * So the sidecars stop after the app containers, in reverse order of their declaration. podctl
 * reads who is a sidecar back from the annotation `run` wrote (io.podctl.sidecar, its index).
 */
import type {Container} from '../../../generated/runtime/v1/api.js'
import {containerTypeOf, sidecarIndexOf} from '../../kube/labels.js'

type Ordered = Pick<Container, 'id' | 'annotations'>

/**
 * Whom each of the (running) containers waits for before its StopContainer, by ID: a sidecar waits
 * for every app container and every sidecar declared after it; any other container waits for no one
 * (a regular init container neither waits nor is waited for, as in the kubelet's newTerminationOrdering).
 */
export function terminationPrerequisites(containers: readonly Ordered[]): Map<string, string[]> {
  const apps = containers.filter(
    (container) => sidecarIndexOf(container.annotations) === undefined && containerTypeOf(container.annotations) === 'app',
  )
  const prerequisites = new Map<string, string[]>()
  for (const container of containers) {
    const index = sidecarIndexOf(container.annotations)
    if (index === undefined) {
      prerequisites.set(container.id, [])
      continue
    }

    const later = containers.filter((other) => (sidecarIndexOf(other.annotations) ?? -1) > index)
    prerequisites.set(
      container.id,
      [...apps, ...later].map((other) => other.id),
    )
  }

  return prerequisites
}

/**
 * One pod kill's ordering: killContainer waits for its turn, then reports its container stopped
 * (whether the stop worked or not, as the kubelet's deferred containerTerminated does).
 */
export class TerminationOrdering {
  private readonly prerequisites: Map<string, string[]>
  private readonly stopped = new Map<string, {done: Promise<void>; resolve: () => void}>()

  constructor(containers: readonly Ordered[]) {
    this.prerequisites = terminationPrerequisites(containers)
    for (const container of containers) {
      let resolve!: () => void
      const done = new Promise<void>((resolve_) => {
        resolve = resolve_
      })
      this.stopped.set(container.id, {done, resolve})
    }
  }

  /**
   * Waits until the container's prerequisites have stopped, at most `graceSeconds` (none when 0 or
   * less, or on abort); resolves the milliseconds it waited.
   */
  async waitForTurn(containerId: string, graceSeconds: number, signal?: AbortSignal): Promise<number> {
    const waits = (this.prerequisites.get(containerId) ?? []).map((id) => this.stopped.get(id)?.done)
    if (graceSeconds <= 0 || waits.length === 0) return 0
    const started = performance.now()
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const bounds = [
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceSeconds * 1000)
      }),
      new Promise<void>((resolve) => {
        onAbort = resolve
        if (signal?.aborted) resolve()
        signal?.addEventListener('abort', onAbort, {once: true})
      }),
    ]
    try {
      await Promise.race([Promise.all(waits), ...bounds])
    } finally {
      clearTimeout(timer)
      if (onAbort) signal?.removeEventListener('abort', onAbort)
    }

    return performance.now() - started
  }

  /** The container has stopped (or its kill has ended): whoever waits for it may go on. */
  containerTerminated(containerId: string): void {
    this.stopped.get(containerId)?.resolve()
  }
}
