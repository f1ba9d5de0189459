import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'

/**
 * Workloads run as their controllers make them: spec.replicas pods (or --replicas), StatefulSet
 * pods in order with their stable identity, and `kill -f` finds every replica again by its labels.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-replicas')
const work = mkdtempSync(join(tmpdir(), 'podctl-replicas-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: join(work, 'pods')})
const NAME_CHARS = '[bcdfghjklmnpqrstvwxz2456789]'
useLabNamespace(client, namespace, work)

function run(args: string[], input?: string) {
  return podctl(args, {env, input})
}

function deployment(replicas: number): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: ${namespace}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 1
      containers: [{name: c, image: ${lab().busybox}, command: [sleep, '3600']}]
`
}

/** db-0 becomes ready 2 s after it starts (its readiness probe waits for /tmp/ready): db-1 may only start after that. */
const STATEFULSET = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ${namespace}}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: c
        image: ${lab().busybox}
        command: [sh, -c, 'sleep 2; touch /tmp/ready; sleep 3600']
        readinessProbe: {exec: {command: [test, -f, /tmp/ready]}, periodSeconds: 1}
`

interface PodJson {
  pod: string
}

interface SandboxJson {
  metadata: {name: string}
  createdAt: string
}

async function sandboxes(): Promise<SandboxJson[]> {
  const result = await run(['pods', '-n', namespace, '-o', 'json'])
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout).items as SandboxJson[]
}

async function podNames(): Promise<string[]> {
  return (await sandboxes()).map((item) => item.metadata.name).sort()
}

describe('workload replicas', () => {
  it('a Deployment with replicas: 2 runs two pods of one ReplicaSet; kill -f removes both', async () => {
    const file = join(work, 'web.yaml')
    writeFileSync(file, deployment(2))
    const result = await run(['run', '-f', file, '-o', 'json'])
    expect(result.code, result.stderr).toBe(0)
    const pods = (JSON.parse(result.stdout).pods as PodJson[]).map((pod) => pod.pod)
    expect(pods).toHaveLength(2)
    const hashes = pods.map((pod) => new RegExp(`^web-(${NAME_CHARS}{1,10})-${NAME_CHARS}{5}$`).exec(pod)?.[1])
    expect(hashes[0]).toBeDefined()
    expect(hashes[1]).toBe(hashes[0])
    expect(new Set(pods).size).toBe(2)
    expect(result.stderr).toContain(`pod ${pods[0]}_${namespace}: from Deployment web (ReplicaSet web-${hashes[0]}), replica 1 of 2`)
    expect(await podNames()).toEqual([...pods].sort())

    const kill = await run(['kill', '-f', file, '-o', 'json'])
    expect(kill.code, kill.stderr).toBe(0)
    expect((JSON.parse(kill.stdout).items as Array<{pod: string}>).map((item) => item.pod).sort()).toEqual(
      pods.map((pod) => `${pod}_${namespace}`).sort(),
    )
    expect(await sandboxesIn(client, namespace)).toEqual([])
    // Nothing left: NotFound, unless --ignore-not-found.
    const again = await run(['kill', '-f', file])
    expect(again.code).toBe(5)
    expect(again.stderr).toContain(`Deployment web: no pod of it in namespace "${namespace}"`)
    expect((await run(['kill', '-f', file, '--ignore-not-found'])).code).toBe(0)
  })

  it('--replicas 3 runs three; --replicas 0 runs none and says so', async () => {
    const result = await run(['run', '-f', '-', '--replicas', '3', '-o', 'json', '--wait', 'none'], deployment(1))
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).pods).toHaveLength(3)
    expect((await podNames()).length).toBe(3)
    const kill = await run(['kill', '-f', '-', '--grace-period', '0'], deployment(1))
    expect(kill.code, kill.stderr).toBe(0)
    expect(await podNames()).toEqual([])

    const none = await run(['run', '-f', '-', '--replicas', '0'], deployment(2))
    expect(none.code, none.stderr).toBe(0)
    expect(none.stderr).toContain('no pod to run: the workloads have 0 replicas (--replicas 0)')
    expect(await podNames()).toEqual([])
  })

  it('a StatefulSet starts db-0, then db-1 once db-0 is ready, each with its hostname in <service>.<ns>.svc.cluster.local', async () => {
    const result = await run(['run', '-f', '-', '-o', 'json'], STATEFULSET)
    expect(result.code, result.stderr).toBe(0)
    const pods = JSON.parse(result.stdout).pods as PodJson[]
    expect(pods.map((pod) => pod.pod)).toEqual(['db-0', 'db-1'])
    expect(result.stderr).toContain(`pod db-1_${namespace}: from StatefulSet db, replica 2 of 2, started once db-0 is ready`)
    // db-0 is ready no sooner than 2 s after its sandbox was made; db-1's sandbox is made only after that.
    const created = new Map((await sandboxes()).map((item) => [item.metadata.name, BigInt(item.createdAt)]))
    expect(created.get('db-1')! - created.get('db-0')!).toBeGreaterThanOrEqual(2_000_000_000n)

    const hosts = await run(['exec', 'db-0/c', '-n', namespace, '--', 'cat', '/etc/hosts'])
    expect(hosts.code, hosts.stderr).toBe(0)
    expect(hosts.stdout).toMatch(new RegExp(`^[\\d.]+\\tdb-0\\.db\\.${namespace}\\.svc\\.cluster\\.local\\tdb-0$`, 'm'))
    const fqdn = await run(['exec', 'db-1/c', '-n', namespace, '--', 'hostname', '-f'])
    // busybox's hostname -f resolves the hostname through /etc/hosts.
    expect(fqdn.code, fqdn.stderr).toBe(0)
    expect(fqdn.stdout.trim()).toBe(`db-1.db.${namespace}.svc.cluster.local`)

    const kill = await run(['kill', '-f', '-', '--grace-period', '0', '-o', 'json'], STATEFULSET)
    expect(kill.code, kill.stderr).toBe(0)
    expect(await podNames()).toEqual([])
  })

  it('an Indexed Job runs its completions, at most parallelism at once, each with JOB_COMPLETION_INDEX', async () => {
    const job = `apiVersion: batch/v1
