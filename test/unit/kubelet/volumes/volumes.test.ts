import {mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterEach, describe, expect, it} from 'vitest'

import {readDesiredPod, recordDesiredPod} from '../../../../src/lib/kubelet/config/desired-state.js'
import {removePodDirectory, setUpVolumes, volumeHostPaths} from '../../../../src/lib/kubelet/volumes/pod-dirs.js'
import {checkPodReferences} from '../../../../src/lib/kubelet/volumes/pod-objects.js'
import {unmountUnder} from '../../../../src/lib/kubelet/volumes/volumes.js'
import {podsFromDocuments} from '../../../../src/lib/manifest/inputs.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../../src/lib/manifest/model.js'

const roots: string[] = []
afterEach(async () => {
  for (const root of roots.splice(0)) {
    // recordDesiredPod keeps a pod's objects on a tmpfs of its own.
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

async function pod(volumes: string, objects = ''): Promise<PodModel> {
  const text = `${objects}apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  containers: [{name: app, image: busybox, resources: {limits: {memory: 64Mi}}}]
  volumes:
${volumes}`
  const documents = await parseDocuments(text, 'in.yaml')
  const [model] = podsFromDocuments(
    documents.map((document) => ({document, label: 'in.yaml'})),
    {newUid: () => 'uid-1'},
  )
  return model
}

const CONFIG = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: "1", b: "2"}\n---\n'

describe('setUpVolumes', () => {
  it('writes configMap and downwardAPI volumes under kubernetes.io~<plugin>, owned by fsGroup', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-volumes-'))
    roots.push(root)
    const model = await pod(
      `  - {name: cfg, configMap: {name: cfg, items: [{key: b, path: sub/b.txt}]}}
  - name: info
    downwardAPI:
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: mem, resourceFieldRef: {containerName: app, resource: limits.memory, divisor: 1Mi}}
  - {name: scratch, emptyDir: {}}
`,
      CONFIG,
    )
    model.securityContext = {fsGroup: 2345}
    await setUpVolumes(model, root, node)
    const paths = volumeHostPaths(model, root)
    expect(paths.get('cfg')).toBe(`${root}/uid-1/volumes/kubernetes.io~configmap/cfg`)
    expect(paths.get('info')).toBe(`${root}/uid-1/volumes/kubernetes.io~downward-api/info`)
    expect(readFileSync(join(paths.get('cfg')!, 'sub/b.txt'), 'utf8')).toBe('2')
    expect(readlinkSync(join(paths.get('cfg')!, 'sub'))).toBe('..data/sub')
    expect(readFileSync(join(paths.get('info')!, 'labels'), 'utf8')).toBe('app="web"')
    expect(readFileSync(join(paths.get('info')!, 'mem'), 'utf8')).toBe('64')
    // fsGroup: group-readable files for the read-only plugins, group rw + setgid for emptyDir.
    expect(statSync(join(paths.get('cfg')!, 'sub/b.txt')).gid).toBe(2345)
    expect(statSync(join(paths.get('cfg')!, 'sub/b.txt')).mode & 0o777).toBe(0o644)
    expect(statSync(paths.get('cfg')!).mode & 0o7777).toBe(0o2777)
    expect(statSync(paths.get('scratch')!).gid).toBe(2345)
    expect(statSync(paths.get('scratch')!).mode & 0o7777).toBe(0o2777)
    await removePodDirectory(root, 'uid-1')
    expect(() => statSync(`${root}/uid-1`)).toThrow()
  })
})

describe('setUpVolumes again for a recreation (the pod directory kept)', () => {
  it('keeps emptyDir files, writes a configMap again from live objects, keeps it as written from a recorded pod', async () => {
    const root = mkdtempSync(join(tmpdir(), 'podctl-volumes-'))
    roots.push(root)
    const model = await pod('  - {name: cfg, configMap: {name: cfg}}\n  - {name: scratch, emptyDir: {}}\n', CONFIG)
    await setUpVolumes(model, root, node)
    const paths = volumeHostPaths(model, root)
    writeFileSync(join(paths.get('scratch')!, 'data'), 'kept')

    // A sync -f recreation: the new manifest's ConfigMap is written in place.
    await setUpVolumes(
      await pod('  - {name: cfg, configMap: {name: cfg}}\n  - {name: scratch, emptyDir: {}}\n', CONFIG.replace('"1"', '"9"')),
      root,
      node,
    )
    expect(readFileSync(join(paths.get('cfg')!, 'a'), 'utf8')).toBe('9')
    expect(readFileSync(join(paths.get('scratch')!, 'data'), 'utf8')).toBe('kept')

    // A sync recreation reads the pod back from pod.json and the objects kept beside it (a tmpfs).
    const updated = await pod('  - {name: cfg, configMap: {name: cfg}}\n  - {name: scratch, emptyDir: {}}\n', CONFIG.replace('"1"', '"9"'))
    await recordDesiredPod(root, updated)
    await setUpVolumes((await readDesiredPod(root, model.uid))!, root, node)
    expect(readFileSync(join(paths.get('cfg')!, 'a'), 'utf8')).toBe('9')
    expect(readFileSync(join(paths.get('scratch')!, 'data'), 'utf8')).toBe('kept')

    // Those objects gone (a reboot; no tmpfs): pod.json names them only, and the volume is kept as written.
    await unmountUnder(join(root, model.uid, 'objects'))
    const recorded = (await readDesiredPod(root, model.uid))!
    await setUpVolumes(recorded, root, node)
    expect(readFileSync(join(paths.get('cfg')!, 'a'), 'utf8')).toBe('9')

    // Never written (a new pod directory): the ConfigMap is missing, said the kubelet's way.
    await expect(setUpVolumes({...recorded, uid: 'uid-2'}, root, node)).rejects.toThrow(
      'MountVolume.SetUp failed for volume "cfg" : configmap "cfg" not found',
    )
  })
})

describe('checkPodReferences', () => {
  it('refuses a missing ConfigMap or key of a volume up front (FailedMount), naming the volume; optional ones pass', async () => {
    const missing = await pod('  - {name: cfg, configMap: {name: nope}}\n')
    expect(() => checkPodReferences([missing])).toThrow(
      'pod web_default: MountVolume.SetUp failed for volume "cfg" : configmap "nope" not found',
    )
    const missingKey = await pod('  - {name: cfg, configMap: {name: cfg, items: [{key: zz, path: z}]}}\n', CONFIG)
    expect(() => checkPodReferences([missingKey])).toThrow('configmap references non-existent config key: zz')
    const optional = await pod(
      '  - {name: cfg, configMap: {name: nope, optional: true}}\n  - {name: s, secret: {secretName: nope, optional: true}}\n',
    )
    expect(() => checkPodReferences([optional])).not.toThrow()
  })
})
