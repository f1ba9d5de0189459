import {describe, expect, it} from 'vitest'

import {eventAge, EventTimeline} from '../../../src/lib/output/timeline.js'

describe('event timeline', () => {
  it('prints a header once and aligned rows, objects without the pod prefix for a single pod', () => {
    const timeline = new EventTimeline({objects: ['web_shop', 'web_shop/app', 'web_shop/sidecar'], stripPrefix: 'web_shop/', startedAt: 0})
    const first = timeline.format({
      type: 'Normal',
      reason: 'Pulled',
      message: 'Container image "x" already present on machine',
      object: 'web_shop/app',
      at: new Date(1200),
    })
    const second = timeline.format({
      type: 'Warning',
      reason: 'FailedPostStartHook',
      message: 'PostStartHook failed',
      object: 'web_shop/sidecar',
      at: new Date(12_500),
    })
    expect(first.split('\n')).toEqual([
      'TYPE     REASON                  AGE    OBJECT     MESSAGE',
      'Normal   Pulled                  1.2s   app        Container image "x" already present on machine',
    ])
    expect(second).toBe('Warning  FailedPostStartHook     12s    sidecar    PostStartHook failed')
    expect(eventAge(125_000)).toBe('2m5s')
  })

  it("with clock 'time' (a supervisor's log), a TIME column with each event's own time, not its age since the start", () => {
    const timeline = new EventTimeline({objects: ['web_shop'], startedAt: Date.parse('2026-12-07T09:00:00Z'), clock: 'time'})
    const row = timeline.format({
      type: 'Normal',
      reason: 'Started',
      message: 'Started container app',
      object: 'web_shop',
      at: new Date('2026-12-07T14:41:05.123Z'),
    })
    expect(row.split('\n')).toEqual([
      'TYPE     REASON                  TIME                 OBJECT     MESSAGE',
      'Normal   Started                 2026-12-07T14:41:05Z web_shop   Started container app',
    ])
  })
})
