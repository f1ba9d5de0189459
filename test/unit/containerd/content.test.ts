import {status as GrpcStatus} from '@grpc/grpc-js'
import {afterAll, beforeAll, describe, expect, test} from 'vitest'

import {classify, ContentIngests} from '../../../src/lib/containerd/content.js'
import {FakeImageService} from '../../support/fake-image-service.js'

const LAYER = `layer-sha256:${'c3'.repeat(32)}`

describe('ContentIngests', () => {
  let containerd: FakeImageService
  let crio: FakeImageService

  beforeAll(async () => {
    containerd = await new FakeImageService({
      listStatuses: () => [
        {ref: LAYER, offset: '1048576', total: '25170222', expected: '', startedAt: new Date(1000), updatedAt: new Date(3000)},
      ],
    }).start({content: true})
    crio = await new FakeImageService().start()
  })

  afterAll(async () => {
    await containerd.stop()
    await crio.stop()
  })

  test('lists the ingests of the CRI plugin’s namespace, named in the containerd-namespace header', async () => {
    const source = new ContentIngests(containerd.endpoint)
    try {
      expect(await source.listStatuses()).toEqual({
        kind: 'statuses',
        statuses: [expect.objectContaining({ref: LAYER, offset: '1048576', total: '25170222', updatedAt: new Date(3000)})],
      })
      expect(containerd.contentCalls).toEqual(['k8s.io'])
    } finally {
      source.close()
    }
  })

  test('an endpoint without the service (CRI-O) is unsupported', async () => {
    const source = new ContentIngests(crio.endpoint)
    try {
      const listing = await source.listStatuses()
      expect(listing.kind).toBe('unsupported')
      expect(listing.kind === 'unsupported' && listing.why).toMatch(/^UNIMPLEMENTED: /)
    } finally {
      source.close()
    }
  })

  test('closed, it opens a new channel on the next poll', async () => {
    const source = new ContentIngests(containerd.endpoint)
    await source.listStatuses()
    source.close()
    expect((await source.listStatuses()).kind).toBe('statuses')
    source.close()
  })
})

describe('classify', () => {
  test.each([
    [GrpcStatus.UNIMPLEMENTED, 'unsupported'],
    [GrpcStatus.PERMISSION_DENIED, 'unsupported'],
    [GrpcStatus.UNAUTHENTICATED, 'unsupported'],
    [GrpcStatus.INVALID_ARGUMENT, 'unsupported'],
    [GrpcStatus.DEADLINE_EXCEEDED, 'failed'],
    [GrpcStatus.UNAVAILABLE, 'failed'],
    [GrpcStatus.INTERNAL, 'failed'],
  ])('gRPC code %d → %s', (code, kind) => {
    expect(classify({code, details: 'why'})).toEqual({kind, why: `${GrpcStatus[code]}: why`})
  })
})
