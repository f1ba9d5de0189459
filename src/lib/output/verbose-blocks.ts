/**
 * crictl's -v blocks for pods and containers (sandbox.go, container.go OutputContainers), which
 * podctl prints for `pods -v` and `ps -v` too: fields crictl leaves out when empty are left out,
 * labels and annotations sorted, a blank line after each block.
 */
import type {Container, PodSandbox} from '../../generated/runtime/v1/api.js'
import {PodLabel} from '../kube/labels.js'
import {humanAge} from './format.js'

/** Go's time.Time.String() in UTC for a Unix-nanosecond timestamp: "2006-01-02 15:04:05.999999999 +0000 UTC". */
export function goTimeString(nanos: string | number | bigint): string {
  const total = BigInt(nanos)
  const seconds = total / 1_000_000_000n
  const fraction = (total % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '')
  const iso = new Date(Number(seconds) * 1000).toISOString()
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''} +0000 UTC`
}

const runtimeHandler = (pod: PodSandbox) => pod.runtimeHandler || '(default)'
const sortedEntries = (map: Record<string, string>) =>
  Object.keys(map)
    .sort()
    .map((key) => `\t${key} -> ${map[key]}\n`)
    .join('')

const podState = (state: string) => (state === 'SANDBOX_READY' ? 'Ready' : 'NotReady')
const containerState = (state: string) =>
  ({CONTAINER_CREATED: 'Created', CONTAINER_RUNNING: 'Running', CONTAINER_EXITED: 'Exited'})[state] ?? 'Unknown'

/** One `crictl pods -v` block; fields crictl leaves out when empty are left out. */
export function podBlock(pod: PodSandbox): string {
  const metadata = pod.metadata
  let text = `ID: ${pod.id}\n`
  if (metadata?.name) text += `Name: ${metadata.name}\n`
  if (metadata?.uid) text += `UID: ${metadata.uid}\n`
  if (metadata?.namespace) text += `Namespace: ${metadata.namespace}\n`
  if (metadata?.attempt) text += `Attempt: ${metadata.attempt}\n`
  text += `Status: ${podState(pod.state)}\nCreated: ${goTimeString(pod.createdAt || '0')}\n`
  if (Object.keys(pod.labels).length > 0) text += `Labels:\n${sortedEntries(pod.labels)}`
  if (Object.keys(pod.annotations).length > 0) text += `Annotations:\n${sortedEntries(pod.annotations)}`
  return `${text}Runtime: ${runtimeHandler(pod)}\n\n`
}

/** One `crictl ps -v` block: Created is the age, as crictl prints it there. */
export function containerBlock(container: Container, now: number): string {
  let text = `ID: ${container.id}\nPodID: ${container.podSandboxId}\nNamespace: ${container.labels[PodLabel.namespace] ?? 'unknown'}\n`
  if (container.metadata) {
    if (container.metadata.name) text += `Name: ${container.metadata.name}\n`
    text += `Attempt: ${container.metadata.attempt}\n`
  }

  text += `State: ${containerState(container.state)}\n`
  if (container.image) text += `Image: ${container.image.image}\n`
  text += `Created: ${humanAge(container.createdAt, now)}\n`
  if (Object.keys(container.labels).length > 0) text += `Labels:\n${sortedEntries(container.labels)}`
  if (Object.keys(container.annotations).length > 0) text += `Annotations:\n${sortedEntries(container.annotations)}`
  return `${text}\n`
}
