import {describe, expect, it} from 'vitest'

import {parseClaim} from '../../../src/lib/manifest/claims.js'
import {podsFromDocuments} from '../../../src/lib/manifest/inputs.js'
import {parseDocuments} from '../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../src/lib/manifest/model.js'

const CLAIM = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: local-path
  resources: {requests: {storage: 2Gi}}
`

const POD = `apiVersion: v1
kind: Pod
metadata: {name: web, namespace: prod}
spec:
  containers: [{name: app, image: busybox, volumeMounts: [{name: d, mountPath: /d}]}]
  volumes: [{name: d, persistentVolumeClaim: {claimName: data, readOnly: true}}]
`

async function claim(text: string) {
  const [document] = await parseDocuments(text, 'pvc.yaml')
  return parseClaim(document, 'pvc.yaml')
}

async function refusal(text: string): Promise<string> {
  try {
    await claim(text)
  } catch (error) {
    return (error as Error).message
  }

  throw new Error('expected a refusal')
}

async function load(text: string, volumes?: string[]): Promise<PodModel[]> {
  const documents = await parseDocuments(text, 'in.yaml')
  return podsFromDocuments(
    documents.map((document, index) => ({document, label: `in.yaml (document ${index + 1})`})),
    {newUid: () => 'uid-1', volumes},
  )
}

describe('PersistentVolumeClaim documents', () => {
  it('are read with their spec; the namespace may be left to the pod', async () => {
    expect(await claim(CLAIM)).toEqual({
      name: 'data',
      namespace: '',
      accessModes: ['ReadWriteOnce'],
      storage: '2Gi',
      storageClassName: 'local-path',
      volumeMode: 'Filesystem',
      source: 'pvc.yaml',
    })
  })

  it('are refused naming the field and the fix', async () => {
    expect(await refusal(CLAIM.replace('storageClassName: local-path', 'volumeMode: Block'))).toBe(
      'pvc.yaml: spec.volumeMode Block is not supported by podctl: a claim here is a local directory; use Filesystem (the default)',
    )
    expect(await refusal(CLAIM.replace('[ReadWriteOnce]', '[]'))).toBe(
      'pvc.yaml: spec.accessModes at least 1 access mode is required (e.g. [ReadWriteOnce])',
    )
    expect(await refusal(CLAIM.replace('[ReadWriteOnce]', '[ReadWriteOncePod, ReadOnlyMany]'))).toBe(
      'pvc.yaml: spec.accessModes may not use ReadWriteOncePod with other access modes',
    )
    expect(await refusal(CLAIM.replace('[ReadWriteOnce]', '[ReadWriteSometimes]'))).toContain('spec.accessModes[0] must be one of')
    expect(await refusal(CLAIM.replace('{requests: {storage: 2Gi}}', '{requests: {}}'))).toBe(
      'pvc.yaml: spec.resources.requests.storage is required (e.g. storage: 1Gi)',
    )
    expect(await refusal(CLAIM.replace('storage: 2Gi', 'storage: lots'))).toBe(
      'pvc.yaml: spec.resources.requests.storage must be a quantity such as 1Gi or 500Mi',
    )
    expect(await refusal(CLAIM.replace('storageClassName: local-path', 'volumeName: pv-1'))).toContain(
      'spec.volumeName is not supported by podctl; there are no PersistentVolumes to bind',
    )
    expect(await refusal(CLAIM.replace('name: data', 'name: Data'))).toContain('metadata.name "Data" is invalid')
    expect(await refusal(CLAIM.replace('apiVersion: v1', 'apiVersion: v2'))).toBe(
      'pvc.yaml: apiVersion must be "v1" for a PersistentVolumeClaim, not "v2"',
    )
  })
})

describe('claim volumes of pods', () => {
  it('get the claim document of the input, in the pod namespace', async () => {
    const [pod] = await load(`${CLAIM}---\n${POD}`)
    expect(pod.volumes[0].persistentVolumeClaim).toMatchObject({
      claimName: 'data',
      readOnly: true,
      claim: {namespace: 'prod', storage: '2Gi'},
    })
  })

  it('a claim document no pod uses is not provisioned, with a warning', async () => {
    const [pod] = await load(`${CLAIM.replace('name: data', 'name: spare')}---\n${POD}`)
    expect(pod.warnings).toEqual(['in.yaml (document 1): claim spare is used by no pod, so it is not provisioned'])
  })

  it('need no claim document, and --volume still binds one to a directory', async () => {
    const [alone] = await load(POD)
    expect(alone.volumes[0]).toEqual({name: 'd', persistentVolumeClaim: {claimName: 'data', readOnly: true}})
    const [bound] = await load(POD, ['d=/srv/d'])
    expect(bound.volumes[0].hostPath).toEqual({path: '/srv/d', type: 'Directory'})
  })

  it('refuse a claim volume without claimName, and a claim given twice', async () => {
    await expect(load(POD.replace('claimName: data, ', ''))).rejects.toThrow(
      'in.yaml (document 1, Pod/prod/web): spec.volumes[0].persistentVolumeClaim.claimName is required',
    )
    await expect(load(`${CLAIM}---\n${CLAIM}---\n${POD}`)).rejects.toThrow(
      'in.yaml (document 2, PersistentVolumeClaim/data): metadata.name ' +
        'PersistentVolumeClaim "data" is already defined in in.yaml (document 1)',
    )
    await expect(load(CLAIM)).rejects.toThrow('no Pod found (only PersistentVolumeClaims; add the Pod that uses them)')
  })
})
