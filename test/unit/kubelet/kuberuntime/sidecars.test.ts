import {describe, expect, it} from 'vitest'

import {generateContainerConfig} from '../../../../src/lib/kubelet/kuberuntime/container-config.js'
import {computePhase, isPodReady, type PhaseInput} from '../../../../src/lib/kubelet/status/pod-phase.js'
import {initContainerNote, longRunningContainers} from '../../../../src/lib/kubelet/kuberuntime/sidecars.js'
import {sidecarIndexOf} from '../../../../src/lib/kube/labels.js'
import {parseDocuments} from '../../../../src/lib/manifest/load.js'
import {parsePod} from '../../../../src/lib/manifest/pod.js'

const UID = '11111111-2222-3333-4444-555555555555'

async function parse(text: string) {
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => UID})
}

async function failure(text: string): Promise<string> {
  try {
    await parse(text)
  } catch (error) {
    return (error as Error).message
  }

  throw new Error('the manifest was accepted')
}

const SIDECARS = `
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  restartPolicy: Never
  initContainers:
  - {name: proxy, image: busybox, restartPolicy: Always, readinessProbe: {exec: {command: ["true"]}}}
  - {name: setup, image: busybox}
  - {name: logger, image: busybox, restartPolicy: Always, startupProbe: {exec: {command: ["true"]}}}
  containers:
  - {name: app, image: busybox}
`

describe('sidecar init containers in the manifest', () => {
  it('accepts restartPolicy Always on an init container, into the model', async () => {
    const pod = await parse(SIDECARS)
    expect(pod.initContainers.map((container) => container.restartPolicy)).toEqual(['Always', undefined, 'Always'])
    expect(pod.containers[0]).not.toHaveProperty('restartPolicy')
  })

  it('refuses any other restartPolicy on an init container, as the API server does', async () => {
    const text = SIDECARS.replace('restartPolicy: Always, readinessProbe', 'restartPolicy: OnFailure, readinessProbe')
    expect(await failure(text)).toBe('pod.yaml: spec.initContainers[0].restartPolicy must be one of Always, not "OnFailure"')
  })

  it('refuses restartPolicy on an app container', async () => {
    const text = SIDECARS.replace('- {name: app, image: busybox}', '- {name: app, image: busybox, restartPolicy: Always}')
    expect(await failure(text)).toBe(
      'pod.yaml: spec.containers[0].restartPolicy may not be set for non-init containers; set the pod spec.restartPolicy instead',
    )
  })

  it('refuses probes and lifecycle hooks on an init container that runs to completion', async () => {
    const text = SIDECARS.replace(
      '{name: setup, image: busybox}',
      '{name: setup, image: busybox, livenessProbe: {exec: {command: ["true"]}}}',
    )
    expect(await failure(text)).toBe(
      'pod.yaml: spec.initContainers[1].livenessProbe may not be set for init containers without restartPolicy=Always',
    )
  })
})

describe('sidecars at run time', () => {
  it('waits for sidecars and app containers to run, sidecars with restartPolicy Always', async () => {
    const pod = await parse(SIDECARS)
    expect(longRunningContainers(pod).map(({container, type, restartPolicy}) => [container.name, type, restartPolicy])).toEqual([
      ['proxy', 'init', 'Always'],
      ['logger', 'init', 'Always'],
      ['app', 'app', 'Never'],
    ])
  })

  it('records a sidecar by its index in spec.initContainers, and nothing on other containers', async () => {
    const pod = await parse(SIDECARS)
    const annotations = (name: string, type: 'init' | 'app') => {
      const container = [...pod.initContainers, ...pod.containers].find((candidate) => candidate.name === name)!
      const options = {type, attempt: 0, imageRef: 'sha256:abc', volumePaths: new Map(), nodeMemoryBytes: 2 ** 30}
      return generateContainerConfig(pod, container, options).annotations ?? {}
    }

    expect(annotations('proxy', 'init')['io.podctl.sidecar']).toBe('0')
    expect(annotations('logger', 'init')['io.podctl.sidecar']).toBe('2')
    expect(annotations('setup', 'init')).not.toHaveProperty('io.podctl.sidecar')
    expect(annotations('app', 'app')).not.toHaveProperty('io.podctl.sidecar')
    expect(annotations('logger', 'init')['io.podctl.containerType']).toBe('init')
  })

  it('notes in the --dry-run plan that a sidecar is not waited on', async () => {
    const pod = await parse(SIDECARS)
    expect(initContainerNote(pod.initContainers[0])).toMatch(
      /^sidecar \(restartPolicy Always\): not waited on to complete; .* once it has started/,
    )
    expect(initContainerNote(pod.initContainers[2])).toContain('once its startupProbe succeeds')
    expect(initContainerNote(pod.initContainers[1])).toBe('then ContainerStatus until it exits 0 (restarts per restartPolicy)')
  })
})

describe('sidecar annotations', () => {
  it('reads only a whole number as a sidecar index', () => {
    expect(sidecarIndexOf({'io.podctl.sidecar': '3'})).toBe(3)
    expect(sidecarIndexOf({'io.podctl.sidecar': 'x'})).toBeUndefined()
    expect(sidecarIndexOf({})).toBeUndefined()
  })
})

describe('the pod phase with sidecars', () => {
  const input = (sidecar: 'Running' | 'Exited', app?: 'Running'): PhaseInput => ({
    restartPolicy: 'Never',
    sandboxReady: true,
    containers: [
      {name: 'logger', type: 'init', state: sidecar, exitCode: sidecar === 'Exited' ? 1 : null, sidecar: true},
      {name: 'setup', type: 'init', state: 'Exited', exitCode: 0},
      ...(app ? [{name: 'app', type: 'app' as const, state: app, exitCode: null}] : []),
    ],
  })

  it('a running sidecar is not pending initialization, and must run for the pod to be ready', () => {
    expect(computePhase(input('Running', 'Running'))).toBe('Running')
    expect(isPodReady('Running', input('Running', 'Running'))).toBe(true)
    expect(computePhase(input('Exited', 'Running'))).toBe('Running')
    expect(isPodReady('Running', input('Exited', 'Running'))).toBe(false)
  })

  it('a sidecar that exited before the app containers existed fails nothing: it will be restarted', () => {
    expect(computePhase(input('Exited'))).toBe('Pending')
    expect(computePhase(input('Running'))).toBe('Pending')
  })
})
