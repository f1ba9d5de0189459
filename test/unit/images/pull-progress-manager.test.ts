/**
 * The image manager with pull progress, against fake runtimes over the real wire: one with
 * containerd's content service beside the CRI (its ingests scripted per poll), one without (CRI-O).
 * The fake PullImage answers only after the polls the test needs, so no timing is assumed.
 */
import {afterAll, afterEach, beforeAll, describe, expect, test} from 'vitest'

import type {Status} from '../../../src/generated/containerd/services/content/v1/content.js'
import {CriClient} from '../../../src/lib/cri/client.js'
import {anonymous} from '../../../src/lib/images/credentials.js'
import {ImageManager} from '../../../src/lib/images/image-manager.js'
import {stepLine} from '../../../src/lib/images/progress-view.js'
import {fakeImage, FakeImageService} from '../../support/fake-image-service.js'
import {until} from '../../support/until.js'

const LAYER = `sha256:${'d4'.repeat(32)}`
const layerAt = (offset: number): Status => ({
  ref: `layer-${LAYER}`,
  offset: String(offset),
  total: '3000',
  expected: LAYER,
  startedAt: new Date(),
  updatedAt: new Date(Date.now() + 1000),
})

let containerd: FakeImageService
let crio: FakeImageService
const clients: CriClient[] = []

function managerOn(fake: FakeImageService, lines: string[], unavailable: string[] = []) {
  const client = new CriClient({runtimeEndpoint: fake.endpoint, callTimeoutMs: 5000})
  clients.push(client)
  return new ImageManager(client, () => {}, {
    credentials: anonymous,
    progress: {step: (step) => lines.push(stepLine(step)), unavailable: (why) => unavailable.push(why)},
  })
}

beforeAll(async () => {
  containerd = await new FakeImageService().start({content: true})
  crio = await new FakeImageService().start()
})

afterEach(() => {
  for (const client of clients.splice(0)) client.close()
  containerd.reset()
  crio.reset()
})

afterAll(async () => {
  await containerd.stop()
  await crio.stop()
})

describe('pull progress through the image manager', () => {
  test('layer steps from the ingests while PullImage runs, the last one before the pull is reported', async () => {
    let committed = false
    containerd.reset({
      listStatuses: () => (committed ? [] : [layerAt(containerd.contentCalls.length * 1000)]),
      async pullImage() {
        await until('two polls', () => containerd.contentCalls.length >= 2, {timeoutMs: 5000})
        committed = true
        return 'sha256:pulled'
      },
      imageStatus: () => fakeImage('sha256:pulled', '3000'),
    })
    const lines: string[] = []
    const result = await managerOn(containerd, lines).ensureImage({image: 'localhost:5000/app:v1', policy: 'Always'})
    expect(result.pulled).toBe(true)
    expect(lines).toEqual([`Downloading layer d4d4d4d4d4d4: 1000 of 3000 bytes`, `Downloaded layer d4d4d4d4d4d4: 3000 bytes`])
    expect(new Set(containerd.contentCalls)).toEqual(new Set(['k8s.io']))
  })

  test('no content service: the pull goes on as before, and is asked about once', async () => {
    crio.reset({imageStatus: () => fakeImage('sha256:pulled')})
    const lines: string[] = []
    const unavailable: string[] = []
    const manager = managerOn(crio, lines, unavailable)
    await manager.ensureImage({image: 'localhost:5000/app:v1', policy: 'Always'})
    await manager.ensureImage({image: 'localhost:5000/app:v2', policy: 'Always'})
    expect(lines).toEqual([])
    expect(unavailable).toHaveLength(1)
    expect(unavailable[0]).toMatch(/^UNIMPLEMENTED: /)
  })

  test('no view, no polling', async () => {
    containerd.reset({imageStatus: () => fakeImage('sha256:pulled')})
    const client = new CriClient({runtimeEndpoint: containerd.endpoint, callTimeoutMs: 5000})
    clients.push(client)
    await new ImageManager(client, () => {}, {credentials: anonymous}).ensureImage({image: 'localhost:5000/app:v1', policy: 'Always'})
    expect(containerd.contentCalls).toEqual([])
  })
})
