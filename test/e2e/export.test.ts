/**
 * `podctl export` against the lab (issue 21: "export of a running pod gives a manifest that runs the
 * same pod again"): a pod run from a manifest with env, command, args, probes, an emptyDir and a
 * ConfigMap volume is exported, killed and run again from the export with --strict, and the new pod
 * has the same env, command, args, probes and volumes (podctl inspect, exec). Then a pod made from
 * crictl's configs with runp + create, which podctl keeps no record of, is rebuilt from the runtime
 * and runs again the same way. Nothing is left behind.
 */
import {execFileSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {cleanupNamespace, lab, labClient, labEnv, sandboxesIn, uniqueNamespace} from '../support/lab.js'
import {hostMountsUnder} from '../support/objects.js'
import {podctl} from '../support/podctl.js'
import {pullBusybox} from '../support/pods.js'

const client = labClient()
const namespace = uniqueNamespace('e2e-export')
const dir = mkdtempSync(join(tmpdir(), 'podctl-export-'))
const env = labEnv({PODCTL_POD_DIR_ROOT: join(dir, 'pods'), PODCTL_POD_LOGS_ROOT: lab().logRoot})
const run = (...args: string[]) => podctl(args, {env})
const write = (name: string, text: string) => {
  writeFileSync(join(dir, name), text)
  return join(dir, name)
}

const MANIFEST = `apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ${namespace}}
data: {greeting: hello from the configmap}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: ${namespace}, labels: {app: web}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sh, -c]
    args: ['echo started > /scratch/log; exec sleep 3600']
    env:
    - {name: MODE, value: fast}
    - {name: GREETING, valueFrom: {configMapKeyRef: {name: settings, key: greeting}}}
    readinessProbe: {exec: {command: [cat, /scratch/log]}, periodSeconds: 2}
    livenessProbe: {exec: {command: ['true']}, periodSeconds: 5, failureThreshold: 4}
    volumeMounts:
    - {name: scratch, mountPath: /scratch}
    - {name: settings, mountPath: /etc/settings, readOnly: true}
  volumes:
  - {name: scratch, emptyDir: {}}
  - {name: settings, configMap: {name: settings}}
`

interface Inspected {
  status: {annotations: Record<string, string>; mounts: Array<{containerPath: string; hostPath: string; readonly: boolean}>}
  info: {config: {command: string[]; args: string[]; envs: Array<{key: string; value: string}>}}
}

async function inspect(ref: string): Promise<Inspected> {
  const result = await run('inspect', '-n', namespace, ref)
  expect(result.code, result.stderr).toBe(0)
  return JSON.parse(result.stdout) as Inspected
}

/** What must be the same in the pod run again: command, args, env, probes, and the volumes at each path (by plugin and name). */
function sameness({status, info}: Inspected) {
  return {
    command: info.config.command,
    args: info.config.args,
    envs: info.config.envs,
    probes: JSON.parse(status.annotations['io.podctl.probes'] ?? 'null'),
    mounts: status.mounts.map((mount) => ({
      path: mount.containerPath,
      readonly: mount.readonly,
      volume: /\/volumes\/(kubernetes\.io~[a-z-]+\/[^/]+)$/.exec(mount.hostPath)?.[1] ?? 'managed',
    })),
  }
}

async function exec(ref: string, script: string): Promise<string> {
  const result = await run('exec', '-n', namespace, ref, '--', 'sh', '-c', script)
  expect(result.code, result.stderr).toBe(0)
  return result.stdout
}

beforeAll(async () => {
  await pullBusybox(client)
})

afterAll(async () => {
  // podctl's kill unmounts the tmpfs run keeps the ConfigMaps on; a failed test may leave one anyway.
  await run('kill', '-a', '-n', namespace, '--force')
  for (const point of hostMountsUnder(dir)) execFileSync('umount', ['-l', point])
  await cleanupNamespace(client, namespace)
  expect(await sandboxesIn(client, namespace)).toEqual([])
  client.close()
  rmSync(dir, {recursive: true, force: true})
})

describe('podctl export', () => {
  it('gives a manifest that runs the same pod again: env, command, args, probes, the emptyDir and the ConfigMap volume', async () => {
    const started = await run('run', '-f', write('pod.yaml', MANIFEST), '--wait', 'ready', '-q')
    expect(started.code, started.stderr).toBe(0)
    const before = sameness(await inspect('web/app'))

    const exported = await run('export', 'web', '-n', namespace)
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stderr).toBe('')
    expect(exported.stdout).toMatch(/^apiVersion: v1\nkind: ConfigMap\n[^]*\n---\napiVersion: v1\nkind: Pod\n/)
    expect(exported.stdout).not.toMatch(/uid:|io\.podctl|status:|creationTimestamp|resourceVersion/)

    const killed = await run('kill', 'web', '-n', namespace)
    expect(killed.code, killed.stderr).toBe(0)
    const again = await run('run', '-f', write('exported.yaml', exported.stdout), '--strict', '--wait', 'ready', '-q')
    expect(again.code, again.stderr).toBe(0)
    expect(again.stderr).toBe('')

    const after = sameness(await inspect('web/app'))
    expect(after).toEqual(before)
    expect(after.probes).toMatchObject({readinessProbe: {periodSeconds: 2}, livenessProbe: {periodSeconds: 5, failureThreshold: 4}})
    expect(await exec('web/app', 'echo "$MODE|$GREETING"; cat /etc/settings/greeting; echo; cat /scratch/log')).toBe(
      'fast|hello from the configmap\nhello from the configmap\nstarted\n',
    )
    expect((await run('kill', 'web', '-n', namespace)).code).toBe(0)
  })

  it('rebuilds a pod made with runp + create from the runtime, says what it lacks, and the rebuild runs the same container', async () => {
    const podConfig = write('pod-config.json', JSON.stringify({metadata: {name: 'box', namespace, uid: `${namespace}-box`}, linux: {}}))
    const containerConfig = write(
      'container-config.json',
      JSON.stringify({
        metadata: {name: 'busybox'},
        image: {image: lab().busybox},
        command: ['sh', '-c'],
        args: ['exec sleep 3600'],
        envs: [{key: 'COLOR', value: 'blue'}],
        linux: {},
      }),
    )
    const sandbox = await run('runp', podConfig, '-q')
    expect(sandbox.code, sandbox.stderr).toBe(0)
    const created = await run('create', sandbox.stdout.trim(), containerConfig, podConfig, '--start', '-q')
    expect(created.code, created.stderr).toBe(0)
    const before = sameness(await inspect('box/busybox'))

    const exported = await run('export', 'box', '-n', namespace)
    expect(exported.code, exported.stderr).toBe(0)
    expect(exported.stderr.split('\n')[0]).toMatch(/^Note: no record of this pod \(made by runp\/create, or its pod directory is gone\): /)
    expect(exported.stderr).toContain('so left out: probes, imagePullPolicy, lifecycle.postStart,')
    expect(exported.stdout).toContain('    - name: busybox\n')
    expect(exported.stdout).toContain('      env:\n        - name: COLOR\n          value: blue\n')

    expect((await run('kill', 'box', '-n', namespace)).code).toBe(0)
    const again = await run('run', '-f', write('rebuilt.yaml', exported.stdout), '--strict', '--wait', 'running', '-q')
    expect(again.code, again.stderr).toBe(0)
    const after = sameness(await inspect('box/busybox'))
    expect({command: after.command, args: after.args, envs: after.envs}).toEqual({
      command: before.command,
      args: before.args,
      envs: before.envs,
    })
    expect(await exec('box/busybox', 'echo $COLOR')).toBe('blue\n')
    expect((await run('kill', 'box', '-n', namespace)).code).toBe(0)
  })

  it('never prints a Secret: a pod whose record is gone comes back without the Secret-fed variable, named on stderr', async () => {
    const secretValue = 'tok-e2e-8b1f-not-for-print'
    const manifest = `apiVersion: v1
kind: Secret
metadata: {name: api, namespace: ${namespace}}
stringData: {token: ${secretValue}}
---
apiVersion: v1
kind: Pod
metadata: {name: keeper, namespace: ${namespace}}
spec:
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sleep, '3600']
    env:
    - {name: PLAIN, value: visible}
    - {name: TOKEN, valueFrom: {secretKeyRef: {name: api, key: token}}}
`
    const started = await run('run', '-f', write('keeper.yaml', manifest), '-q')
    expect(started.code, started.stderr).toBe(0)
    const fromRecord = await run('export', 'keeper', '-n', namespace)
    expect(fromRecord.code, fromRecord.stderr).toBe(0)
    expect(fromRecord.stderr).toBe('Note: the pod needs Secrets api (key token): never printed; give them beside the manifest\n')

    // The record gone (its pod directory lost): the runtime holds the value, the export must not.
    const {stdout} = await run('pods', '--name', 'keeper', '-n', namespace, '-o', 'json')
    const uid = (JSON.parse(stdout) as {items: Array<{metadata: {uid: string}}>}).items[0].metadata.uid
    rmSync(join(dir, 'pods', uid, 'pod.json'))
    const rebuilt = await run('export', 'keeper', '-n', namespace, '-o', 'json')
    expect(rebuilt.code, rebuilt.stderr).toBe(0)
    for (const output of [fromRecord.stdout, fromRecord.stderr, rebuilt.stdout, rebuilt.stderr]) expect(output).not.toContain(secretValue)
    expect(rebuilt.stderr).toContain('Note: env variables from Secrets left out (their values are never printed): app: TOKEN\n')
    expect(JSON.parse(rebuilt.stdout).spec.containers[0].env).toEqual([{name: 'PLAIN', value: 'visible'}])
    expect((await run('kill', 'keeper', '-n', namespace)).code).toBe(0)
  })
})
