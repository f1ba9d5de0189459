import {describe, expect, it} from 'vitest'

import {splitEventsReason} from '../../../src/lib/cri/event-sharing.js'

const runtime = (runtimeName: string, runtimeVersion: string) => ({runtimeName, runtimeVersion})

describe('splitEventsReason', () => {
  it('names containerd 1.7 and CRI-O before 1.28, which give each event to one subscriber', () => {
    expect(splitEventsReason(runtime('containerd', 'v1.7.20'))).toBe(
      'containerd 1.7.20 gives each container event to one subscriber only (containerd 2.0 gives each to all)',
    )
    expect(splitEventsReason(runtime('cri-o', '1.26.4'))).toBe(
      'cri-o 1.26.4 gives each container event to one subscriber only (CRI-O 1.28 gives each to all)',
    )
    expect(splitEventsReason(runtime('cri-o', '1.27.9'))).toBeDefined()
  })

  it('says nothing of runtimes that broadcast, have no stream, or cannot be told', () => {
    for (const version of [
      runtime('containerd', 'v2.1.4'),
      runtime('containerd', '2.0.0'),
      runtime('containerd', '1.6.20'),
      runtime('cri-o', '1.28.0'),
      runtime('cri-o', '1.34.0'),
      runtime('cri-o', 'unknown'),
      runtime('fake', '1.0'),
    ]) {
      expect(splitEventsReason(version)).toBeUndefined()
    }

    expect(splitEventsReason(undefined)).toBeUndefined()
  })
})
