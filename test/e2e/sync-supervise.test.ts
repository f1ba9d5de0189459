import {existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {hasContainerEvents, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * Waits that mean what they say and supervision against the lab: `run --wait running` failing on a
 * container that dies in the settle window (a crash, an OOM kill), `sync --watch` restarting a
 * container whose liveness probe fails, and `run --supervise` leaving nothing behind on Ctrl-C.
 */
const client = labClient()
const namespace = uniqueNamespace('supervise')
const work = mkdtempSync(join(tmpdir(), 'podctl-supervise-'))
const podDirRoot = join(work, 'pods')
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: podDirRoot,
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
  PODCTL_BACKOFF_BASE_MS: '1000',
})
const busybox = lab().busybox

function manifest(name: string, containers: string): string {
  const path = join(work, `${name}.yaml`)
  writeFileSync(
    path,
    `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
${containers.replaceAll('BUSYBOX', busybox)}`,
  )
  return path
}

useLabNamespace(client, namespace, work)

describe('run --wait running: the settle window', () => {
  it('fails a run whose container crashes right after it started (CrashLoopBackOff, exit code and its last log lines shown)', async () => {
    const path = manifest(
      'crashes',
      `  - name: c
    image: BUSYBOX
    command: [sh, -c, "echo starting; echo 'config error: DB_URL unset' >&2; sleep 0.3; exit 3"]
`,
    )
    const run = await podctl(['run', '-f', path, '-q'], {env})
    expect(run.code).toBe(14)
    const crash = new RegExp(
      String.raw`CrashLoopBackOff: container "c" exited with code 3 \(CrashLoopBackOff, Error\) within 1\.0 s of starting ` +
        String.raw`\(rolled back; its log stays in (\S+)\)\n {2}the last lines of its log:\n` +
        // Two streams: the runtime copies stdout and stderr from two pipes, in either order (containerd 1.6).
        String.raw`( {4}starting\n {4}config error: DB_URL unset\n| {4}config error: DB_URL unset\n {4}starting\n)$`,
    ).exec(run.stderr)
    expect(crash, run.stderr).not.toBeNull()
    // What it points at still works after the rollback.
    expect(crash![1]).toMatch(new RegExp(`^${join(work, 'logs')}/${namespace}_crashes_[0-9a-f-]+/c/0\\.log$`))
    expect(readFileSync(crash![1], 'utf8')).toMatch(/ stderr F config error: DB_URL unset\n/)
    expect(run.stderr).not.toContain('podctl logs')
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })

  it('with --keep-on-failure the crash report points at podctl logs, which works on the kept pod', async () => {
    const path = manifest('crash-kept', `  - {name: c, image: BUSYBOX, command: [sh, -c, "echo 'config error: DB_URL unset'; exit 4"]}\n`)
    const run = await podctl(['run', '-f', path, '-q', '--keep-on-failure'], {env})
    expect(run.code).toBe(14)
    expect(run.stderr).toContain(
      `within 1.0 s of starting; see its log with: podctl logs crash-kept/c -n ${namespace}\n` +
        '  the last lines of its log:\n    config error: DB_URL unset\n',
    )
    expect(await podctl(['logs', 'crash-kept/c', '-n', namespace], {env})).toMatchObject({code: 0, stdout: 'config error: DB_URL unset\n'})
    expect((await podctl(['kill', 'crash-kept', '-n', namespace], {env})).code).toBe(0)
  })

  it('reports the memory-limit example as OOMKilled', async () => {
    // The Kubernetes docs' memory-demo-2 with busybox: tail buffers /dev/zero until the 100Mi limit kills it.
    const path = manifest(
      'memory-demo-2',
      `  - name: memory-demo-2-ctr
    image: BUSYBOX
    resources:
      requests: {memory: "50Mi"}
      limits: {memory: "100Mi"}
    command: [sh, -c, "tail /dev/zero"]
`,
    )
    const run = await podctl(['run', '-f', path, '-q', '--settle', '30s'], {env})
    expect(run.code, run.stdout).toBe(14)
    expect(run.stderr).toMatch(/OOMKilled: container "memory-demo-2-ctr" exited with code 137 \(OOMKilled\)/)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})

describe('run --wait running: the settle window and --parallel', () => {
  it('a started pod watching its settle window gives its slot to the next pod', async () => {
    const pod = (name: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - {name: c, image: ${busybox}, command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]}
`
    const path = join(work, 'two-settle.yaml')
    writeFileSync(path, `${pod('first')}---\n${pod('second')}`)
    const run = await podctl(['run', '-f', path, '--parallel', '1', '--settle', '20s'], {env, timeoutMs: 120_000})
    expect(run.code, run.stderr).toBe(0)
    // The timeline's AGE is the time since the run began: the second pod starts within the first one's window.
    const startedAt = (name: string) => Number(new RegExp(`Started\\s+([\\d.]+)s\\s+${name}_`).exec(run.stdout)?.[1])
    expect(startedAt('first')).toBeGreaterThan(0)
    expect(startedAt('second')).toBeLessThan(startedAt('first') + 20)
    expect((await podctl(['kill', 'first', 'second', '-n', namespace], {env})).code).toBe(0)
  })
})

describe('sync --watch with probes', () => {
  it('kills and restarts a container whose liveness exec probe fails (restart count 1, reason shown)', async () => {
    const path = manifest(
      'live',
      `  - name: c
    image: BUSYBOX
    command: [sh, -c, "touch /tmp/ok; sleep 2; rm /tmp/ok; trap 'exit 0' TERM; while true; do sleep 1; done"]
    livenessProbe:
      exec: {command: [cat, /tmp/ok]}
      periodSeconds: 1
      failureThreshold: 2
`,
    )
    expect((await podctl(['run', '-f', path, '-q'], {env})).code).toBe(0)
    let stdout = ''
    let signalled = false
    const watch = await podctl(['sync', '--watch', 'live', '-n', namespace], {
      env,
      timeoutMs: 60_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
          if (!signalled && /Started\s+container c/.test(stdout.slice(stdout.indexOf('Killing')))) {
            signalled = true
            child.kill('SIGINT')
          }
        })
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    expect(stdout).toMatch(/Warning\s+Unhealthy\s.*live_\S+\/c\s+Liveness probe failed: cat: can't open '\/tmp\/ok'/)
    expect(stdout).toMatch(/Normal\s+Killing\s.*Container c failed liveness probe, will be restarted/)
    const status = JSON.parse((await podctl(['status', 'live', '-n', namespace, '-o', 'json'], {env})).stdout)
    expect(status.containerStatuses[0]).toMatchObject({name: 'c', restartCount: 1, lastState: {reason: 'Completed'}})
    expect((await podctl(['kill', 'live', '-n', namespace, '--force'], {env})).code).toBe(0)
  })
})

/** Polls `status` (at most 30 s) until a supervisor holds the pod. */
async function untilSupervised(pod: string): Promise<void> {
  for (let tries = 0; tries < 150; tries++) {
    const status = await podctl(['status', pod, '-n', namespace, '-o', 'json'], {env})
    if (status.code === 0 && JSON.parse(status.stdout).supervised === true) return
    await new Promise((resolve) => {
      setTimeout(resolve, 200)
    })
  }
}

describe('kill while sync --watch supervises the pod', () => {
  it('lets the pod go (Terminating) instead of recreating it under the kill', async () => {
    const path = manifest(
      'doomed',
      `  - name: c
    image: BUSYBOX
    command: [sh, -c, "trap 'sleep 2; exit 0' TERM; while true; do sleep 1; done"]
`,
    )
    expect((await podctl(['run', '-f', path, '-q', '--settle', '0'], {env})).code).toBe(0)
    let stdout = ''
    let killed: Promise<{code: number | null}> | undefined
    // One SIGINT: a second one makes podctl exit at once (130).
    let stopping: Promise<boolean> | undefined
    // Once the supervisor has the pod (status says supervised), kill it: its container takes 2 s to stop.
    const killWhenSupervised = async () => {
      await untilSupervised('doomed')
      return podctl(['kill', 'doomed', '-n', namespace], {env})
    }

    const watch = await podctl(['sync', '--watch', '--all', '-n', namespace], {
      env,
      timeoutMs: 60_000,
      onSpawn(child) {
        killed = killWhenSupervised()
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
          // Let go: stop watching once the kill is done.
          if (!stopping && /Terminating/.test(stdout)) stopping = killed?.then(() => child.kill('SIGINT'))
        })
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    expect((await killed)?.code).toBe(0)
    expect(stdout).toMatch(/Normal\s+Terminating\s.*doomed_\S+\s+podctl kill asked for its termination: no longer probed or restarted/)
    expect(stdout).not.toMatch(/SandboxChanged|Started\s+container/)
    expect(await sandboxesIn(client, namespace)).toEqual([])
  })
})

describe('sync -f while sync --watch supervises the pod', () => {
  it('the supervisor takes the applied spec (Updated) instead of reverting it', async () => {
    const spec = (value: string) => `  - name: c
    image: BUSYBOX
    env: [{name: V, value: ${value}}]
    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
`
    expect((await podctl(['run', '-f', manifest('applied', spec('one')), '-q', '--settle', '0'], {env})).code).toBe(0)
    let stdout = ''
    let applied: Promise<{code: number | null; stderr: string}> | undefined
    let stopping: Promise<boolean> | undefined
    const applyWhenSupervised = async () => {
      await untilSupervised('applied')
      return podctl(['sync', '-f', manifest('applied', spec('two'))], {env})
    }

    const watch = await podctl(['sync', '--watch', '--all', '-n', namespace], {
      env,
      timeoutMs: 60_000,
      onSpawn(child) {
        applied = applyWhenSupervised()
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
          if (!stopping && /Updated/.test(stdout)) stopping = applied?.then(() => child.kill('SIGINT'))
        })
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    const apply = await applied!
    expect(apply.code, apply.stderr).toBe(0)
    expect(stdout).toMatch(/Normal\s+Updated\s.*applied_\S+\s+The pod was applied again \(its pod.json changed\): supervising the new spec/)
    // Nothing the supervisor did undid the apply: the running container has the new value.
    const exec = await podctl(['exec', 'applied/c', '-n', namespace, '--', 'sh', '-c', 'echo $V'], {env})
    expect(exec.stdout.trim()).toBe('two')
    expect(stdout).not.toMatch(/Killing/)
    expect((await podctl(['kill', 'applied', '-n', namespace, '--force'], {env})).code).toBe(0)
  })
})

describe('run --supervise', () => {
  it('keeps the pod synced until Ctrl-C, then kills it and leaves nothing behind', async () => {
    const path = manifest(
      'owned',
      `  - name: c
    image: BUSYBOX
    command: [sh, -c, "sleep 1; exit 1"]
`,
    )
    let stdout = ''
    let signalled = false
    const run = await podctl(['run', '-f', path, '--supervise', '--settle', '0'], {
      env,
      timeoutMs: 60_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => {
          stdout += chunk
          if (!signalled && (stdout.match(/Started\s+container c/g) ?? []).length >= 2) {
            signalled = true
            child.kill('SIGINT')
          }
        })
      },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(stdout).toContain('Watching pods')
    if (hasContainerEvents()) {
      // Woken by the runtime's events, said once; never polling.
      expect(stdout.match(/\bContainerEvents\b/g)).toHaveLength(1)
      expect(stdout).toContain("Woken by the runtime's container events")
      expect(stdout).not.toMatch(/\bPolling\b/)
    } else {
      // containerd 1.6 has no container event stream: polling, said once.
      expect(stdout.match(/\bPolling\b/g)).toHaveLength(1)
      expect(stdout).toContain('The runtime has no container event stream')
    }

    expect(stdout).toContain('killing the supervised pods')
    // The supervision's own table: each event's time (it is read hours in), its columns lined up under the header.
    const table = stdout.slice(stdout.lastIndexOf('TYPE '))
    const [header, ...rows] = table.split('\n').filter((line) => /^(TYPE|Normal|Warning) /.test(line))
    expect(header).toMatch(/^TYPE +REASON +TIME +OBJECT +MESSAGE$/)
    expect(rows.length).toBeGreaterThan(3)
    for (const row of rows) {
      expect(row).toMatch(/^(Normal|Warning) +\S+ +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ /)
      expect(row.slice(header.indexOf('MESSAGE') - 1, header.indexOf('MESSAGE')), row).toBe(' ')
    }

    expect(await sandboxesIn(client, namespace)).not.toContain(expect.stringContaining('owned'))
    const left = (await client.runtime('listPodSandbox', {})).items.filter((sandbox) => sandbox.metadata?.name === 'owned')
    expect(left.filter((sandbox) => sandbox.metadata?.namespace === namespace)).toEqual([])
    const dirs = existsSync(podDirRoot) ? readdirSync(podDirRoot).filter((name) => !name.startsWith('.')) : []
    expect(dirs.map((dir) => [dir, readdirSync(join(podDirRoot, dir))])).toEqual([])
    // Nor a log directory, as kill leaves none.
    const logs = join(work, 'logs')
    expect((existsSync(logs) ? readdirSync(logs) : []).filter((name) => name.includes('_owned_'))).toEqual([])
  })

  it('keeps a pod whose container crashes at start (within the settle window) in CrashLoopBackOff instead of rolling it back', async () => {
    const path = manifest(
      'crashloop',
      `  - {name: c, image: BUSYBOX, command: [sh, -c, "echo 'config error: DB_URL unset' >&2; exit 3"]}\n`,
    )
    let stdout = ''
    let waiting: Record<string, unknown> | undefined
    const inBackOff = async () => {
      for (let tries = 0; tries < 150 && !waiting; tries++) {
        const status = await podctl(['status', 'crashloop', '-n', namespace, '-o', 'json'], {env})
        const c = status.code === 0 ? JSON.parse(status.stdout).containerStatuses?.find((s: {name: string}) => s.name === 'c') : undefined
        if (c?.waiting?.reason === 'CrashLoopBackOff') waiting = c
        else
          await new Promise((resolve) => {
            setTimeout(resolve, 200)
          })
      }
    }

    // The default --settle (1 s): the container is gone long before it ends.
    const run = await podctl(['run', '-f', path, '--supervise'], {
      env,
      timeoutMs: 60_000,
      onSpawn(child) {
        child.stdout?.on('data', (chunk) => (stdout += chunk))
        void inBackOff().then(() => child.kill('SIGINT'))
      },
    })
    expect(run.code, run.stderr).toBe(0)
    expect(run.stderr).not.toMatch(/rolled back|Error:/)
    expect(stdout).toContain('Watching pods')
    expect(waiting, stdout).toMatchObject({restartCount: expect.any(Number), lastState: {exitCode: 3, reason: 'Error'}})
    expect(waiting!.restartCount).toBeGreaterThanOrEqual(1)
    // The supervisor restarted it (the first restart is immediate; the next ones wait out the back-off).
    expect(stdout.slice(stdout.indexOf('Watching pods'))).toMatch(/Started\s.*crashloop_\S+\/c\s+Started container c/)
    expect(stdout).toContain('killing the supervised pods')
    const left = (await client.runtime('listPodSandbox', {filter: {labelSelector: {'io.kubernetes.pod.namespace': namespace}}})).items
    expect(left.filter((sandbox) => sandbox.metadata?.name === 'crashloop')).toEqual([])
  })
})
