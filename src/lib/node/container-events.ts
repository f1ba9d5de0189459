/**
 * `events`: the runtime's container lifecycle events (CRI GetContainerEvents, a server stream,
 * the source of the kubelet's Evented PLEG), as crictl events prints them.
 */
import {CRI_CLIENT_VERSION, type CriClient} from '../cri/client.js'
import {EVENTS_DISABLED_HINT, splitEventsReason} from '../cri/event-sharing.js'
import {UnimplementedError} from '../errors.js'
import type {ContainerEventResponse} from '../../generated/runtime/v1/api.js'

/** One event as crictl's document: the CRI message as plain JSON (camelCase, int64 as strings, enums by name). */
export function eventDocument(event: ContainerEventResponse): Record<string, unknown> {
  return structuredClone(event) as unknown as Record<string, unknown>
}

export interface WatchOptions {
  signal?: AbortSignal
  /**
   * Epoch ms: events that happened before it are passed to `onQueued` instead of `onEvent`.
   * containerd keeps the events of a stream nobody reads and sends them the moment one subscribes,
   * so without this a watch starts with a burst of stale history.
   */
  since?: number
  onQueued?: (event: ContainerEventResponse) => void
  /**
   * Told, before the stream opens, when the runtime gives each event to one subscriber only
   * (cri/event-sharing.ts): other listeners then miss what this one gets, and this one what they get.
   */
  onSplit?: (reason: string) => void
}

/**
 * Streams every event to `onEvent` until Ctrl-C (`signal`) or the runtime ends the stream. A runtime
 * without the call (containerd before 1.7) fails with UnimplementedError (exit 6).
 */
export async function watchContainerEvents(
  client: CriClient,
  onEvent: (event: ContainerEventResponse) => void,
  options: WatchOptions = {},
): Promise<void> {
  const {signal, since, onQueued, onSplit} = options
  const sinceNanos = since === undefined ? undefined : BigInt(since) * 1_000_000n
  let received = 0
  const route = (event: ContainerEventResponse) => {
    received++
    if (sinceNanos !== undefined && BigInt(event.createdAt || 0) < sinceNanos) onQueued?.(event)
    else onEvent(event)
  }

  if (onSplit) {
    const split = splitEventsReason(await client.runtime('version', {version: CRI_CLIENT_VERSION}).catch(() => undefined))
    if (split) onSplit(split)
  }

  try {
    await client.runtimeStream('getContainerEvents', {}, route, {signal})
  } catch (error) {
    if (!(error instanceof UnimplementedError)) throw error
    throw new UnimplementedError(`${error.message}: container events need containerd 1.7+ or CRI-O with enable_pod_events`)
  }

  // Ended by the runtime before any event, without an error: CRI-O with its events turned off.
  if (!signal?.aborted && received === 0) {
    throw new UnimplementedError(`the runtime ended its container event stream at once, without an event (${EVENTS_DISABLED_HINT})`)
  }
}
