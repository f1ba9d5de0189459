import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ManifestError} from '../../../src/lib/manifest/fields.js'
import {loadRunInput, parseDocuments} from '../../../src/lib/manifest/load.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'

const dir = mkdtempSync(join(tmpdir(), 'podctl-catalog-'))

/**
 * A pod using gated fields of Kubernetes 1.33-1.36 that podctl does not read, as types.go defines
 * them: stopSignal (ContainerStopSignals, 1.33), restartPolicyRules (ContainerRestartRules, 1.34),
 * workloadRef (GenericWorkload, 1.35; replaced in 1.36 by) schedulingGroup (1.36).
 */
const NEWER = `apiVersion: v1
kind: Pod
metadata: {name: newer}
spec:
  schedulingGroup: {podGroupName: gang}
  workloadRef: {name: gang, podGroup: workers}
  containers:
  - name: app
    image: busybox:1.36
    resources:
      limits: {memory: 64Mi, pids: 100}
    restartPolicyRules:
    - action: Restart
      exitCodes: {operator: In, values: [42]}
    lifecycle:
      stopSignal: SIGUSR1
`

async function pod(text: string) {
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml')
}

function file(text: string): string {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.yaml`)
  writeFileSync(path, text)
  return path
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError)
    return (error as Error).message
  }

  throw new Error('the input was accepted')
}

describe('the version-aware field catalog', () => {
  it('drops gated fields of Kubernetes releases up to 1.36, with one warning line listing their paths', async () => {
    const model = await pod(NEWER)
    expect(model.droppedFields).toEqual([
      'spec.schedulingGroup',
      'spec.workloadRef',
      'spec.containers[0].restartPolicyRules',
      'spec.containers[0].resources.limits.pids',
      'spec.containers[0].lifecycle.stopSignal',
    ])
    expect(model.containers[0].resources.limits).toEqual({memory: '64Mi'})
    const loaded = await loadRunInput({filename: file(NEWER)})
    expect(loaded.notices).toEqual([
      "dropped (not known to podctl's Kubernetes version, as an API server without the feature gate drops them): " +
        'spec.schedulingGroup, spec.workloadRef, spec.containers[0].restartPolicyRules, ' +
        'spec.containers[0].resources.limits.pids, spec.containers[0].lifecycle.stopSignal; --strict refuses them',
    ])
  })

  it('refuses a field that no release has, by path, with a did-you-mean, as kubectl apply does (strict field validation)', async () => {
    expect(await refusal(pod(NEWER.replace('    image: busybox:1.36', '    image: busybox:1.36\n    imagePolicy: Always')))).toBe(
      'pod.yaml: spec.containers[0].imagePolicy is not a known field; did you mean imagePullPolicy?',
    )
    expect(await refusal(pod(NEWER.replace('  containers:', '  futureField: 1\n  containers:')))).toBe(
      'pod.yaml: spec.futureField is not a field of PodSpec in Kubernetes 1.17–1.36',
    )
    // Inside a dropped field too: its contents are checked against the API all the same.
    expect(await refusal(pod(NEWER.replace('action: Restart', 'acton: Restart')))).toBe(
      'pod.yaml: spec.containers[0].restartPolicyRules[0].acton is not a known field; did you mean action?',
    )
    // Fields some blog posts show but no Kubernetes release has.
    const made = NEWER.replace('    lifecycle:', '    securityContext: {cgroupOptions: {writable: true}}\n    lifecycle:')
    expect(await refusal(pod(made))).toBe(
      'pod.yaml: spec.containers[0].securityContext.cgroupOptions is not a field of SecurityContext in Kubernetes 1.17–1.36',
    )
    // Every refusal at once, each by its path.
    const several = await refusal(
      pod(NEWER.replace('  containers:', '  futureField: 1\n  tolerations: [{efect: NoSchedule}]\n  containers:')),
    )
    expect(several.split('\n')).toEqual([
      'pod.yaml: 2 fields cannot be run as written:',
      '  spec.futureField is not a field of PodSpec in Kubernetes 1.17–1.36',
      '  spec.tolerations[0].efect is not a known field; did you mean effect?',
    ])
  })

  it('keeps "did you mean" for a typo in a map of resources (no API type: a near-typo is refused, anything else dropped)', async () => {
    expect(await refusal(pod(NEWER.replace('limits: {memory: 64Mi, pids: 100}', 'limits: {memry: 64Mi}')))).toBe(
      'pod.yaml: spec.containers[0].resources.limits.memry is not a known field; did you mean memory?',
    )
  })

  it('--strict refuses dropped fields', async () => {
    const path = file(NEWER)
    const message = await refusal(loadRunInput({filename: path, strict: true}))
    expect(message.split('\n')).toContain(
      `  ${path}: spec.containers[0].lifecycle.stopSignal is not known to podctl's Kubernetes version (it would be dropped)`,
    )
  })
})

describe('env fileKeyRef', () => {
  const withEnv = (ref: string, volume = 'emptyDir: {}') => `apiVersion: v1
kind: Pod
metadata: {name: env-file}
spec:
  volumes:
  - name: config
    ${volume}
  initContainers:
  - name: setup
    image: busybox:1.36
    command: [sh, -c, 'echo DB_HOST=db.local > /data/config.env']
    volumeMounts: [{name: config, mountPath: /data}]
  containers:
  - name: app
    image: busybox:1.36
    env:
    - name: DB_HOST
      valueFrom:
        fileKeyRef: ${ref}
`

  it('reads volumeName, path, key and optional', async () => {
    const model = await pod(withEnv('{volumeName: config, path: config.env, key: DB_HOST}'))
    expect(model.containers[0].env).toEqual([
      {name: 'DB_HOST', value: '', valueFrom: {fileKeyRef: {volumeName: 'config', path: 'config.env', key: 'DB_HOST', optional: false}}},
    ])
  })

  it('refuses what the API server refuses', async () => {
    const where = 'pod.yaml: spec.containers[0].env[0].valueFrom.fileKeyRef'
    expect(await refusal(pod(withEnv('{volumeName: config, path: config.env, key: DB_HOST}', 'hostPath: {path: /tmp}')))).toBe(
      `${where}.volumeName "config" must name an emptyDir volume of the pod (spec.volumes)`,
    )
    expect(await refusal(pod(withEnv('{volumeName: other, path: config.env, key: DB_HOST}')))).toBe(
      `${where}.volumeName "other" must name an emptyDir volume of the pod (spec.volumes)`,
    )
    expect(await refusal(pod(withEnv('{volumeName: config, path: /data/config.env, key: DB_HOST}')))).toBe(
      `${where}.path "/data/config.env" must be a relative path (inside the volume)`,
    )
    expect(await refusal(pod(withEnv('{volumeName: config, path: ../config.env, key: DB_HOST}')))).toBe(
      `${where}.path "../config.env" must not contain '..'`,
    )
    expect(await refusal(pod(withEnv('{volumeName: config, path: config.env, key: "A=B"}')))).toBe(
      `${where}.key "A=B" is invalid: must consist of printable ASCII characters other than '=' and spaces`,
    )
    expect(await refusal(pod(withEnv('{volumeName: config, path: config.env}')))).toBe(`${where}.key is required`)
  })
})
