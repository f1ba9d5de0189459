import {mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {readDesiredPod, recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {makeEnvironmentVariables} from '../../../../src/lib/kubelet/core/env.js'
import {referencedObjects} from '../../../../src/lib/kubelet/config/recorded-objects.js'
import {mountsUnder, unmountUnder} from '../../../../src/lib/kubelet/volumes/volumes.js'
import {podsFromDocuments} from '../../../../src/lib/manifest/inputs.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'

const roots: string[] = []
afterEach(async () => {
  for (const root of roots.splice(0)) {
    await unmountUnder(root)
    rmSync(root, {recursive: true, force: true})
  }
})

const node = {
  nodeName: 'n',
  hostIPs: [],
  podIPs: [],
  allocatable: {cpuMilli: 2000n, memoryBytes: 1n << 30n, ephemeralStorageBytes: 1n << 34n},
}

const INPUT = `apiVersion: v1
kind: Secret
metadata: {name: db}
data: {password: c2VjcmV0LXZhbHVl, unused: eA==}
---
apiVersion: v1
kind: Secret
metadata: {name: pull}
type: kubernetes.io/dockerconfigjson
stringData: {.dockerconfigjson: '{"auths":{}}'}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: files}
data: {a.conf: "x=1"}
binaryData: {blob: AAEC}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: not-used}
data: {z: "1"}
---
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  imagePullSecrets: [{name: pull}]
  containers:
  - name: app
    image: busybox
    env: [{name: PASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}]
    volumeMounts: [{name: files, mountPath: /etc/files}]
  volumes: [{name: files, configMap: {name: files}}]
`

async function pod(): Promise<PodModel> {
  const documents = await parseDocuments(INPUT, 'in.yaml')
  const [model] = podsFromDocuments(
    documents.map((document) => ({document, label: 'in.yaml'})),
    {newUid: () => 'uid-1'},
  )
  return model
}

describe('the objects a recorded pod keeps', () => {
  it('are the ones it looks up: env, volumes and imagePullSecrets, not the rest of the input', async () => {
    const {configMaps, secrets} = referencedObjects(await pod())
    expect(configMaps.map((object) => object.name)).toEqual(['files'])
    expect(secrets.map((object) => object.name).sort()).toEqual(['db', 'pull'])
  })

  it('come back with their data on a tmpfs of their own, readable by root only; pod.json holds no value', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-objects-'))
    roots.push(root)
    const model = await pod()
    await recordDesiredPod(root, model)
    expect(await mountsUnder(join(root, 'uid-1', 'objects'))).toHaveLength(1)
    expect(statSync(join(root, 'uid-1', 'objects', 'objects.json')).mode & 0o777).toBe(0o600)
    expect(readFileSync(join(root, 'uid-1', 'pod.json'), 'utf8')).not.toContain('c2VjcmV0')

    const recorded = (await readDesiredPod(root, 'uid-1'))!
    expect(recorded.objects?.secret('default', 'db')?.data.password.toString()).toBe('secret-value')
    expect(recorded.objects?.configMap('default', 'files')?.binaryData.blob).toEqual(Buffer.from([0, 1, 2]))
    expect(recorded.objects?.configMap('default', 'not-used')).toBeUndefined()
    expect(makeEnvironmentVariables(recorded, recorded.containers[0], node).env).toContainEqual(
      expect.objectContaining({name: 'PASSWORD', value: 'secret-value'}),
    )
    // Printed, they show names and keys only, as the input's objects do.
    expect(JSON.stringify(recorded.objects)).not.toContain('secret-value')
    expect(JSON.stringify(recorded.objects)).toContain('"keys":["password","unused"]')
  })

  it('once gone, the env that needs them fails with what to do, never a TypeError', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-objects-'))
    roots.push(root)
    await recordDesiredPod(root, await pod())
    await unmountUnder(join(root, 'uid-1', 'objects'))
    const recorded = (await readDesiredPod(root, 'uid-1'))!
    expect(() => makeEnvironmentVariables(recorded, recorded.containers[0], node)).toThrow(
      'secret "db" of pod web was given to the run that made it, and podctl no longer has it (it keeps them in memory only); ' +
        'apply the pod again with them: podctl sync -f FILE',
    )
  })
})
