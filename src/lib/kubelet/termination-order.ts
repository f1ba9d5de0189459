/**
 * The kubelet's termination order for a pod with sidecars (kuberuntime_termination_order.go):
 * every other container is stopped first, all at once; then the sidecars, one after another in
 * reverse order of their declaration, each once the ones declared after it are gone. podctl reads
 * who is a sidecar back from the annotation `run` wrote (io.podctl.sidecar, its index).
 */
import type {Container} from '../../generated/runtime/v1/api.js'
import {sidecarIndexOf} from '../kube/labels.js'

/** The containers in stages: each stage is stopped in parallel, after the previous stage has stopped. */
export function terminationStages<T extends Pick<Container, 'annotations'>>(containers: readonly T[]): T[][] {
  const others = containers.filter((container) => sidecarIndexOf(container.annotations) === undefined)
  const byIndex = new Map<number, T[]>()
  for (const container of containers) {
    const index = sidecarIndexOf(container.annotations)
    if (index !== undefined) byIndex.set(index, [...(byIndex.get(index) ?? []), container])
  }

  const sidecars = [...byIndex.entries()].sort(([a], [b]) => b - a).map(([, stage]) => stage)
  return [...(others.length > 0 ? [others] : []), ...sidecars]
}
