import {describe, expect, it} from 'vitest'

import {formatMap, makeEnvironmentVariables, resourceFieldRefValue} from '../../../../src/lib/kubelet/core/env.js'
import {podsFromDocuments} from '../../../../src/lib/manifest/inputs.js'
import type {ContainerModel, PodModel} from '../../../../src/lib/manifest/model.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'

const node = {
  nodeName: 'node-1',
  hostIPs: ['192.0.2.10'],
  podIPs: ['10.234.0.7'],
  allocatable: {cpuMilli: 4000n, memoryBytes: 8n * 1024n ** 3n, ephemeralStorageBytes: 100n * 1024n ** 3n},
}

async function pods(text: string): Promise<PodModel[]> {
  const documents = await parseDocuments(text, 'in.yaml')
  return podsFromDocuments(
    documents.map((document, index) => ({document, label: `in.yaml (document ${index + 1})`})),
    {newUid: () => 'uid-1'},
  )
}

const OBJECTS = `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {mode: fast, 1bad: x, A: from-cfg}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
data: {password: c2VjcmV0}
stringData: {user: admin}
---
`

async function env(containerYaml: string) {
  const [pod] = await pods(`${OBJECTS}apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web, tier: b}, annotations: {note: "say \\"hi\\""}}
spec:
  containers:
  - name: app
    image: busybox
    resources: {limits: {cpu: 250m, memory: 64Mi}}
${containerYaml}`)
  return {pod, built: makeEnvironmentVariables(pod, pod.containers[0], node)}
}

describe('makeEnvironmentVariables', () => {
  it('envFrom first (prefix; invalid keys skipped with the kubelet warning), then env in order with $(VAR) expansion', async () => {
    const {built} = await env(`    envFrom:
    - configMapRef: {name: cfg}
    - prefix: S_
      secretRef: {name: creds}
    env:
    - {name: A, value: "$(mode)-$(S_user)"}
    - {name: B, value: "$(C) $$(A)"}
    - {name: C, valueFrom: {configMapKeyRef: {name: cfg, key: mode}}}
    - {name: GONE, valueFrom: {configMapKeyRef: {name: nope, key: k, optional: true}}}`)
    expect(built.env).toEqual([
      {name: 'mode', value: 'fast'},
      {name: 'A', value: 'fast-admin', secret: true},
      {name: 'S_password', value: 'secret', secret: true},
      {name: 'S_user', value: 'admin', secret: true},
      {name: 'B', value: '$(C) $(A)'},
      {name: 'C', value: 'fast'},
    ])
    expect(built.warnings).toEqual([
      'Keys [1bad] from the EnvFrom configMap default/cfg were skipped since they are considered invalid environment variable names.',
    ])
  })

  it('the downward API: pod fields, the node, the pod IP, labels by key, resources with divisor and allocatable defaults', async () => {
    const {pod, built} = await env(`    env:
    - {name: N, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
    - {name: U, valueFrom: {fieldRef: {fieldPath: metadata.uid}}}
    - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
    - {name: IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
    - {name: HOST, valueFrom: {fieldRef: {fieldPath: status.hostIP}}}
    - {name: SA, valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}}
    - {name: TIER, valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}}
    - {name: CPU, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1m}}}
    - {name: CPU1, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
    - {name: MEM, valueFrom: {resourceFieldRef: {resource: requests.memory, divisor: 1Mi}}}`)
    expect(Object.fromEntries(built.env.map(({name, value}) => [name, value]))).toEqual({
      N: 'web',
      U: 'uid-1',
      NODE: 'node-1',
      IP: '10.234.0.7',
      HOST: '192.0.2.10',
      SA: 'default',
      TIER: 'b',
      CPU: '250',
      // ceil(250m / 1)
      CPU1: '1',
      MEM: '64',
    })
    const noLimits: ContainerModel = {...pod.containers[0], resources: {limits: {}, requests: {}}}
    expect(resourceFieldRefValue(pod, {resource: 'limits.memory', divisor: '1Gi'}, noLimits, node.allocatable)).toBe('8')
    expect(resourceFieldRefValue(pod, {resource: 'limits.cpu'}, noLimits, node.allocatable)).toBe('4')
    expect(resourceFieldRefValue(pod, {resource: 'requests.cpu', divisor: '1m'}, noLimits, node.allocatable)).toBe('0')
  })

  it('a missing ConfigMap, Secret or key is the kubelet message; optional ones are left out', async () => {
    await expect(env(`    env: [{name: X, valueFrom: {configMapKeyRef: {name: nope, key: k}}}]`)).rejects.toThrow(
      'configmap "nope" not found',
    )
    await expect(env(`    env: [{name: X, valueFrom: {secretKeyRef: {name: creds, key: k}}}]`)).rejects.toThrow(
      "couldn't find key k in Secret default/creds",
    )
    await expect(env(`    envFrom: [{secretRef: {name: nope}}]`)).rejects.toThrow('secret "nope" not found')
    const {built} = await env(`    envFrom: [{secretRef: {name: nope, optional: true}}]`)
    expect(built.env).toEqual([])
  })
})

describe('formatMap', () => {
  it('sorts keys and quotes values as Go %q', () => {
    expect(formatMap({b: 'say "hi"', a: 'x\ny'})).toBe('a="x\\ny"\nb="say \\"hi\\""')
  })
})
