import {describe, expect, it} from 'vitest'

import {normalEvent, warningEvent} from '../../../src/lib/kube/events.js'
import {eventLines, podTimeline} from '../../../src/lib/output/events.js'

const mark = (text: string) => `<${text}>`

describe('eventLines', () => {
  it('compact: TYPE and REASON in fixed columns, warnings painted (pull)', () => {
    const line = eventLines({kind: 'compact'}, mark)
    expect(line(normalEvent('Pulled', 'Container image "busybox" already present on machine'))).toBe(
      'Normal  Pulled            Container image "busybox" already present on machine',
    )
    expect(line(warningEvent('Failed', 'boom'))).toBe('<Warning Failed            boom>')
  })

  it('warnings: only warnings, the label painted (kill)', () => {
    const line = eventLines({kind: 'warnings'}, mark)
    expect(line(normalEvent('Killing', 'Stopping container app', 'web_default/app'))).toBeUndefined()
    const hook = warningEvent('FailedPreStopHook', 'exited 7', 'web_default/app')
    expect(line(hook)).toBe('<Warning:> FailedPreStopHook web_default/app: exited 7')
  })

  it('timeline: a header first, then one row per event with the pod prefix stripped (run)', () => {
    const style = podTimeline([{name: 'web', namespace: 'default', initContainers: [{name: 'init'}], containers: [{name: 'app'}]}])
    expect(style).toEqual({kind: 'timeline', objects: ['web_default', 'web_default/init', 'web_default/app'], stripPrefix: 'web_default/'})
    const line = eventLines(style, mark)
    const first = line(normalEvent('Created', 'Created container: app', 'web_default/app'))!.split('\n')
    expect(first[0]).toMatch(/^TYPE\s+REASON\s+AGE\s+OBJECT\s+MESSAGE$/)
    expect(first[1]).toMatch(/^Normal\s+Created\s+\d+\.\ds\s+app\s+Created container: app$/)
    expect(line(warningEvent('BackOff', 'Back-off', 'web_default/app'))).toMatch(/^<Warning\s+BackOff\s+\S+\s+app\s+Back-off>$/)
  })

  it('timeline for several pods keeps full object names', () => {
    const pods = ['a', 'b'].map((name) => ({name, namespace: 'ns', initContainers: [], containers: [{name: 'c'}]}))
    expect(podTimeline(pods)).toEqual({kind: 'timeline', objects: ['a_ns', 'a_ns/c', 'b_ns', 'b_ns/c'], stripPrefix: undefined})
  })
})
