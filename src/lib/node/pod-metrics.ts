/**
 * `metricsp`: the runtime's pod and container metrics (ListPodSandboxMetrics), the unstructured
 * name/labels/value samples the CRI offers in place of cAdvisor's /metrics/cadvisor, with the label
 * names from ListMetricDescriptors for the table.
 */
import type {CriClient} from '../cri/client.js'
import {callNewerRpc} from '../cri/newer-rpcs.js'
import {UnimplementedError} from '../errors.js'
import type {ListPodSandboxMetricsResponse, Metric, MetricDescriptor} from '../../generated/runtime/v1/api.js'

/** One sample as the table shows it: pod, container ("" for the pod's own), metric, labels, value. */
export interface MetricRow {
  podSandboxId: string
  containerId: string
  name: string
  type: string
  /** key=value pairs in the descriptor's order (just the values where the runtime gave no descriptor). */
  labels: string
  /** uint64 as a string; "" when the runtime sent no value. */
  value: string
}

/** crictl's `metricsp -o json` document: the ListPodSandboxMetrics answer as it came. */
export async function listPodMetrics(client: CriClient): Promise<ListPodSandboxMetricsResponse> {
  return callNewerRpc(client, 'ListPodSandboxMetrics', () => client.runtime('listPodSandboxMetrics', {}))
}

/**
 * The descriptors by metric name. A runtime with metrics but without descriptors (no such runtime
 * is known; the two came together) only loses the label names.
 */
export async function metricDescriptors(client: CriClient): Promise<Map<string, MetricDescriptor>> {
  try {
    const {descriptors} = await client.runtime('listMetricDescriptors', {})
    return new Map(descriptors.map((descriptor) => [descriptor.name, descriptor]))
  } catch (error) {
    if (error instanceof UnimplementedError) return new Map()
    throw error
  }
}

/** Every sample, pod by pod (its own metrics, then each container's), in the order the runtime sent them. */
export function metricRows(response: ListPodSandboxMetricsResponse, descriptors: ReadonlyMap<string, MetricDescriptor>): MetricRow[] {
  const rows: MetricRow[] = []
  const add = (podSandboxId: string, containerId: string, metric: Metric) =>
    rows.push({
      podSandboxId,
      containerId,
      name: metric.name,
      type: metric.metricType,
      labels: labelText(metric.labelValues, descriptors.get(metric.name)?.labelKeys ?? []),
      value: metric.value?.value ?? '',
    })
  for (const pod of response.podMetrics) {
    for (const metric of pod.metrics) add(pod.podSandboxId, '', metric)
    for (const container of pod.containerMetrics) {
      for (const metric of container.metrics) add(pod.podSandboxId, container.containerId, metric)
    }
  }

  return rows
}

function labelText(values: readonly string[], keys: readonly string[]): string {
  return values.map((value, i) => (keys[i] ? `${keys[i]}=${value}` : value)).join(',')
}