kind: Job
metadata: {name: idx, namespace: ${namespace}}
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - {name: c, image: ${lab().busybox}, command: [sh, -c, 'echo index=$JOB_COMPLETION_INDEX; sleep 1']}
`
    const result = await run(['run', '-f', '-', '--wait', 'completed', '-o', 'json'], job)
    expect(result.code, result.stderr).toBe(0)
    const pods = (JSON.parse(result.stdout).pods as PodJson[]).map((pod) => pod.pod)
    expect(pods.map((pod) => pod.replace(new RegExp(`-${NAME_CHARS}{5}$`), ''))).toEqual(['idx-0', 'idx-1', 'idx-2'])
    for (const [index, pod] of pods.entries()) {
      expect((await run(['logs', '-n', namespace, `${pod}/c`])).stdout).toBe(`index=${index}\n`)
    }

    // idx-2 is made once idx-0 (which runs at least 1 s) has completed.
    const created = new Map((await sandboxes()).map((item) => [item.metadata.name, BigInt(item.createdAt)]))
    expect(created.get(pods[2])! - created.get(pods[0])!).toBeGreaterThanOrEqual(1_000_000_000n)
    expect((await run(['kill', '-f', '-'], job)).code).toBe(0)
    expect(await podNames()).toEqual([])
  })

  it('a StatefulSet pod whose predecessor never becomes ready is not started; nothing is left behind', async () => {
    const never = STATEFULSET.replace('sleep 2; touch /tmp/ready; sleep 3600', 'sleep 3600')
    const result = await run(['run', '-f', '-', '--timeout', '3s', '-o', 'json'], never)
    expect(result.code).toBe(4)
    const pods = JSON.parse(result.stdout).pods as Array<{pod: string; sandboxId: string | null; error: {code: string} | null}>
    expect(pods.map((pod) => [pod.pod, pod.error?.code])).toEqual([
      ['db-0', 'DeadlineExceeded'],
      ['db-1', 'NotStarted'],
    ])
    expect(pods[1].sandboxId).toBeNull()
    expect(result.stderr).toContain(`pod db-1_${namespace} was not started: StatefulSet db starts pod db-1 once db-0 is Running and Ready`)
    expect(await podNames()).toEqual([])
  })

  it('kill -f also removes the records of replicas whose sandboxes were removed behind podctl', async () => {
    const result = await run(['run', '-f', '-', '-o', 'json', '--wait', 'none'], deployment(2))
    expect(result.code, result.stderr).toBe(0)
    const pods = JSON.parse(result.stdout).pods as Array<{pod: string; uid: string}>
    // What a kubelet or crictl does: StopPodSandbox and RemovePodSandbox straight through the CRI.
    const {items} = await client.runtime('listPodSandbox', {filter: {labelSelector: {app: 'web'}}})
    for (const sandbox of items.filter((item) => item.metadata?.namespace === namespace)) {
      await client.runtime('stopPodSandbox', {podSandboxId: sandbox.id})
      await client.runtime('removePodSandbox', {podSandboxId: sandbox.id})
    }

    expect(pods.every(({uid}) => existsSync(join(work, 'pods', uid, 'pod.json')))).toBe(true)
    const kill = await run(['kill', '-f', '-'], deployment(2))
    expect(kill.code, kill.stderr).toBe(0)
    expect(kill.stdout.split('\n').filter(Boolean).sort()).toEqual(
      pods.map(({pod}) => `${pod}_${namespace}: gone from the runtime; removed its record`).sort(),
    )
    expect(pods.some(({uid}) => existsSync(join(work, 'pods', uid)))).toBe(false)
  })
})
