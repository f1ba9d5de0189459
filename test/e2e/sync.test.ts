import {existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {podctl} from '../support/podctl.js'
import {useLabNamespace} from '../support/lab-namespace.js'

/**
 * `podctl sync` against the lab: the recorded desired state, one SyncPod pass (restarts with the
 * crash back-off, measured), and `sync -f` applying a changed manifest the kubelet's way.
 */
const client = labClient()
const namespace = uniqueNamespace('sync')
const work = mkdtempSync(join(tmpdir(), 'podctl-sync-'))
const podDirRoot = join(work, 'pods')
const logsRoot = join(work, 'logs')
/** A 2 s first back-off step (cap 60 s): real gaps, measured, without waiting 10 s each. */
const env = labEnv({PODCTL_POD_LOGS_ROOT: logsRoot, PODCTL_POD_DIR_ROOT: podDirRoot, PODCTL_BACKOFF_BASE_MS: '2000'})
const busybox = lab().busybox
const SERVE = 'trap "exit 0" TERM; while true; do sleep 1; done'

function manifest(name: string, containers: Array<{name: string; script: string; env?: string; hostPort?: number}>, policy = 'Always') {
  const lines = [
    'apiVersion: v1',
    'kind: Pod',
    `metadata: {name: ${name}, namespace: ${namespace}}`,
    'spec:',
    `  restartPolicy: ${policy}`,
    '  terminationGracePeriodSeconds: 2',
    '  containers:',
  ]
  for (const container of containers) {
    lines.push(`  - name: ${container.name}`, `    image: ${busybox}`, `    command: [sh, -c, ${JSON.stringify(container.script)}]`)
    if (container.env) lines.push(`    env: [{name: X, value: "${container.env}"}]`)
    if (container.hostPort) lines.push(`    ports: [{containerPort: 8080, hostPort: ${container.hostPort}}]`)
  }

  const path = join(work, `${name}-${Math.random().toString(36).slice(2)}.yaml`)
  writeFileSync(path, `${lines.join('\n')}\n`)
  return path
}

interface PsRow {
  id: string
  name: string
  attempt: number
  state: string
  podSandboxId: string
}

async function containers(pod: string): Promise<PsRow[]> {
  const ps = await podctl(['ps', '-a', '-n', namespace, '--pod', pod, '-o', 'json'], {env})
  expect(ps.code).toBe(0)
  const listed = JSON.parse(ps.stdout).containers as Array<{
    id: string
    metadata: {name: string; attempt: number}
    state: string
    podSandboxId: string
  }>
  return listed.map((item) => ({
    id: item.id,
    name: item.metadata.name,
    attempt: item.metadata.attempt,
    state: item.state
      .replace('CONTAINER_', '')
      .toLowerCase()
      .replace(/^./, (c) => c.toUpperCase()),
    podSandboxId: item.podSandboxId,
  }))
}

interface StatusJson {
  uid: string
  sandboxes: Array<{attempt: number; state: string}>
  containers: Array<{name: string; attempt: number; state: string}>
}

async function status(pod: string): Promise<StatusJson> {
  const result = await podctl(['status', pod, '-n', namespace, '-o', 'json'], {env})
  expect(result.code).toBe(0)
  return JSON.parse(result.stdout)
}

useLabNamespace(client, namespace, work)

describe('podctl run records the desired state', () => {
  it('writes pod.json (0600) into the pod directory, and the grace period annotation defaults to 30', async () => {
    const path = manifest('record', [{name: 'app', script: SERVE}]).replace('  terminationGracePeriodSeconds: 2\n', '')
    writeFileSync(path, readFileSync(path, 'utf8').replace('  terminationGracePeriodSeconds: 2\n', ''))
    const run = await podctl(['run', '-f', path, '-q', '-o', 'json'], {env})
    expect(run.stderr).toBe('')
    const [pod] = JSON.parse(run.stdout).pods
    const file = join(podDirRoot, pod.uid, 'pod.json')
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({name: 'record', namespace, uid: pod.uid})
    const inspect = await podctl(['inspect', pod.containers[0].id, '-o', 'json'], {env})
    expect(JSON.parse(inspect.stdout).status.annotations['io.kubernetes.pod.terminationGracePeriod']).toBe('30')
    const kill = await podctl(['kill', 'record', '-n', namespace, '--force'], {env})
    expect(kill.code).toBe(0)
    expect(existsSync(join(podDirRoot, pod.uid))).toBe(false)
  })
})

describe('podctl sync (one pass)', () => {
  it('restarts a crashing container with the crash back-off, the gaps measured', async () => {
    const path = manifest('crash', [
      {name: 'c', script: 'sleep 0.2; exit 3'},
      {name: 'ok', script: SERVE},
    ])
    expect((await podctl(['run', '-f', path, '--wait', 'none', '-q'], {env})).code).toBe(0)
    const okId = (await containers('crash')).find((row) => row.name === 'ok')!.id
    const starts: number[] = []
    const deadline = Date.now() + 60_000
    // Sync until the container has been restarted three times: immediate, then after ~2 s, then after ~4 s.
    while (starts.length < 3 && Date.now() < deadline) {
      const rows = await containers('crash')
      const newest = rows.filter((row) => row.name === 'c').sort((a, b) => b.attempt - a.attempt)[0]
      if (newest.state !== 'Exited') continue
      const sync = await podctl(['sync', 'crash', '-n', namespace], {env})
      expect(sync.code).toBe(0)
      if (sync.stdout.includes('Started container c')) starts.push(Date.now())
    }

    expect(starts.length).toBe(3)
    // The windows open when the container finished (0.2 s after its start): gaps at least the window, generously bounded.
    expect(starts[1] - starts[0]).toBeGreaterThanOrEqual(1800)
    expect(starts[2] - starts[1]).toBeGreaterThanOrEqual(3600)
    expect(starts[2] - starts[1]).toBeLessThan(30_000)
    const report = await status('crash')
    expect(report.containers.find((container) => container.name === 'c')?.attempt).toBe(3)
    const rows = await containers('crash')
    expect(rows.find((row) => row.name === 'ok')!.id).toBe(okId)
    // Only the newest exited instance is kept beside the new one, and only their log files (container GC).
    const kept = rows.filter((row) => row.name === 'c')
    expect(kept.length).toBeLessThanOrEqual(2)
    const logFiles = readdirSync(join(logsRoot, `${namespace}_crash_${report.uid}`, 'c')).sort()
    expect(logFiles).toEqual(kept.map((row) => `${row.attempt}.log`).sort())
  })

  it('stops the sandbox of a pod whose containers have all terminated for good (Never)', async () => {
    const path = manifest('done', [{name: 'c', script: 'exit 0'}], 'Never')
    expect((await podctl(['run', '-f', path, '--wait', 'completed', '-q'], {env})).code).toBe(0)
    const sync = await podctl(['sync', 'done', '-n', namespace], {env})
    expect(sync.code).toBe(0)
    expect(sync.stdout).toContain('stopped the pod sandbox: every container has terminated')
    expect((await status('done')).sandboxes[0].state).toBe('NotReady')
    const again = await podctl(['sync', 'done', '-n', namespace], {env})
    expect(again.stdout).toContain('done_' + namespace + ': in sync')
  })
})

describe('podctl sync -f (a changed manifest, the kubelet way)', () => {
  it('recreates only the container whose env changed (attempt 1), the other untouched', async () => {
    const first = manifest('two', [
      {name: 'a', script: SERVE, env: '1'},
      {name: 'b', script: SERVE, env: '1'},
    ])
    expect((await podctl(['run', '-f', first, '-q'], {env})).code).toBe(0)
    const before = await containers('two')
    const changed = manifest('two', [
      {name: 'a', script: SERVE, env: '1'},
      {name: 'b', script: SERVE, env: '2'},
    ])
    const plan = await podctl(['sync', '-f', changed, '--dry-run'], {env})
    expect(plan.code).toBe(0)
    expect(plan.stdout).toContain('changed: container b: env changed')
    expect(plan.stdout).toContain('would kill b: Container b definition changed, will be restarted')
    expect(await containers('two')).toEqual(before)

    const sync = await podctl(['sync', '-f', changed], {env})
    expect(sync.code).toBe(0)
    expect(sync.stdout).toMatch(/Killing .*two_\S+\/b\s+Container b definition changed, will be restarted/)
    const after = await containers('two')
    const a = after.filter((row) => row.name === 'a')
    const b = after.filter((row) => row.name === 'b' && row.state === 'Running')
    expect(a).toEqual(before.filter((row) => row.name === 'a'))
    expect(b).toHaveLength(1)
    expect(b[0].attempt).toBe(1)
    const exec = await podctl(['exec', 'two/b', '-n', namespace, '--', 'sh', '-c', 'echo $X'], {env})
    expect(exec.stdout.trim()).toBe('2')
    // Applying the same manifest again changes nothing.
    const again = await podctl(['sync', '-f', changed], {env})
    expect(again.stdout).toContain(': in sync')
  })

  it('recreates the pod with attempt + 1 when a hostPort changes', async () => {
    const first = manifest('ports', [{name: 'a', script: SERVE, hostPort: 18_431}])
    expect((await podctl(['run', '-f', first, '-q'], {env})).code).toBe(0)
    const changed = manifest('ports', [{name: 'a', script: SERVE, hostPort: 18_432}])
    const sync = await podctl(['sync', '-f', changed], {env})
    expect(sync.code).toBe(0)
    expect(sync.stdout).toContain('changed: sandbox: portMappings changed')
    expect(sync.stdout).toContain('recreated the pod sandbox (attempt 1)')
    const report = await status('ports')
    expect(report.sandboxes.map((sandbox) => sandbox.attempt)).toEqual([1])
    const recorded = JSON.parse(readFileSync(join(podDirRoot, report.uid, 'pod.json'), 'utf8'))
    expect(recorded.containers[0].ports[0].hostPort).toBe(18_432)
  })
})
