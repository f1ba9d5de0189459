import {describe, expect, it} from 'vitest'

import {UsageError} from '../../../src/lib/errors.js'
import {loadManifestPods, withManifestPods} from '../../../src/lib/manifest/manifest-pods.js'

const MANIFEST = `apiVersion: v1
kind: Pod
metadata: {name: solo}
spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: prod}
spec:
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: c, image: busybox}]}}
`

const stdin = (text: string) => async () => text

describe('kill -f: the pods of a manifest', () => {
  it('Pods become name_namespace references (-n for those naming none); workloads keep their namespace', async () => {
    const found = await loadManifestPods(['-'], {stdin: stdin(MANIFEST)})
    expect(found.refs).toEqual(['solo_default'])
    expect(found.workloads.map(({kind, name, namespace}) => [kind, name, namespace])).toEqual([['StatefulSet', 'db', 'prod']])
    const inProd = await loadManifestPods(['-'], {namespace: 'prod', stdin: stdin(MANIFEST)})
    expect(inProd.refs).toEqual(['solo_prod'])
  })

  it('refuses a manifest namespace other than --namespace, naming the document', async () => {
    await expect(loadManifestPods(['-'], {namespace: 'ci', stdin: stdin(MANIFEST)})).rejects.toThrow(
      '<stdin> (document 2): metadata.namespace "prod" does not match --namespace ci; pass --namespace prod, or leave it out',
    )
  })

  it('-f cannot be combined with POD names, --all or --label', async () => {
    await expect(withManifestPods({refs: ['web']}, ['pod.yaml'])).rejects.toThrow(UsageError)
    await expect(withManifestPods({refs: [], all: true}, ['pod.yaml'])).rejects.toThrow('give either -f FILE or --all/--label, not both')
    const selection = {refs: ['web'], all: false}
    expect(await withManifestPods(selection, undefined)).toBe(selection)
  })
})
