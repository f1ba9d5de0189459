import {spawnSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {startAgent} from '../support/agent.js'
import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'
import {splitExecStart, unitValue} from '../support/systemd-exec.js'
import {until} from '../support/until.js'

/**
 * `podctl unit` against the real tools: the unit passes `systemd-analyze verify` (Debian's systemd
 * package; scripts/lab.sh installs it, so CI always has it), and its ExecStart, started as systemd
 * would, supervises a pod; the unit's stop signal ends the supervision and leaves the pod running.
 */
const client = labClient()
const namespace = uniqueNamespace('unit')
// A space in every path: ExecStart's quoting is part of what is checked.
const work = mkdtempSync(join(tmpdir(), 'podctl unit-'))
const podDirRoot = join(work, 'pod dirs')
const podLogsRoot = join(work, 'pod logs')
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: podLogsRoot,
  PODCTL_POD_DIR_ROOT: podDirRoot,
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
})
const analyze = spawnSync('systemd-analyze', ['--version'])
const hasAnalyze = analyze.status === 0

useLabNamespace(client, namespace, work)

interface PodStatus {
  supervised: boolean
  containers: Array<{id: string; state: string}>
  containerStatuses: Array<{name: string; state: string; restartCount: number}>
}

/** The ID of the pod's running container. */
function runningId(status: PodStatus): string | undefined {
  return status.containers.find((container) => container.state === 'Running')?.id
}

describe.skipIf(!hasAnalyze)('podctl unit with systemd (systemd-analyze is absent: scripts/lab.sh installs Debian package systemd)', () => {
  it('passes systemd-analyze verify, with a space in its pod directory root', async () => {
    const podDirs = join(work, 'podctl pods')
    mkdirSync(podDirs)
    const printed = await podctl(['unit', '--all', '-n', namespace, '--pod-dir-root', podDirs], {env})
    expect(printed.code, printed.stderr).toBe(0)
    const file = join(work, 'podctl.service')
    writeFileSync(file, printed.stdout)
    const verify = spawnSync('systemd-analyze', ['verify', file], {encoding: 'utf8'})
    expect({status: verify.status, stdout: verify.stdout, stderr: verify.stderr}).toEqual({status: 0, stdout: '', stderr: ''})
  })

  it('starts its ExecStart, which supervises a pod; the stop signal ends supervision and the pod keeps running', async () => {
    const manifest = join(work, 'agent.yaml')
    writeFileSync(
      manifest,
      `apiVersion: v1
kind: Pod
metadata: {name: agent, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: ${lab().busybox}, command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]}
`,
    )
    expect((await podctl(['run', '-f', manifest, '-q', '--settle', '0'], {env})).code).toBe(0)
    const printed = await podctl(['unit', '--all', '-n', namespace], {env})
    expect(printed.code, printed.stderr).toBe(0)
    const argv = splitExecStart(unitValue(printed.stdout, 'ExecStart')!)
    expect(argv).toContain(podDirRoot)
    const stopSignal = unitValue(printed.stdout, 'KillSignal') as NodeJS.Signals
    expect(stopSignal).toBe('SIGTERM')

    // As systemd starts it: the unit's command line alone, no endpoint or pod roots from the environment.
    // PODCTL_BACKOFF_BASE_MS only keeps the restart below quick (1 s instead of the kubelet's 10 s).
    const agent = startAgent(argv, {
      PATH: process.env.PATH,
      PODCTL_CONTAINER_LOGS_DIR: env.PODCTL_CONTAINER_LOGS_DIR,
      PODCTL_BACKOFF_BASE_MS: '1000',
      // No node-wide collection beside the other test files (support/lab.ts labEnv).
      PODCTL_GC_PERIOD: env.PODCTL_GC_PERIOD,
    })
    try {
      const status = async (): Promise<PodStatus> =>
        JSON.parse((await podctl(['status', 'agent', '-n', namespace, '-o', 'json'], {env})).stdout)
      const supervised = await until(
        'the agent to supervise the pod',
        async () => ((await status()).supervised === true ? status() : undefined),
        {
          timeoutMs: 30_000,
          pollMs: 200,
        },
      )
      // Supervised for real: a container stopped from outside is started again.
      const stop = await podctl(['stop', runningId(supervised)!, '-t', '0'], {env})
      expect(stop.code, stop.stderr).toBe(0)
      const restarted = await until(
        'the agent to restart the stopped container',
        async () => {
          const now = await status()
          return now.containerStatuses[0].restartCount === 1 && now.containerStatuses[0].state === 'Running' ? now : undefined
        },
        {timeoutMs: 60_000, pollMs: 200},
      )

      expect(await agent.stop(stopSignal), agent.output()).toBe(0)
      expect(agent.output()).toContain('Stopped watching; the pods keep running')
      // The supervisor's log says when each event happened (not how long after the supervisor started).
      expect(agent.output()).toMatch(/^TYPE +REASON +TIME +OBJECT +MESSAGE$/m)
      expect(agent.output()).toMatch(/^Normal +Started +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +\S+ +Started container c$/m)
      const after = await status()
      expect(after.supervised).toBe(false)
      expect(after.containerStatuses[0]).toMatchObject({name: 'c', state: 'Running', restartCount: 1})
      expect(runningId(after)).toBe(runningId(restarted))
    } finally {
      await agent.stop('SIGKILL')
      expect((await podctl(['kill', 'agent', '-n', namespace], {env})).code).toBe(0)
    }
  }, 120_000)
})

describe("podctl unit on the lab's runtime", () => {
  it('wants no unit for a runtime that runs outside systemd, though its socket is called containerd.sock, and says so', async () => {
    const endpoint = lab().endpoint
    const socket = endpoint.replace(/^unix:\/\//, '')
    const printed = await podctl(['unit', '--all', '-n', namespace], {env})
    expect(printed.code, printed.stderr).toBe(0)
    // The lab's containerd is started by scripts/lab.sh, in no service; Debian's containerd.service listens elsewhere.
    expect(unitValue(printed.stdout, 'Wants')).toBe('network-online.target')
    expect(unitValue(printed.stdout, 'After')).toBe('network-online.target')
    expect(printed.stderr).toMatch(
      new RegExp(`^No Wants=/After= for the runtime at ${endpoint}: pid \\d+ listens on ${socket} outside any system service`),
    )
    expect(printed.stderr.trimEnd().split('\n')).toHaveLength(1)
  })
})
