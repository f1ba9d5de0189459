import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import type {CriClient} from '../../../../src/lib/cri/client.js'
import type {PodEvent} from '../../../../src/lib/kube/events.js'
import {superviseSelection} from '../../../../src/lib/kubelet/supervisor/supervisor.js'
import {supervisorLockPath} from '../../../../src/lib/kubelet/config/supervisor-lock.js'
import {SupervisorMetrics} from '../../../../src/lib/kubelet/workers/supervisor-metrics.js'
import {renderRegistry} from '../../../../src/lib/metrics/exposition.js'

const UID = 'a6c1d2e3-supervised'
const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {stdio: 'ignore'})
afterAll(() => {
  other.kill('SIGKILL')
})

/** A runtime that only lists (no containers); any other call is a sync acting on the pod. */
function listingOnly(calls: string[]): CriClient {
  return {
    async runtime(method: string) {
      // The event stream asks the runtime's Version once (does it split its events?): not a sync of the pod.
      if (method === 'version') return {runtimeName: 'stub', runtimeVersion: '0'}
      calls.push(method)
      if (method === 'listContainers') return {containers: []}
      throw new Error(`unexpected ${method}`)
    },
  } as unknown as CriClient
}

function podDirRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'podctl-supervisor-'))
  mkdirSync(join(root, UID))
  writeFileSync(
    join(root, UID, 'pod.json'),
    JSON.stringify({name: 'web', namespace: 'default', uid: UID, containers: [], initContainers: []}),
  )
  return root
}

const target = {
  fullName: 'web_default',
  sandboxes: [{id: 'sandbox-1', metadata: {name: 'web', namespace: 'default', uid: UID, attempt: 0}, state: 'SANDBOX_READY', createdAt: 1}],
} as never

describe('superviseSelection: one supervisor per pod', () => {
  it('leaves a pod another live supervisor holds alone (one warning, one Standby), then takes it over when that one is gone', async () => {
    const root = podDirRoot()
    const path = supervisorLockPath(root, UID)
    const since = '2026-11-30T10:00:00.000Z'
    writeFileSync(path, JSON.stringify({pid: other.pid, since, holder: 'podctl sync --watch', token: 'theirs'}))
    const calls: string[] = []
    const events: PodEvent[] = []
    const controller = new AbortController()
    let turns = 0
    let beforeTakeover: string[] = []
    const select = async () => {
      turns++
      // After three turns held by the other, it stops (SIGKILL): its lock is left with a dead pid.
      if (turns === 4) {
        other.kill('SIGKILL')
        await new Promise((resolve) => {
          other.once('exit', resolve)
        })
      }

      return [target]
    }

    const done = superviseSelection(select, {podDirRoot: root} as never, {
      client: listingOnly(calls),
      images: {} as never,
      events(event) {
        events.push(event)
        if (event.reason !== 'TookOver') return
        beforeTakeover = [...calls]
        controller.abort()
      },
      signal: controller.signal,
      pollMs: 20,
    })
    await done
    // This stub has no event stream: the supervisor polls (one Polling event), which is beside the point here.
    const lockEvents = events.filter((event) => event.reason !== 'Polling')
    expect(lockEvents.slice(0, 4).map((event) => event.reason)).toEqual(['Supervising', 'AlreadySupervised', 'Standby', 'TookOver'])
    expect(lockEvents[1]).toMatchObject({
      type: 'Warning',
      object: 'web_default',
      message:
        `Pod is supervised by pid ${other.pid} (podctl sync --watch) since ${since}; ` +
        'podctl leaves it, and every other pod that process supervises, to that process and takes over when it stops',
    })
    expect(lockEvents[3]).toMatchObject({
      type: 'Normal',
      message: `pid ${other.pid} (podctl sync --watch) no longer supervises the pod; podctl supervises it now`,
    })
    // While the other held it, only listings reached the runtime: no sync of the pod.
    expect(turns).toBeGreaterThanOrEqual(4)
    expect(new Set(beforeTakeover)).toEqual(new Set(['listContainers']))
    // The loop ended: the lock it took is released.
    expect(existsSync(path)).toBe(false)
  })
})

describe('superviseSelection: a pod podctl did not record', () => {
  it('says NotManaged once, not on every turn, and leaves the pod alone', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-supervisor-'))
    const calls: string[] = []
    const events: PodEvent[] = []
    const controller = new AbortController()
    let turns = 0
    await superviseSelection(
      async () => {
        if (++turns === 5) controller.abort()
        return [target]
      },
      {podDirRoot: root} as never,
      {
        client: listingOnly(calls),
        images: {} as never,
        events: (event) => events.push(event),
        signal: controller.signal,
        pollMs: 10,
      },
    )
    expect(turns).toBeGreaterThanOrEqual(5)
    expect(events.filter((event) => event.reason === 'NotManaged')).toHaveLength(1)
    expect(new Set(calls)).toEqual(new Set(['listContainers']))
  })
})

describe('superviseSelection: --metrics-address', () => {
  it("reports each listing of the supervised pods into the metrics (the kubelet's running pods and containers)", async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-supervisor-'))
    const controller = new AbortController()
    const metrics = new SupervisorMetrics()
    let turns = 0
    const running = {id: 'c1', podSandboxId: 'sandbox-1', state: 'CONTAINER_RUNNING', metadata: {name: 'app', attempt: 2}}
    const client = {
      async runtime(method: string) {
        if (method === 'listContainers') return {containers: [running]}
        throw new Error(`unexpected ${method}`)
      },
    } as unknown as CriClient
    await superviseSelection(
      async () => {
        if (++turns === 3) controller.abort()
        return [target]
      },
      {podDirRoot: root} as never,
      {client, images: {} as never, events() {}, signal: controller.signal, pollMs: 10, metrics},
    )
    const text = renderRegistry(metrics.registry)
    expect(text).toContain('\nkubelet_running_pods 1\n')
    expect(text).toContain('\nkubelet_running_containers{container_state="running"} 1\n')
    expect(text).toContain('\npodctl_container_restarts_total{namespace="default",pod="web",container="app"} 2\n')
  })
})
