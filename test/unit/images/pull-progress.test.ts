import {describe, expect, test} from 'vitest'

import type {IngestListing, IngestSource, IngestStatus} from '../../../src/lib/containerd/content.js'
import type {LayerProgress, LayerStep} from '../../../src/lib/images/ingests.js'
import {IngestPoller, type ProgressView} from '../../../src/lib/images/pull-progress.js'
import {until} from '../../support/until.js'

const A = `sha256:${'a1'.repeat(32)}`
const B = `sha256:${'b2'.repeat(32)}`
const now = Date.now()

function layerStatus(digest: string, offset: number, total: number): IngestStatus {
  return {ref: `layer-${digest}`, offset: String(offset), total: String(total), startedAt: new Date(now), updatedAt: new Date(now + 1000)}
}

/** A content service that answers `first` once, then `answer` (which a test changes as the pull goes on). */
class ScriptedSource implements IngestSource {
  polls = 0
  opened = 0
  closed = 0

  constructor(
    public answer: IngestListing,
    private first?: IngestListing,
  ) {}

  async listStatuses(): Promise<IngestListing> {
    this.polls++
    const {first} = this
    this.first = undefined
    return first ?? this.answer
  }

  close(): void {
    this.closed++
  }
}

function recordingView() {
  const steps: LayerStep[] = []
  const frames: LayerProgress[][] = []
  const unavailable: string[] = []
  const view: ProgressView = {
    step: (step) => steps.push(step),
    layers: (layers) => frames.push(layers.map((layer) => ({...layer}))),
    unavailable: (why) => unavailable.push(why),
  }
  return {view, steps, frames, unavailable}
}

function poller(source: ScriptedSource, view: ProgressView) {
  return new IngestPoller(
    async () => {
      source.opened++
      return source
    },
    view,
    {intervalMs: 1, now: () => now},
  )
}

const statuses = (...list: IngestStatus[]): IngestListing => ({kind: 'statuses', statuses: list})

describe('IngestPoller', () => {
  test('polls while a pull is in flight; the last poll after it tells the committed layers', async () => {
    const source = new ScriptedSource(statuses(layerStatus(A, 60, 100)), statuses(layerStatus(A, 10, 100)))
    const {view, steps, frames} = recordingView()
    const progress = poller(source, view)
    const ended = progress.pullStarted()
    await until('two polls', () => source.polls >= 2)
    // The pull returns: the layer has left the ingests (committed).
    source.answer = statuses()
    await ended()
    expect(steps.map((step) => [step.kind, step.layer.digest])).toEqual([
      ['started', A],
      ['done', A],
    ])
    expect(frames.at(-1)).toEqual([expect.objectContaining({digest: A, state: 'done', doneBytes: 100})])
    expect(source.closed).toBe(1)
  })

  test('no content service: said once, no more polls, and later pulls do not poll', async () => {
    const source = new ScriptedSource({kind: 'unsupported', why: 'UNIMPLEMENTED: unknown service containerd.services.content.v1.Content'})
    const {view, unavailable, frames} = recordingView()
    const progress = poller(source, view)
    await progress.pullStarted()()
    await progress.pullStarted()()
    expect(unavailable).toEqual(['UNIMPLEMENTED: unknown service containerd.services.content.v1.Content'])
    expect(source.polls).toBe(1)
    expect(frames).toEqual([])
  })

  test('a failed poll is skipped; the next one counts', async () => {
    const source = new ScriptedSource(statuses(layerStatus(B, 5, 50)), {kind: 'failed', why: 'DEADLINE_EXCEEDED'})
    const {view, steps, unavailable} = recordingView()
    const progress = poller(source, view)
    const ended = progress.pullStarted()
    await until('the second poll', () => steps.length > 0)
    source.answer = statuses()
    await ended()
    expect(unavailable).toEqual([])
    expect(steps.map((step) => step.kind)).toEqual(['started', 'done'])
  })

  test('concurrent pulls share one loop, which ends with the last of them', async () => {
    const source = new ScriptedSource(statuses(layerStatus(A, 1, 10), layerStatus(B, 1, 10)))
    const {view, steps} = recordingView()
    const progress = poller(source, view)
    const first = progress.pullStarted()
    const second = progress.pullStarted()
    await until('a poll', () => source.polls >= 1)
    // The first pull is over, but B is still downloading for the second.
    source.answer = statuses(layerStatus(B, 5, 10))
    const firstDone = first()
    await until('A done', () => steps.some((step) => step.kind === 'done'))
    expect(source.opened).toBe(1)
    source.answer = statuses()
    await second()
    await firstDone
    expect(steps.map((step) => [step.kind, step.layer.digest])).toEqual([
      ['started', A],
      ['started', B],
      ['done', A],
      ['done', B],
    ])
    expect(source.closed).toBe(1)
  })

  test('a layer still in the ingests after the pulls (a failed pull) is not called done', async () => {
    const source = new ScriptedSource(statuses(layerStatus(A, 3, 10)))
    const {view, steps, frames} = recordingView()
    const progress = poller(source, view)
    await progress.pullStarted()()
    expect(steps.map((step) => step.kind)).toEqual(['started'])
    expect(frames.at(-1)).toEqual([])
  })

  test('a source that cannot be opened counts as no content service', async () => {
    const {view, unavailable} = recordingView()
    const progress = new IngestPoller(() => Promise.reject(new Error('no socket')), view, {intervalMs: 1})
    await progress.pullStarted()()
    expect(unavailable).toEqual(['Error: no socket'])
  })
})
