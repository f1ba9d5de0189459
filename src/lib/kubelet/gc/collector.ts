/**
 * Garbage collection inside a supervisor, as the kubelet's StartGarbageCollection: a round at
 * start and then every `periodMs` (ContainerGCPeriod, 1 minute), images only every `imagePeriodMs`
 * (ImageGCPeriod, 5 minutes). What a round removes is a Normal GarbageCollected event; what fails is
 * a Warning (ContainerGCFailed, ImageGCFailed, as the kubelet's). Never throws: the supervisor goes on.
 */
import {setTimeout as sleep} from 'node:timers/promises'

import type {CriClient} from '../../cri/client.js'
import {asPodctlError} from '../../errors.js'
import {discardEvents, type EventSink, normalEvent, warningEvent} from '../../kube/events.js'
import {collectGarbage, type GcResult, type GcSettings, type PodReaper} from './collect.js'
import {imageGcPolicyFromFlags} from './flags.js'
import {ImageRecords, imageRecordsFile} from './image-records.js'
import {CONTAINER_GC_PERIOD_MS, IMAGE_GC_PERIOD_MS} from './policy.js'

/** The event object of node-wide work (the kubelet records GC events on the node). */
const NODE = 'node'

export interface GarbageCollectorOptions {
  /** Between rounds; 0 turns collection off (start() returns at once). Default 60 000. */
  periodMs?: number
  /** Between image rounds (checked at each round). Default 300 000. */
  imagePeriodMs?: number
  events?: EventSink
  now?: () => number
  /** Kills the library's pods whose session is gone, first in each round; none: they are not looked for. */
  reapPod?: PodReaper
}

export class GarbageCollector {
  private readonly periodMs: number
  private readonly imagePeriodMs: number
  private readonly events: EventSink
  private readonly now: () => number
  private readonly reapPod?: PodReaper
  private readonly records: ImageRecords
  private lastImageRound?: number

  constructor(
    private readonly client: CriClient,
    private readonly settings: GcSettings,
    options: GarbageCollectorOptions = {},
  ) {
    this.periodMs = options.periodMs ?? CONTAINER_GC_PERIOD_MS
    this.imagePeriodMs = options.imagePeriodMs ?? IMAGE_GC_PERIOD_MS
    this.events = options.events ?? discardEvents
    this.now = options.now ?? Date.now
    this.reapPod = options.reapPod
    this.records = new ImageRecords(imageRecordsFile(settings.podDirRoot, client.runtimeEndpoint))
  }

  /** Rounds until `signal` aborts (resolves then); the first at once. None while `paused` says so (a kubelet collects its own). */
  async start(signal: AbortSignal, paused: () => boolean = () => false): Promise<void> {
    if (this.periodMs <= 0) return
    while (!signal.aborted) {
      if (!paused()) await this.round(signal)
      await sleep(this.periodMs, undefined, {signal}).catch(() => {})
    }
  }

  /** One round; undefined when it failed (reported as a warning). */
  async round(signal?: AbortSignal): Promise<GcResult | undefined> {
    const now = this.now()
    const images = this.lastImageRound === undefined || now - this.lastImageRound >= this.imagePeriodMs
    try {
      const options = {images, imageRecords: this.records, signal, now: this.now, reapPod: this.reapPod}
      const result = await collectGarbage(this.client, this.settings, options)
      if (images) this.lastImageRound = now
      this.report(result)
      return result
    } catch (error) {
      if (!signal?.aborted) this.events(warningEvent('ContainerGCFailed', asPodctlError(error).message, NODE))
      return undefined
    }
  }

  private report(result: GcResult): void {
    const summary = gcSummary(result)
    if (summary) this.events(normalEvent('GarbageCollected', summary, NODE))
    for (const failure of result.failures) {
      const reason = failure.object.startsWith('image ') ? 'ImageGCFailed' : 'ContainerGCFailed'
      this.events(warningEvent(reason, `${failure.object}: ${failure.message}`, NODE))
    }

    const shortfall = imageShortfall(result)
    if (shortfall) this.events(warningEvent('ImageGCFailed', shortfall, NODE))
  }
}

/** "removed 2 dead containers, 1 sandbox, 1 image (4.2 MB)"; '' when nothing went. */
export function gcSummary(result: GcResult): string {
  const count = (n: number, one: string, many = `${one}s`) => (n === 0 ? [] : [`${n} ${n === 1 ? one : many}`])
  const {images} = result
  const parts = [
    ...count(result.pods.length, 'pod of a gone session', 'pods of gone sessions'),
    ...count(result.containers.length, 'dead container'),
    ...count(result.sandboxes.length, 'sandbox', 'sandboxes'),
    ...count(result.podLogDirectories.length, 'pod log directory', 'pod log directories'),
    ...count(result.containerLogLinks.length, 'dead log link'),
    ...count(images.removed.length, 'image').map((part) => `${part} (${megabytes(images.freedBytes)})`),
  ]
  return parts.length === 0 ? '' : `${result.dryRun ? 'would remove' : 'removed'} ${parts.join(', ')}`
}

/** The kubelet's warning when unused images cannot free enough; undefined when enough was freed. */
export function imageShortfall({images}: GcResult): string | undefined {
  if (!images.ran || images.freedBytes >= images.bytesToFree) return undefined
  return (
    `image filesystem ${images.usageBefore?.usagePercent ?? '?'}% used (high threshold ${images.highThresholdPercent}%): ` +
    `needed to free ${images.bytesToFree} bytes to reach ${images.lowThresholdPercent}%, ` +
    `but only ${images.freedBytes} bytes of unused images were eligible`
  )
}

/** Decimal megabytes, one decimal, as sizes elsewhere in podctl's output. */
function megabytes(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`
}

/**
 * The supervisor's collector from its flags: node-wide as the kubelet's, or only the namespace of
 * `sync --watch -n NAMESPACE`; none with --gc-period 0. Each round kills first, with `reapPod`, the
 * library's pods whose test process is gone.
 */
export function supervisorCollector(
  client: CriClient,
  flags: Parameters<typeof imageGcPolicyFromFlags>[0] & {'gc-period': number; namespace?: string},
  settings: {logsRoot: string; podDirRoot: string},
  {events, reapPod}: {events: EventSink; reapPod: PodReaper},
): GarbageCollector | undefined {
  if (flags['gc-period'] <= 0) return undefined
  const gcSettings = {images: imageGcPolicyFromFlags(flags), ...settings, namespace: flags.namespace}
  return new GarbageCollector(client, gcSettings, {periodMs: flags['gc-period'], events, reapPod})
}
