import {describe, expect, it} from 'vitest'

import type {PodSandbox} from '../../../../src/generated/runtime/v1/api.js'
import {currentSession, currentVantage, sessionLabels} from '../../../../src/lib/kube/session.js'
import {goneSessionPods, LIBRARY_SESSION_LABEL, testWorkerId} from '../../../../src/lib/kubelet/workers/gone-sessions.js'

const podctlMade = (name: string) => ({'io.podctl.restartPolicy': 'Always', 'io.podctl.podDirectory': `/var/lib/podctl/pods/uid-${name}`})
// A process of this boot and pid namespace that is gone: pid 1's start time is never 1 tick after boot for another pid.
const gone = sessionLabels({pid: 999_999, startTicks: 1, ...currentVantage()})
const alive = sessionLabels(currentSession())

function sandbox(name: string, labels: Record<string, string>, annotations: Record<string, string> = podctlMade(name)): PodSandbox {
  return {id: `id-${name}`, metadata: {name, namespace: 'ci', uid: `uid-${name}`, attempt: 0}, labels, annotations} as unknown as PodSandbox
}

describe('the pods a reaper takes', () => {
  it("takes podctl's library pods whose session is gone, and only those", () => {
    const sandboxes = [
      sandbox('orphan', {...gone, [LIBRARY_SESSION_LABEL]: 'vitest-2'}),
      sandbox('live', {...alive, [LIBRARY_SESSION_LABEL]: ''}),
      sandbox('crictls', {...gone, [LIBRARY_SESSION_LABEL]: ''}, {}),
      sandbox('debug-session', gone),
      sandbox('no-session', {[LIBRARY_SESSION_LABEL]: ''}),
      sandbox('other-pid-namespace', {...gone, 'io.podctl.session.pidns': 'pid:[1]', [LIBRARY_SESSION_LABEL]: ''}),
    ]
    expect([...goneSessionPods(sandboxes).keys()]).toEqual(['orphan_ci'])
  })

  it("names the test runner's worker: vitest's pool, Jest's worker", () => {
    expect([testWorkerId({VITEST_POOL_ID: '3'}), testWorkerId({JEST_WORKER_ID: '2'}), testWorkerId({})]).toEqual(['vitest-3', 'jest-2', ''])
  })
})
