import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {podsFromDocuments} from '../../../src/lib/manifest/inputs.js'
import {loadPodManifest, parseDocuments} from '../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../src/lib/manifest/model.js'
import {ObjectStore, parseSecret} from '../../../src/lib/manifest/objects.js'
import {podFromWorkload, replicaName, safeEncode, templateHash} from '../../../src/lib/manifest/workloads.js'

async function load(text: string, volumes?: string[]): Promise<PodModel[]> {
  const documents = await parseDocuments(text, 'in.yaml')
  return podsFromDocuments(
    documents.map((document, index) => ({document, label: documents.length > 1 ? `in.yaml (document ${index + 1})` : 'in.yaml'})),
    {newUid: () => 'uid-1', volumes},
  )
}

async function refusal(text: string, volumes?: string[]): Promise<string> {
  try {
    await load(text, volumes)
  } catch (error) {
    return (error as Error).message
  }

  throw new Error('expected a refusal')
}

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers: [{name: app, image: busybox}]
`

describe('ConfigMaps and Secrets in the input', () => {
  it('are kept for the pods whatever their order, never reported as unknown fields', async () => {
    const [pod] = await load(`${POD}---
apiVersion: v1
kind: ConfigMap
metadata: {name: cfg, namespace: default}
data: {a: "1"}
binaryData: {b: AAE=}
immutable: true
---
apiVersion: v1
kind: Secret
metadata: {name: s}
type: kubernetes.io/basic-auth
data: {password: aHVudGVyMg==}
stringData: {username: admin}
`)
    expect(pod.objects?.configMap('default', 'cfg')).toMatchObject({data: {a: '1'}, binaryData: {b: Buffer.from([0, 1])}, immutable: true})
    expect(pod.objects?.secret('default', 's')?.data).toEqual({password: Buffer.from('hunter2'), username: Buffer.from('admin')})
    // JSON output of the store shows keys, never values.
    expect(JSON.stringify(pod.objects)).not.toContain('hunter2')
    expect(JSON.stringify(pod.objects)).toContain('"keys":["password","username"]')
  })

  it('a List is opened into its items', async () => {
    const pods = await load(`apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: ConfigMap, metadata: {name: cfg}, data: {a: "1"}}
