import {existsSync, mkdtempSync, readFileSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'

/**
 * PersistentVolumeClaims as local directories under a claims root of the test's own: a claim
 * document and a pod run without --volume, the data outlives kill and is seen by the next pod,
 * only kill --delete-claims or claims --delete removes it (never while a running pod uses it), and a StatefulSet's
 * volumeClaimTemplates get their <template>-<set>-<ordinal> directory.
 */
const client = labClient()
const namespace = uniqueNamespace('e2e-claims')
const work = mkdtempSync(join(tmpdir(), 'podctl-claims-'))
const claimsRoot = join(work, 'claims')
const env = labEnv({PODCTL_POD_LOGS_ROOT: lab().logRoot, PODCTL_POD_DIR_ROOT: join(work, 'pods'), PODCTL_CLAIMS_ROOT: claimsRoot})
useLabNamespace(client, namespace, work)

function run(args: string[], input?: string) {
  return podctl(args, {env, input})
}

const CLAIM = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ${namespace}}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
`

function pod(name: string, script: string): string {
  return `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: app
    image: ${lab().busybox}
    command: [sh, -c, '${script}; sleep 3600']
    volumeMounts: [{name: store, mountPath: /store}]
  volumes:
  - {name: store, persistentVolumeClaim: {claimName: data}}
`
}

async function logs(name: string): Promise<string> {
  const result = await run(['logs', '-n', namespace, `${name}/app`])
  return result.stdout
}

describe('claims as local persistent volumes', () => {
  const dir = join(claimsRoot, namespace, 'data')

  it('a claim document and a pod run without --volume; the data outlives kill; --delete-claims removes it', async () => {
    const dry = await run(['run', '-f', '-', '--dry-run', '-o', 'json'], `${CLAIM}---\n${pod('writer', 'true')}`)
    expect(dry.code, dry.stderr).toBe(0)
    expect(JSON.parse(dry.stdout).pods[0].volumes[0]).toMatchObject({type: 'persistentVolumeClaim', hostPath: dir})
    expect(existsSync(claimsRoot)).toBe(false)

    const first = await run(['run', '-f', '-'], `${CLAIM}---\n${pod('writer', 'echo kept > /store/note')}`)
    expect(first.code, first.stderr).toBe(0)
    await expect.poll(() => existsSync(join(dir, 'note'))).toBe(true)
    expect(statSync(dir).mode & 0o777).toBe(0o777)
    const record = JSON.parse(readFileSync(`${dir}.claim.json`, 'utf8'))
    expect(record).toMatchObject({name: 'data', namespace, provisioned: 'claim document', spec: {storage: '1Gi'}})
    expect((await run(['kill', '-n', namespace, 'writer'])).code).toBe(0)
    expect(readFileSync(join(dir, 'note'), 'utf8')).toBe('kept\n')

    // The next pod claiming it (no claim document this time: it exists on disk) sees the file.
    const second = await run(['run', '-f', '-'], pod('reader', 'cat /store/note'))
    expect(second.code, second.stderr).toBe(0)
    expect(second.stderr).not.toContain('neither in the input nor on disk')
    await expect.poll(() => logs('reader')).toBe('kept\n')

    // podctl claims lists it with its user; deleting it by name is refused while that pod runs.
    const listed = await run(['claims', '-n', namespace, '-o', 'json'])
    expect(listed.code, listed.stderr).toBe(0)
    expect(JSON.parse(listed.stdout).items).toEqual([
      expect.objectContaining({name: 'data', namespace, path: dir, storage: '1Gi', usedBy: `reader_${namespace}`}),
    ])
    const refused = await run(['claims', '--delete', 'data', '-n', namespace])
    expect(refused.code).toBe(9)
    expect(refused.stderr).toBe(`Error: claim ${namespace}/data is in use by pod reader_${namespace}; kill the pod first\n`)

    // Not while a running pod uses it: killing another pod of the claim keeps it, naming the user.
    expect((await run(['run', '-f', '-'], pod('other', 'true'))).code).toBe(0)
    const busy = await run(['kill', '-n', namespace, 'other', '--delete-claims'])
    expect(busy.code, busy.stderr).toBe(0)
    expect(busy.stderr).toContain(`claim ${namespace}/data kept: in use by pod reader_${namespace}`)
    expect(existsSync(join(dir, 'note'))).toBe(true)

    const removed = await run(['kill', '-n', namespace, 'reader', '--delete-claims'])
    expect(removed.code, removed.stderr).toBe(0)
    expect(removed.stdout).toContain(`claim ${namespace}/data: deleted ${dir}`)
    expect(existsSync(dir)).toBe(false)
    expect(existsSync(`${dir}.claim.json`)).toBe(false)
  })

  it('a Block claim is refused with the reason; a read-only claim volume mounts read-only', async () => {
    const block = await run(['run', '-f', '-', '--dry-run'], `${CLAIM}  volumeMode: Block\n---\n${pod('b', 'true')}`)
    expect(block.code).toBe(2)
    expect(block.stderr).toContain('spec.volumeMode Block is not supported by podctl')

    const readOnly = pod('ro', 'touch /store/x 2>&1 || echo refused').replace('claimName: data}', 'claimName: data, readOnly: true}')
    const result = await run(['run', '-f', '-'], readOnly)
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toContain(`claim ${namespace}/data (pod ro_${namespace}) is neither in the input nor on disk`)
    await expect.poll(() => logs('ro')).toContain('refused')
    expect((await run(['kill', '-n', namespace, 'ro'])).code).toBe(0)
    const deleted = await run(['claims', '--delete', 'data', '-n', namespace])
    expect(deleted.code, deleted.stderr).toBe(0)
    expect(deleted.stdout).toBe(`claim ${namespace}/data: deleted\n`)
    expect(existsSync(dir)).toBe(false)
  })

  it("a StatefulSet's volumeClaimTemplates get <template>-<set>-0 under the claims root", async () => {
    const set = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: web, namespace: ${namespace}}
spec:
  selector: {matchLabels: {app: web}}
  serviceName: web
  replicas: 1
  template:
    metadata: {labels: {app: web}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
      - name: app
        image: ${lab().busybox}
        command: [sh, -c, 'hostname > /data/host; sleep 3600']
        volumeMounts: [{name: data, mountPath: /data}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`
    const result = await run(['run', '-f', '-'], set)
    expect(result.code, result.stderr).toBe(0)
    const claim = join(claimsRoot, namespace, 'data-web-0')
    // The shell creates the file before it writes to it: wait for the content, not the file.
    const host = join(claim, 'host')
    await expect.poll(() => (existsSync(host) ? readFileSync(host, 'utf8') : undefined)).toBe('web-0\n')
    expect(JSON.parse(readFileSync(`${claim}.claim.json`, 'utf8'))).toMatchObject({
      provisioned: 'dynamic',
      createdFor: `web-0_${namespace}`,
    })
    expect((await run(['kill', '-n', namespace, 'web-0', '--delete-claims'])).code).toBe(0)
    expect(existsSync(claim)).toBe(false)
  })
})
