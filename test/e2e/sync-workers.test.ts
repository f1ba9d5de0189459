import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * The supervisor's pod workers against the lab, as a user sees them: one pod's 30 s kill leaves the
 * other pods' crash loops on the kubelet's schedule; a pod run after `sync --watch` started is
 * supervised; `run --supervise` keeps supervising past its --timeout; a container failing liveness
 * every second is restarted with growing gaps (the crash back-off).
 */
const client = labClient()
const namespace = uniqueNamespace('workers')
const work = mkdtempSync(join(tmpdir(), 'podctl-workers-'))
const busybox = lab().busybox
const env = (backOffBaseMs?: number) =>
  labEnv({
    PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
    PODCTL_POD_DIR_ROOT: join(work, 'pods'),
    PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
    PODCTL_BACKOFF_BASE_MS: backOffBaseMs === undefined ? undefined : String(backOffBaseMs),
  })

function manifest(name: string, spec: string): string {
  const path = join(work, `${name}.yaml`)
  writeFileSync(
    path,
    `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec:\n${spec.replaceAll('BUSYBOX', busybox)}`,
  )
  return path
}

/** A container that exits 1 after `seconds`, restarted (restartPolicy Always) by whoever supervises it. */
const crashing = (seconds: number) => `  terminationGracePeriodSeconds: 2
  containers:
  - {name: c, image: BUSYBOX, command: [sh, -c, "sleep ${seconds}; exit 1"]}
`

/** The lines a supervisor prints, each with when it arrived (ms since the process started). */
interface Line {
  at: number
  text: string
}

function lineCollector(started: number) {
  const lines: Line[] = []
  let partial = ''
  return {
    lines,
    add(chunk: Buffer | string) {
      const parts = (partial + chunk.toString()).split('\n')
      partial = parts.pop() ?? ''
      for (const text of parts) lines.push({at: Date.now() - started, text})
    },
  }
}

/** When `pod`'s container c was started by the supervisor, in ms since it started. */
const startsOf = (lines: Line[], pod: string) =>
  lines.filter((line) => line.text.includes(`${pod}_${namespace}/c`) && /Started\s+container c/.test(line.text)).map((line) => line.at)

useLabNamespace(client, namespace, work)

describe('sync --watch: a worker per pod', () => {
  it("one pod's 30 s liveness kill leaves another pod's crash loop on the kubelet's schedule", async () => {
    // Ignores SIGTERM (the kill waits out the whole 30 s grace period) and fails liveness at once.
    const stuck = manifest(
      'stuck',
      `  terminationGracePeriodSeconds: 30
  containers:
  - name: c
    image: BUSYBOX
    command: [sh, -c, "trap '' TERM; while true; do sleep 1; done"]
    livenessProbe:
      exec: {command: ["false"]}
      periodSeconds: 1
      failureThreshold: 1
`,
    )
    expect((await podctl(['run', '-f', stuck, '-q', '--settle', '0'], {env: env()})).code).toBe(0)
    expect((await podctl(['run', '-f', manifest('crasher', crashing(1)), '-q', '--settle', '0'], {env: env()})).code).toBe(0)
    const started = Date.now()
    const out = lineCollector(started)
    let signalled = false
    // The real ladder (10 s, 20 s): the crasher's restarts at once, then ~11 s and ~21 s apart (1 s run + back-off).
    const watch = await podctl(['sync', '--watch', '--all', '-n', namespace], {
      env: env(),
      timeoutMs: 90_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          out.add(chunk)
          if (!signalled && startsOf(out.lines, 'crasher').length >= 3 && startsOf(out.lines, 'stuck').length > 0) {
            signalled = true
            child.kill('SIGINT')
          }
        })
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    const killing = out.lines.find((line) => /Killing\s.*Container c failed liveness probe/.test(line.text) && line.text.includes('stuck_'))
    expect(killing, watch.stdout).toBeDefined()
    const [first, second, third] = startsOf(out.lines, 'crasher')
    const [stuckRestart] = startsOf(out.lines, 'stuck')
    // The stuck pod's kill took its grace period; the crasher's first two restarts came while it lasted.
    expect(stuckRestart - killing!.at).toBeGreaterThan(25_000)
    expect(second).toBeLessThan(stuckRestart)
    expect(first).toBeLessThan(5000)
    // On the back-off's schedule, as if the stuck pod were not there (a listing a second, the start a second or two).
    expect(second - first).toBeGreaterThan(10_500)
    expect(second - first).toBeLessThan(15_000)
    expect(third - second).toBeGreaterThan(20_500)
    expect(third - second).toBeLessThan(25_000)
    expect(watch.stdout).toMatch(/Warning\s+BackOff\s.*crasher_\S+\/c\s+Back-off restarting failed container c/)
    expect((await podctl(['kill', 'stuck', 'crasher', '-n', namespace, '--force'], {env: env()})).code).toBe(0)
  }, 120_000)

  it('supervises a pod run after it started', async () => {
    let stdout = ''
    let signalled = false
    let ran: Promise<{code: number | null; stderr: string}> | undefined
    const watch = await podctl(['sync', '--watch', '--all', '-n', namespace], {
      env: env(1000),
      timeoutMs: 60_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
          // Watching (nothing to supervise yet): now run the pod.
          if (!ran && stdout.includes('Watching pods'))
            ran = podctl(['run', '-f', manifest('later', crashing(1)), '-q', '--settle', '0'], {env: env(1000)})
          if (!signalled && /Started\s+container c/.test(stdout)) {
            signalled = true
            child.kill('SIGINT')
          }
        })
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    expect((await ran)?.code).toBe(0)
    // The exit after the run was seen and restarted by the supervisor, which never called the pod unmanaged.
    expect(stdout).toMatch(/Normal\s+Started\s.*later_\S+\/c\s+Started container c/)
    expect(stdout).not.toContain('NotManaged')
    expect((await podctl(['kill', 'later', '-n', namespace, '--force'], {env: env()})).code).toBe(0)
  })
})

