import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {fixtureIn} from '../support/objects.js'
import {podctl} from '../support/podctl.js'

/**
 * Workload documents run the pods their controller would create (spec.replicas of them), named and
 * labelled as the controller names and labels them (checked on the sandbox the runtime holds).
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-workloads')
const work = mkdtempSync(join(tmpdir(), 'podctl-workloads-'))
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: join(work, 'pods')})
const NAME_CHARS = '[bcdfghjklmnpqrstvwxz2456789]'

function run(args: string[], input?: string) {
  return podctl(args, {env, input})
}

async function sandboxLabels(pod: string): Promise<Record<string, string>> {
  const result = await run(['pods', '-n', namespace, '--name', pod, '-o', 'json'])
  expect(result.code, result.stderr).toBe(0)
  const [item] = JSON.parse(result.stdout).items
  return item.labels
}

afterAll(async () => {
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(work, {recursive: true, force: true})
})

describe('workloads', () => {
  it('a Deployment runs its 3 replicas <deploy>-<hash>-<5 chars> with one pod-template-hash, and says where they came from', async () => {
    const result = await run(['run', '-f', '-', '-o', 'json'], fixtureIn('workloads/deployment.yaml', namespace))
    expect(result.code, result.stderr).toBe(0)
    const pods = (JSON.parse(result.stdout).pods as Array<{pod: string}>).map(({pod}) => pod)
    expect(pods).toHaveLength(3)
    const hashes = pods.map((pod) => new RegExp(`^nginx-deployment-(${NAME_CHARS}{1,10})-${NAME_CHARS}{5}$`).exec(pod)?.[1])
    expect(hashes[0], pods[0]).toBeDefined()
    expect(new Set(hashes).size).toBe(1)
    const hash = hashes[0]!
    for (const [index, pod] of pods.entries()) {
      expect(result.stderr).toContain(
        `pod ${pod}_${namespace}: from Deployment nginx-deployment (ReplicaSet nginx-deployment-${hash}), replica ${index + 1} of 3`,
      )
      expect(await sandboxLabels(pod)).toMatchObject({app: 'nginx', 'pod-template-hash': hash})
    }

    expect((await run(['kill', '-n', namespace, ...pods, '--grace-period', '0'])).code).toBe(0)
  })

  it('a Job runs its template to completion with the job-name and controller-uid labels (old and new)', async () => {
    const result = await run(['run', '-f', '-', '--wait', 'completed', '-o', 'json'], fixtureIn('workloads/job.yaml', namespace))
    expect(result.code, result.stderr).toBe(0)
    const [outcome] = JSON.parse(result.stdout).pods
    expect(outcome.pod).toMatch(new RegExp(`^pi-${NAME_CHARS}{5}$`))
    const labels = await sandboxLabels(outcome.pod)
    expect(labels).toMatchObject({'job-name': 'pi', 'batch.kubernetes.io/job-name': 'pi'})
    expect(labels['controller-uid']).toMatch(/^[\da-f-]{36}$/)
    expect(labels['batch.kubernetes.io/controller-uid']).toBe(labels['controller-uid'])
    const logs = await run(['logs', '-n', namespace, `${outcome.pod}/pi`])
    expect(logs.stdout).toBe('3.14159\njob=pi\n')
    expect((await run(['kill', '-n', namespace, outcome.pod])).code).toBe(0)
  })

  it('a Job whose template would restart Always is refused as the API server refuses it', async () => {
    const manifest = fixtureIn('workloads/job.yaml', namespace).replace('restartPolicy: Never', 'restartPolicy: Always')
    const result = await run(['run', '-f', '-', '--dry-run'], manifest)
    expect(result.code).toBe(2)
    expect(result.stderr).toContain('spec.template.spec.restartPolicy must be "OnFailure" or "Never" for a Job, not "Always"')
  })

  it('a StatefulSet runs web-0..web-2 in order with their hostnames, ordinal labels and the claim bound with --volume', async () => {
    const www = join(work, 'www')
    mkdirSync(www)
    const manifest = fixtureIn('workloads/statefulset.yaml', namespace)
    const result = await run(['run', '-f', '-', '--volume', `www=${www}`], manifest)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(`pod web-0_${namespace}: from StatefulSet web, replica 1 of 3`)
    expect(result.stderr).toContain(`pod web-2_${namespace}: from StatefulSet web, replica 3 of 3, started once web-1 is ready`)
    for (const index of [0, 1, 2]) {
      const labels = await sandboxLabels(`web-${index}`)
      expect(labels).toMatchObject({
        app: 'nginx',
        'statefulset.kubernetes.io/pod-name': `web-${index}`,
        'apps.kubernetes.io/pod-index': String(index),
      })
      expect(labels['controller-revision-hash']).toMatch(new RegExp(`^web-${NAME_CHARS}{1,10}$`))
    }

    // --volume binds the one directory to every replica's claim: each wrote its hostname into it, web-2 last.
    await expect.poll(() => existsSync(join(www, 'index.html'))).toBe(true)
    await expect.poll(() => readFileSync(join(www, 'index.html'), 'utf8')).toBe('web-2\n')
    expect((await run(['kill', '-f', '-', '--grace-period', '0'], manifest)).code).toBe(0)
  })

  it('CronJob and DaemonSet pods are named and labelled as their controllers do (dry run)', async () => {
    const cron = await run(['run', '-f', '-', '--dry-run', '-o', 'json'], fixtureIn('workloads/cronjob.yaml', namespace))
    expect(cron.code, cron.stderr).toBe(0)
    const cronConfig = JSON.parse(cron.stdout).pods[0].calls[0].request.config
    expect(cronConfig.metadata.name).toMatch(new RegExp(`^hello-\\d{8}-${NAME_CHARS}{5}$`))
    expect(cronConfig.labels['job-name']).toMatch(/^hello-\d{8}$/)
    expect(cron.stderr).toMatch(/from CronJob hello \(Job hello-\d{8}\), replica 1 of 1/)

    const daemon = await run(['run', '-f', '-', '--dry-run', '-o', 'json'], fixtureIn('workloads/daemonset.yaml', namespace))
    expect(daemon.code, daemon.stderr).toBe(0)
    const daemonConfig = JSON.parse(daemon.stdout).pods[0].calls[0].request.config
    expect(daemonConfig.metadata.name).toMatch(new RegExp(`^fluentd-elasticsearch-${NAME_CHARS}{5}$`))
    expect(daemonConfig.labels).toMatchObject({name: 'fluentd-elasticsearch', 'pod-template-generation': '1'})
    expect(daemonConfig.labels['controller-revision-hash']).toMatch(new RegExp(`^${NAME_CHARS}{1,10}$`))
  })
})