- {apiVersion: v1, kind: Pod, metadata: {name: one}, spec: {containers: [{name: app, image: busybox}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: two}, spec: {containers: [{name: app, image: busybox}]}}
`)
    expect(pods.map((pod) => pod.name)).toEqual(['one', 'two'])
    expect(pods[0].objects?.configMap('default', 'cfg')?.data).toEqual({a: '1'})
  })

  it('refuses bad objects naming the field, and never echoes a Secret value', async () => {
    expect(await refusal(`${POD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {port: 8080}\n`)).toBe(
      'in.yaml (document 2, ConfigMap/c): data.port must be a string, not 8080; quote it: "8080"',
    )
    expect(await refusal(`${POD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndatas: {}\n`)).toMatch(
      /^in\.yaml \(document 2, ConfigMap\/c\): datas is not a known field; did you mean data\?/,
    )
    const secret = await refusal(`${POD}---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {token: 12345678}\n`)
    expect(secret).toBe('in.yaml (document 2, Secret/s): stringData.token must be a string (quote the value)')
    expect(secret).not.toContain('12345678')
    expect(
      await refusal(`${POD}---\napiVersion: v1\nkind: Secret\nmetadata: {name: s}\ntype: kubernetes.io/dockerconfigjson\ndata: {}\n`),
    ).toBe('in.yaml (document 2, Secret/s): data must hold the key ".dockerconfigjson" for a Secret of type kubernetes.io/dockerconfigjson')
    expect(
      await refusal(
        `${POD}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n`,
      ),
    ).toBe('in.yaml (document 3, ConfigMap/c): metadata.name ConfigMap "c" is already defined in in.yaml (document 2)')
    expect(await refusal(`apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n`)).toBe(
      'in.yaml: no Pod found (only ConfigMaps and Secrets; add the Pod that uses them)',
    )
  })

  it('a Secret without a namespace is found from any namespace; one with a namespace only from its own', () => {
    const store = new ObjectStore()
    store.add({kind: 'Secret', value: parseSecret({apiVersion: 'v1', kind: 'Secret', metadata: {name: 'a'}}, 'x')})
    store.add({kind: 'Secret', value: parseSecret({apiVersion: 'v1', kind: 'Secret', metadata: {name: 'b', namespace: 'prod'}}, 'x')})
    expect(store.secret('dev', 'a')).toBeDefined()
    expect(store.secret('prod', 'b')).toBeDefined()
    expect(store.secret('dev', 'b')).toBeUndefined()
  })

  it('several files and a directory, as kubectl -f takes them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-objects-'))
    try {
      writeFileSync(join(dir, 'a-config.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg}\ndata: {a: "1"}\n')
      writeFileSync(join(dir, 'b-pod.yaml'), POD)
      writeFileSync(join(dir, 'notes.txt'), 'not a manifest')
      const pods = await loadPodManifest([dir])
      expect(pods.map((pod) => [pod.name, pod.source])).toEqual([['web', join(dir, 'b-pod.yaml')]])
      expect(pods[0].objects?.configMap('default', 'cfg')).toBeDefined()
      const twice = await loadPodManifest([join(dir, 'a-config.yaml'), join(dir, 'b-pod.yaml')])
      expect(twice).toHaveLength(1)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('volumes', () => {
  it('YAML 1.1 octal modes, items, projected sources; claims need no --volume, other sources do', async () => {
    const text = `${POD}  volumes:
  - {name: c, configMap: {name: cfg, defaultMode: 0440, items: [{key: k, path: dir/k, mode: 0o600}]}}
  - name: p
    projected:
      sources: [{serviceAccountToken: {path: token}}, {downwardAPI: {items: [{path: l, fieldRef: {fieldPath: metadata.labels}}]}}]
  - {name: d, persistentVolumeClaim: {claimName: data}}
`
    const [claimed] = await load(text)
    expect(claimed.volumes[2]).toEqual({name: 'd', persistentVolumeClaim: {claimName: 'data', readOnly: false}})
    const nfs = `${POD}  volumes: [{name: n, nfs: {server: s, path: /x}}]\n`
    expect(await refusal(nfs)).toBe('in.yaml: volume n (nfs) needs --volume n=DIR on a single node')
    const [pod] = await load(text, ['d=/srv/data'])
    expect(pod.volumes[0].configMap).toEqual({
      name: 'cfg',
      items: [{key: 'k', path: 'dir/k', mode: 0o600}],
      defaultMode: 0o440,
      optional: false,
    })
    expect(pod.volumes[1].projected?.sources).toEqual([
      {skipped: 'serviceAccountToken'},
      {downwardAPI: {items: [{path: 'l', fieldRef: {fieldPath: 'metadata.labels'}}]}},
    ])
    expect(pod.warnings).toEqual(['in.yaml: volume p: the serviceAccountToken source is skipped (there is no API server to issue a token)'])
    expect(pod.volumes[2]).toEqual({
      name: 'd',
      persistentVolumeClaim: {claimName: 'data', readOnly: false},
      hostPath: {path: '/srv/data', type: 'Directory'},
    })
    expect(await refusal(POD, ['x=/tmp'])).toBe('--volume x=...: no pod has a volume named "x"')
  })

  it('mount options as the API server validates them', async () => {
    const withMount = (mount: string) =>
      `${POD.replace('image: busybox}', `image: busybox, volumeMounts: [${mount}]}`)}  volumes: [{name: v, emptyDir: {}}]\n`
    expect(await refusal(withMount('{name: v, mountPath: /v, subPath: ../x}'))).toBe(
      `in.yaml: spec.containers[0].volumeMounts[0].subPath "../x" must not contain '..'`,
    )
    expect(await refusal(withMount('{name: v, mountPath: /v, mountPropagation: Bidirectional}'))).toBe(
      'in.yaml: spec.containers[0].volumeMounts[0].mountPropagation ' +
        'Bidirectional mount propagation is available only to privileged containers',
    )
    expect(await refusal(withMount('{name: v, mountPath: /v, recursiveReadOnly: Enabled}'))).toBe(
      'in.yaml: spec.containers[0].volumeMounts[0].recursiveReadOnly may only be Enabled if readOnly is set',
    )
    const [pod] = await load(withMount('{name: v, mountPath: /v, subPathExpr: $(POD_NAME), mountPropagation: HostToContainer}'))
    expect(pod.containers[0].volumeMounts[0]).toEqual({
      name: 'v',
      mountPath: '/v',
      readOnly: false,
      subPathExpr: '$(POD_NAME)',
      mountPropagation: 'HostToContainer',
    })
  })
})

describe('workloads', () => {
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {name: 'web', namespace: 'prod'},
    spec: {
      replicas: 3,
      selector: {matchLabels: {app: 'web'}},
      template: {metadata: {labels: {app: 'web'}}, spec: {containers: [{name: 'app', image: 'busybox'}]}},
    },
  }

  it('names a Deployment pod <deploy>-<hash>-<5 chars> with pod-template-hash; the hash is stable', () => {
    const pod = podFromWorkload(structuredClone(deployment), 'Deployment', 'd.yaml', {random: () => 0})
    const hash = templateHash(deployment.spec.template)
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/)
    expect(pod.document.metadata).toEqual({
      name: `web-${hash}-bbbbb`,
      namespace: 'prod',
      labels: {app: 'web', 'pod-template-hash': hash},
      annotations: {},
    })
    expect(pod.owner).toEqual({kind: 'Deployment', name: 'web', via: `ReplicaSet web-${hash}`, replica: 0, replicas: 1})
    expect(pod.source).toBe('d.yaml (Deployment web, spec.template)')
  })

  it('refuses a selector that does not select the template', () => {
    const bad = structuredClone(deployment)
    bad.spec.selector.matchLabels.app = 'other'
    expect(() => podFromWorkload(bad, 'Deployment', 'd.yaml')).toThrow(
      'd.yaml: spec.template.metadata.labels `selector` does not match template `labels` (app=other)',
    )
  })

  it('an Indexed Job gets the completion index and JOB_COMPLETION_INDEX', () => {
    const job = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {name: 'idx', uid: 'u-1'},
      spec: {completionMode: 'Indexed', template: {spec: {restartPolicy: 'Never', containers: [{name: 'app', image: 'busybox'}]}}},
    }
    const pod = podFromWorkload(job, 'Job', 'j.yaml', {random: () => 1})
    expect(pod.document.metadata).toMatchObject({
      name: 'idx-0-ccccc',
      labels: {'job-name': 'idx', 'controller-uid': 'u-1', 'batch.kubernetes.io/job-completion-index': '0'},
      annotations: {'batch.kubernetes.io/job-completion-index': '0'},
    })
    expect(JSON.stringify(pod.document.spec)).toContain('JOB_COMPLETION_INDEX')
  })

  it('generateName keeps 58 characters of the base; SafeEncodeString maps digits as the controllers do', () => {
    const identity = {kind: 'ReplicaSet', name: 'a', hash: ''}
    expect(replicaName(`${'a'.repeat(70)}-`, identity, 0, () => 2)).toBe(`${'a'.repeat(58)}ddddd`)
    expect(replicaName(`${'a'.repeat(70)}-`, identity, 0)).toMatch(/^a{58}[bcdfghjklmnpqrstvwxz2456789]{5}$/)
    expect(safeEncode('0123456789')).toBe('456789bcdf')
  })
})