describe('run --supervise past its --timeout', () => {
  it('still restarts a crashing container 40 s in, and --timeout never cuts a call short', async () => {
    const started = Date.now()
    const out = lineCollector(started)
    let signalled = false
    // A short ladder (0.2 s → 6 s): a restart every few seconds, forever.
    const run = await podctl(['run', '-f', manifest('owned', crashing(3)), '--supervise', '--settle', '0', '--timeout', '8s'], {
      env: env(200),
      timeoutMs: 90_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          out.add(chunk)
          if (!signalled && startsOf(out.lines, 'owned').some((at) => at > 40_000)) {
            signalled = true
            child.kill('SIGINT')
          }
        })
      },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(startsOf(out.lines, 'owned').filter((at) => at > 8000).length).toBeGreaterThan(3)
    expect(startsOf(out.lines, 'owned').at(-1)).toBeGreaterThan(40_000)
    expect(run.stdout + run.stderr).not.toContain('--timeout ran out')
    expect(run.stdout).not.toMatch(/SyncFailed|FailedSync/)
    expect(await sandboxesIn(client, namespace)).not.toContain(expect.stringContaining('owned'))
  }, 120_000)
})

describe('sync --watch: liveness restarts back off', () => {
  it('restarts a container failing liveness every second as the kubelet does: twice at once, then growing gaps', async () => {
    const path = manifest(
      'unhealthy',
      `  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: BUSYBOX
    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
    livenessProbe:
      exec: {command: ["false"]}
      periodSeconds: 1
      failureThreshold: 1
`,
    )
    expect((await podctl(['run', '-f', path, '-q', '--settle', '0'], {env: env(4000)})).code).toBe(0)
    const out = lineCollector(Date.now())
    let signalled = false
    // A 4 s ladder. As the kubelet, the back-off is checked against the instance that exited a cycle
    // before the kill: the first two kills restart at once (the second opens the ladder), the third
    // waits 4 s from its kill and the fourth 8 s (each instance lives a second or two: less than a window).
    const watch = await podctl(['sync', '--watch', 'unhealthy', '-n', namespace], {
      env: env(4000),
      timeoutMs: 90_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          out.add(chunk)
          if (!signalled && startsOf(out.lines, 'unhealthy').length >= 4) {
            signalled = true
            child.kill('SIGINT')
          }
        })
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    const starts = startsOf(out.lines, 'unhealthy')
    const gaps = starts.slice(1).map((at, index) => at - starts[index])
    // Between restarts: a life (a second or two) and the second restart at once; then a life and each window.
    const said = `gaps ${gaps.join(', ')} ms`
    expect(gaps[0], said).toBeLessThan(4000)
    expect(gaps[1], said).toBeGreaterThanOrEqual(4000)
    expect(gaps[2], said).toBeGreaterThanOrEqual(8000)
    expect(watch.stdout).toMatch(/Warning\s+BackOff\s.*unhealthy_\S+\/c\s+Back-off restarting failed container c/)
    expect((await podctl(['kill', 'unhealthy', '-n', namespace, '--force'], {env: env()})).code).toBe(0)
  })
})
