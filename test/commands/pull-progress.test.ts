/**
 * `pull --progress` as users see it, against fake runtimes over the real wire: one that serves
 * containerd's content service beside the CRI (its PullImage answers only after the polls the test
 * needs, so no timing is assumed), one that does not (CRI-O): the pull goes on, the spinner alone.
 */
import {afterAll, beforeAll, describe, expect, test} from 'vitest'

import type {Status} from '../../src/generated/containerd/services/content/v1/content.js'
import {fakeImage, FakeImageService} from '../support/fake-image-service.js'
import {endpointEnv, podctl} from '../support/podctl.js'
import {until} from '../support/until.js'

const LAYER = `sha256:${'e5'.repeat(32)}`
const IMAGE_ID = `sha256:${'f6'.repeat(32)}`
const env = endpointEnv()
const pulledLine = (image: string) => `Successfully pulled image "${image}" in 0s. Image size: 3000 bytes. ID: f6f6f6f6f6f6f\n`

let containerd: FakeImageService
let crio: FakeImageService

beforeAll(async () => {
  let committed = false
  const layerAt = (offset: number): Status => ({
    ref: `layer-${LAYER}`,
    offset: String(offset),
    total: '3000',
    expected: LAYER,
    startedAt: new Date(),
    updatedAt: new Date(Date.now() + 1000),
  })
  containerd = await new FakeImageService({
    listStatuses: () => (committed ? [] : [layerAt(Math.min(containerd.contentCalls.length, 2) * 1000)]),
    async pullImage() {
      await until('two progress polls', () => containerd.contentCalls.length >= 2, {timeoutMs: 10_000})
      committed = true
      return IMAGE_ID
    },
    imageStatus: () => fakeImage(IMAGE_ID, '3000'),
  }).start({content: true})
  crio = await new FakeImageService({pullImage: () => IMAGE_ID, imageStatus: () => fakeImage(IMAGE_ID, '3000')}).start()
})

afterAll(async () => {
  await containerd.stop()
  await crio.stop()
})

/** The result line with its duration made stable ("in 0s"). */
const stableStdout = (stdout: string) => stdout.replace(/ in [\d.]+m?s\./, ' in 0s.')

describe('pull --progress plain', () => {
  test('a line as the layer is first seen and one when it is done, stdout unchanged', async () => {
    const result = await podctl(['pull', '-r', containerd.endpoint, '--progress', 'plain', 'localhost:5000/app:v1'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr.split('\n').filter((line) => line.includes('layer'))).toEqual([
      'Downloading layer e5e5e5e5e5e5: 1000 of 3000 bytes',
      'Downloaded layer e5e5e5e5e5e5: 3000 bytes',
    ])
    expect(stableStdout(result.stdout)).toBe(pulledLine('localhost:5000/app:v1'))
    expect(new Set(containerd.contentCalls)).toEqual(new Set(['k8s.io']))
  })

  test('a runtime without the content service: no lines, the same result, and --debug says why', async () => {
    const result = await podctl(['pull', '-r', crio.endpoint, '--progress', 'plain', '--debug', 'localhost:5000/app:v1'], {env})
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).not.toContain('layer ')
    expect(result.stderr).toMatch(/^debug: pull progress: no containerd content service on the image endpoint \(UNIMPLEMENTED: .+\)$/m)
    expect(stableStdout(result.stdout)).toBe(pulledLine('localhost:5000/app:v1'))
  })
})
