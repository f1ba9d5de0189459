/**
 * One probe manager per runtime in a process (issue 32): leases of the same container share its
 * probes, so an exec probe runs once a period however many users follow the container.
 */
import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {parseDocuments} from '../../../src/lib/manifest/load.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'
import type {ProbeEvent} from '../../../src/lib/prober/manager.js'
import {probesFor} from '../../../src/lib/prober/shared-probes.js'
import {FakePodRuntime} from '../../support/fake-pod-runtime.js'
import {until} from '../../support/until.js'

const POD = `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
  containers:
  - name: app
    image: nginx
    readinessProbe: {exec: {command: [check]}, periodSeconds: 10, failureThreshold: 1}
`

let fake: FakePodRuntime

beforeAll(async () => {
  fake = await new FakePodRuntime().start()
})

afterAll(async () => {
  await fake.close()
})

const execs = () => fake.calls.filter((call) => call.method === 'execSync').length

describe('shared probes', () => {
  it('probes a container two leases follow once, tells its events to the first, and stops with the last lease', async () => {
    const [document] = await parseDocuments(POD, 'pod.yaml')
    const pod = parsePod(document, 'pod.yaml', {newUid: () => 'uid-web'})
    fake.execSyncAnswer = () => ({stdout: Buffer.from('not yet'), stderr: Buffer.alloc(0), exitCode: 1})
    const first: ProbeEvent[] = []
    const second: ProbeEvent[] = []
    const run = probesFor(fake.client).lease({onEvent: (event) => first.push(event)})
    const supervisor = probesFor(fake.client).lease({onEvent: (event) => second.push(event)})
    // Started after the manager: its probes start at once (no start-up jitter).
    const target = {pod, podSandboxId: 'sb', containerName: 'app', containerId: 'c-app', startedAtMs: Date.now() + 1}
    run.addContainer(target)
    supervisor.addContainer(target)
    // The first probe runs at once, the next one a period (10 s) later: two managers would have run two by now.
    await until('the first probe and its event', () => first.length > 0, {timeoutMs: 5000})
    await new Promise((resolve) => {
      setTimeout(resolve, 500)
    })
    expect(execs()).toBe(1)
    expect(first.map((event) => event.reason)).toEqual(['Unhealthy'])
    expect(second).toEqual([])
    expect(supervisor.result('c-app', 'readiness')).toBe('failure')

    // The first lease lets go: the container stays probed for the second.
    await run.stop()
    expect(supervisor.result('c-app', 'readiness')).toBe('failure')
    expect(run.follows('c-app')).toBe(false)

    // The last lease lets go: the manager goes, and a new lease knows nothing of the container.
    await supervisor.stop()
    const later = probesFor(fake.client).lease()
    expect(later.result('c-app', 'readiness')).toBe('unknown')
    await later.stop()
    expect(execs()).toBe(1)
  })
})
