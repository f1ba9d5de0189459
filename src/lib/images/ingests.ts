/**
 * From containerd's ingests to layer progress. A pull writes each blob under a ref key (containerd
 * remotes.MakeRefKey): "layer-sha256:<hex>", "config-…", "manifest-…", "index-…", with the image's
 * ref name before an "@" when the descriptor carries one; the local store's own form is prefixed
 * "<namespace>/<n>/". Only layers are followed: the others are a few kB. A layer that leaves the
 * list was committed (a failed pull leaves its ingest behind for the next attempt to resume).
 */
import type {IngestStatus} from '../containerd/content.js'

export type BlobKind = 'layer' | 'config' | 'manifest' | 'index' | 'unknown'

export interface IngestRef {
  kind: BlobKind
  /** "sha256:<hex>" */
  digest: string
}

const KINDS: ReadonlySet<string> = new Set(['layer', 'config', 'manifest', 'index', 'unknown'])
const REF = /^(?:[^/]+\/\d+\/)?([a-z]+)-(?:.*@)?([a-z0-9]+(?:[+._-][a-z0-9]+)*:[a-f0-9]{32,})$/

/** The blob an ingest ref names, or undefined for a ref no pull wrote (another client's own key). */
export function parseIngestRef(ref: string): IngestRef | undefined {
  const match = REF.exec(ref)
  if (!match) return undefined
  const [, kind, digest] = match
  return {kind: KINDS.has(kind) ? (kind as BlobKind) : 'unknown', digest}
}

/** "sha256:9e59143b7fdc…" → "9e59143b7fdc": the 12 characters docker and crictl show. */
export function shortDigest(digest: string): string {
  return digest.slice(digest.indexOf(':') + 1, digest.indexOf(':') + 13)
}

export type LayerState = 'downloading' | 'done'

export interface LayerProgress {
  digest: string
  state: LayerState
  /** Bytes written so far (the total once done). */
  doneBytes: number
  /** Expected size; 0 while containerd does not know it. */
  totalBytes: number
  /** Bytes per second since the ingest started, by containerd's own clock; 0 until it can be told. */
  bytesPerSecond: number
  /** When this layer was first seen (ms, the tracker's clock), for the time a plain "done" line gives. */
  firstSeenMs: number
  lastSeenMs: number
}

/** A change worth a plain line: a layer seen for the first time, or gone from the ingests (committed). */
export interface LayerStep {
  kind: 'started' | 'done'
  layer: LayerProgress
}

/**
 * The layers of the ingests seen so far. `update` takes one poll's statuses and returns the steps
 * it brought. Ingests last updated before `sinceMs` are leftovers of an earlier, failed pull (the
 * content store keeps them to resume), not this pull's, and are left out until they move again.
 */
export class IngestTracker {
  private readonly layers = new Map<string, LayerProgress>()

  constructor(private readonly sinceMs: number) {}

  update(statuses: readonly IngestStatus[], nowMs: number): LayerStep[] {
    const steps: LayerStep[] = []
    const present = new Set<string>()
    for (const status of statuses) {
      const ref = parseIngestRef(status.ref)
      if (ref?.kind !== 'layer') continue
      const updated = status.updatedAt?.getTime()
      if (updated !== undefined && updated < this.sinceMs && !this.layers.has(ref.digest)) continue
      present.add(ref.digest)
      const doneBytes = Number(status.offset)
      const totalBytes = Number(status.total)
      const known = this.layers.get(ref.digest)
      const layer: LayerProgress = {
        digest: ref.digest,
        state: 'downloading',
        doneBytes,
        totalBytes,
        bytesPerSecond: rateOf(status, doneBytes),
        firstSeenMs: known?.firstSeenMs ?? nowMs,
        lastSeenMs: nowMs,
      }
      this.layers.set(ref.digest, layer)
      if (!known || known.state === 'done') steps.push({kind: 'started', layer})
    }

    for (const layer of this.layers.values()) {
      if (layer.state === 'done' || present.has(layer.digest)) continue
      layer.state = 'done'
      // Committed: all of it is there (containerd commits only a blob of the expected size).
      if (layer.totalBytes > 0) layer.doneBytes = layer.totalBytes
      layer.bytesPerSecond = 0
      steps.push({kind: 'done', layer})
    }

    return steps
  }

  /** Every layer in the order first seen, so a display's lines keep their places. */
  snapshot(): LayerProgress[] {
    return [...this.layers.values()]
  }

  /** Forgets the layers still being fetched (their pull failed or was interrupted): no "done" for them. */
  dropUnfinished(): void {
    for (const [digest, layer] of this.layers) if (layer.state !== 'done') this.layers.delete(digest)
  }
}

function rateOf(status: IngestStatus, doneBytes: number): number {
  const started = status.startedAt?.getTime()
  const updated = status.updatedAt?.getTime()
  if (started === undefined || updated === undefined || updated <= started) return 0
  return (doneBytes * 1000) / (updated - started)
}
