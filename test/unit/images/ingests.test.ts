import {describe, expect, test} from 'vitest'

import type {IngestStatus} from '../../../src/lib/containerd/content.js'
import {IngestTracker, parseIngestRef, shortDigest} from '../../../src/lib/images/ingests.js'

const A = `sha256:${'a1'.repeat(32)}`
const B = `sha256:${'b2'.repeat(32)}`

function status(ref: string, offset: number, total: number, startedAt = 10_000, updatedAt = 12_000): IngestStatus {
  return {ref, offset: String(offset), total: String(total), startedAt: new Date(startedAt), updatedAt: new Date(updatedAt)}
}

describe('parseIngestRef', () => {
  test.each([
    [`layer-${A}`, {kind: 'layer', digest: A}],
    [`config-${A}`, {kind: 'config', digest: A}],
    [`manifest-${A}`, {kind: 'manifest', digest: A}],
    [`index-${A}`, {kind: 'index', digest: A}],
    [`unknown-${A}`, {kind: 'unknown', digest: A}],
    // A descriptor with an image ref name annotation: "<kind>-<name>@<digest>".
    [`layer-localhost:5000/app:v1@${A}`, {kind: 'layer', digest: A}],
    // The local store's own form, with namespace and a number in front.
    [`k8s.io/7/layer-${A}`, {kind: 'layer', digest: A}],
    // A custom prefix (containerd's WithMediaTypeKeyPrefix) is no known kind.
    [`attestation-${A}`, {kind: 'unknown', digest: A}],
  ])('%s', (ref, expected) => {
    expect(parseIngestRef(ref)).toEqual(expected)
  })

  test.each(['', 'layer-', 'my-upload', `layer-sha256:xyz`, A])('%j names no blob of a pull', (ref) => {
    expect(parseIngestRef(ref)).toBeUndefined()
  })

  test('shortDigest is the first 12 hex characters', () => {
    expect(shortDigest(A)).toBe('a1a1a1a1a1a1')
  })
})

describe('IngestTracker', () => {
  test('a layer is started when first seen and done when it leaves the ingests', () => {
    const tracker = new IngestTracker(0)
    expect(tracker.update([status(`layer-${A}`, 100, 1000)], 1)).toEqual([
      {kind: 'started', layer: expect.objectContaining({digest: A, state: 'downloading', doneBytes: 100, totalBytes: 1000})},
    ])
    // Moving on is no step, only a new snapshot.
    expect(tracker.update([status(`layer-${A}`, 600, 1000)], 2)).toEqual([])
    expect(tracker.snapshot()).toEqual([expect.objectContaining({digest: A, doneBytes: 600, firstSeenMs: 1, lastSeenMs: 2})])
    const [done] = tracker.update([], 3)
    expect(done).toEqual({kind: 'done', layer: expect.objectContaining({digest: A, state: 'done', doneBytes: 1000, bytesPerSecond: 0})})
    expect(tracker.update([], 4)).toEqual([])
  })

  test('the rate is bytes over the ingest’s own started-to-updated time', () => {
    const tracker = new IngestTracker(0)
    tracker.update([status(`layer-${A}`, 4_000_000, 8_000_000, 10_000, 12_000)], 1)
    expect(tracker.snapshot()[0].bytesPerSecond).toBe(2_000_000)
  })

  test('no rate without timestamps', () => {
    const tracker = new IngestTracker(0)
    tracker.update([{ref: `layer-${A}`, offset: '5', total: '10', startedAt: undefined, updatedAt: undefined}], 1)
    expect(tracker.snapshot()[0].bytesPerSecond).toBe(0)
  })

  test('config, manifest and foreign refs are not followed', () => {
    const tracker = new IngestTracker(0)
    expect(tracker.update([status(`config-${A}`, 1, 2), status(`manifest-${B}`, 1, 2), status('upload-1', 1, 2)], 1)).toEqual([])
    expect(tracker.snapshot()).toEqual([])
  })

  test('an ingest left over from an earlier pull is skipped until it moves again', () => {
    const tracker = new IngestTracker(50_000)
    expect(tracker.update([status(`layer-${A}`, 10, 100, 1000, 2000)], 1)).toEqual([])
    // Resumed by this pull: updated after the tracker's start.
    expect(tracker.update([status(`layer-${A}`, 20, 100, 1000, 60_000)], 2)).toHaveLength(1)
  })

  test('the snapshot keeps the order first seen; dropUnfinished forgets layers that never finished', () => {
    const tracker = new IngestTracker(0)
    tracker.update([status(`layer-${A}`, 1, 10), status(`layer-${B}`, 1, 10)], 1)
    tracker.update([status(`layer-${B}`, 5, 10)], 2)
    expect(tracker.snapshot().map((layer) => [layer.digest, layer.state])).toEqual([
      [A, 'done'],
      [B, 'downloading'],
    ])
    tracker.dropUnfinished()
    expect(tracker.snapshot().map((layer) => layer.digest)).toEqual([A])
  })

  test('a layer fetched again after it was done starts again', () => {
    const tracker = new IngestTracker(0)
    tracker.update([status(`layer-${A}`, 1, 10)], 1)
    tracker.update([], 2)
    expect(tracker.update([status(`layer-${A}`, 2, 10)], 3).map((step) => step.kind)).toEqual(['started'])
  })
})
