/**
 * compact-plan.ts: `run --dry-run`'s text for people. The sandbox config is hoisted once per pod and
 * the calls that resend it refer to it; fields protobuf would not send are left out, values of
 * other kinds (bytes) and numbers, zeros included, are kept as they are.
 */
import {describe, expect, it} from 'vitest'

import {compactPlans, SANDBOX_ANNOTATIONS_REF, SANDBOX_CONFIG_REF, withoutDefaults} from '../../../../src/lib/kubelet/run/compact-plan.js'
import type {PodPlan} from '../../../../src/lib/kubelet/run/run-plan.js'

describe('withoutDefaults', () => {
  it('drops empty strings, false, empty lists and maps, and maps emptied so; keeps 0, null and other objects', () => {
    const bytes = Buffer.from('<key A of f in volume v>')
    expect(
      withoutDefaults({a: '', b: false, c: [], d: {}, e: {f: {g: ''}}, h: 0, i: null, j: [{k: '', l: 'x'}], m: bytes, n: true}),
    ).toEqual({h: 0, i: null, j: [{l: 'x'}], m: bytes, n: true})
  })
})

describe('compactPlans', () => {
  const config = {metadata: {name: 'web', uid: 'u', namespace: 'ns', attempt: 0}, annotations: {a: '1'}, hostname: ''}
  const plan: PodPlan = {
    pod: 'web',
    namespace: 'ns',
    uid: 'u',
    calls: [
      {rpc: 'RuntimeService/RunPodSandbox', request: {config, runtimeHandler: ''}},
      {rpc: 'ImageService/PullImage', request: {image: {image: 'busybox', annotations: {a: '1'}}, auth: null, sandboxConfig: {...config}}},
      {
        rpc: 'RuntimeService/CreateContainer',
        request: {podSandboxId: '<sandbox id>', config: {metadata: {name: 'app'}}, sandboxConfig: config},
      },
    ],
    probes: [{container: 'app', readinessProbe: {} as never}],
  }

  it('shows the config once, before the calls, which refer to it (a copy too); a container config is not taken for it', () => {
    const [compact] = compactPlans([plan])
    expect(Object.keys(compact)).toEqual(['pod', 'namespace', 'uid', 'sandboxConfig', 'calls', 'probes'])
    expect(compact.sandboxConfig).toEqual({metadata: config.metadata, annotations: {a: '1'}})
    expect(compact.calls.map((call) => call.request)).toEqual([
      {config: SANDBOX_CONFIG_REF},
      {image: {image: 'busybox', annotations: SANDBOX_ANNOTATIONS_REF}, auth: null, sandboxConfig: SANDBOX_CONFIG_REF},
      {podSandboxId: '<sandbox id>', config: {metadata: {name: 'app'}}, sandboxConfig: SANDBOX_CONFIG_REF},
    ])
    // The plan itself is left whole (it is what -o json prints).
    expect(plan.calls[2].request).toMatchObject({sandboxConfig: config})
  })

  it('leaves a plan without RunPodSandbox as it is', () => {
    const other: PodPlan = {pod: 'p', namespace: 'n', uid: 'u', calls: [{rpc: 'node: sleep', request: {seconds: 1}}]}
    expect(compactPlans([other])).toEqual([other])
  })
})
