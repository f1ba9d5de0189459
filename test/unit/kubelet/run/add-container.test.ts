import {describe, expect, it} from 'vitest'

import {podFromSandbox, sandboxConfigOf} from '../../../../src/lib/kubelet/run/add-container.js'
import {postStartCommand} from '../../../../src/lib/kubelet/kuberuntime/container-ops.js'
import type {Container, PodSandbox, PodSandboxStatus} from '../../../../src/generated/runtime/v1/api.js'
import {pod} from '../../../support/pod-manifest.js'

const sandbox = {
  id: 'sb1',
  metadata: {name: 'web', namespace: 'shop', uid: 'u-1', attempt: 2},
  state: 'SANDBOX_READY',
  createdAt: '1',
  labels: {app: 'web', 'io.kubernetes.pod.name': 'web'},
  annotations: {'io.podctl.restartPolicy': 'OnFailure'},
  runtimeHandler: 'fast',
} as unknown as PodSandbox
const status = {
  ...sandbox,
  linux: {namespaces: {options: {network: 'NODE', pid: 'POD', ipc: 'POD', targetId: ''}}},
} as unknown as PodSandboxStatus
const neighbour = {annotations: {'io.kubernetes.pod.terminationGracePeriod': '45'}} as unknown as Container

describe('podFromSandbox', () => {
  it("takes the pod's identity, namespaces, restart policy and grace period from the runtime", async () => {
    const manifest = await pod()
    const container = manifest.containers[1]
    const model = podFromSandbox(sandbox, status, {source: 'x.yaml', volumes: [], container}, [neighbour])
    expect(model).toMatchObject({
      name: 'web',
      namespace: 'shop',
      uid: 'u-1',
      restartPolicy: 'OnFailure',
      terminationGracePeriodSeconds: 45,
      hostNetwork: true,
      hostPID: false,
      shareProcessNamespace: true,
      containers: [container],
    })
    // The input's pod wins for the grace period (the manifest says 15).
    expect(
      podFromSandbox(sandbox, status, {source: 'x', volumes: [], container, pod: manifest}, [neighbour]).terminationGracePeriodSeconds,
    ).toBe(15)
    expect(podFromSandbox(sandbox, undefined, {source: 'x', volumes: [], container}, []).terminationGracePeriodSeconds).toBeUndefined()
  })
})

describe('sandboxConfigOf', () => {
  it("uses the config containerd recorded (log directory, cgroup parent), else the kubelet's layout", () => {
    const info = {info: JSON.stringify({pid: 1, config: {log_directory: '/tmp/box', hostname: 'h', linux: {cgroup_parent: '/kubepods'}}})}
    expect(sandboxConfigOf(sandbox, status, info, '/var/log/pods')).toMatchObject({
      metadata: {name: 'web', namespace: 'shop', uid: 'u-1', attempt: 2},
      logDirectory: '/tmp/box',
      hostname: 'h',
      linux: {cgroupParent: '/kubepods', securityContext: {namespaceOptions: {network: 'NODE'}}},
    })
    // CRI-O: no recorded config, but its infra container's spec annotations name the log file and the cgroup parent.
    const crio = {
      info: JSON.stringify({
        image: 'pause',
        runtimeSpec: {
          annotations: {
            'io.kubernetes.cri-o.LogPath': '/tmp/crictl-logs/f00d.log',
            'io.kubernetes.cri-o.CgroupParent': '/kubepods/burstable/podu-1',
          },
        },
      }),
    }
    expect(sandboxConfigOf(sandbox, status, crio, '/var/log/pods')).toMatchObject({
      logDirectory: '/tmp/crictl-logs',
      linux: {cgroupParent: '/kubepods/burstable/podu-1'},
    })
    expect(sandboxConfigOf(sandbox, status, {info: 'not json'}, '/var/log/pods')).toMatchObject({
      logDirectory: '/var/log/pods/shop_web_u-1',
      linux: {cgroupParent: ''},
    })
  })
})

describe('postStartCommand', () => {
  it('reads the exec hook create recorded; anything else is none', () => {
    const hook = (text?: string) =>
      postStartCommand({annotations: text === undefined ? {} : {'io.kubernetes.container.postStartHandler': text}})
    expect(hook(JSON.stringify({exec: {command: ['sh', '-c', 'x']}}))).toEqual(['sh', '-c', 'x'])
    expect(hook()).toBeUndefined()
    expect(hook('{')).toBeUndefined()
    expect(hook(JSON.stringify({httpGet: {port: 80}}))).toBeUndefined()
  })
})
