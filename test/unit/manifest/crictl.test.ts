import {describe, expect, it} from 'vitest'

import {generateContainerConfig} from '../../../src/lib/kubelet/kuberuntime/container-config.js'
import {computePodActions} from '../../../src/lib/kubelet/kuberuntime/pod-actions.js'
import {generatePodSandboxConfig} from '../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {parseCrictlConfigs, parseCrictlContainerConfig, parseCrictlPodConfig} from '../../../src/lib/manifest/crictl.js'
import type {Json} from '../../../src/lib/manifest/fields.js'

// crictl's own examples (cri-tools docs/crictl.md), the image aside.
const POD_CONFIG = {
  metadata: {name: 'nginx-sandbox', namespace: 'default', attempt: 1, uid: 'hdishd83djaidwnduwk28bcsb'},
  log_directory: '/tmp',
  linux: {},
}
const CONTAINER_CONFIG = {metadata: {name: 'busybox'}, image: {image: 'busybox'}, command: ['top'], log_path: 'busybox.0.log', linux: {}}

const sandboxOf = (podConfig: object) => {
  const {pod} = parseCrictlPodConfig(podConfig as Json, 'pod.json', {newUid: () => 'u'})
  return generatePodSandboxConfig(pod, {attempt: pod.attempt ?? 0, logsRoot: '/logs', hostResolvConf: '', podDirRoot: '/pods'})
}

const containerOf = (podConfig: object, containerConfig: object) => {
  const pod = parseCrictlConfigs({
    podConfig: podConfig as Json,
    podSource: 'p',
    containerConfig: containerConfig as Json,
    containerSource: 'c',
  })
  const container = pod.containers[0]
  const attempt = computePodActions(pod, {sandboxes: [], containers: []}, {now: 0}).containersToStart[0].restartCount
  return generateContainerConfig(pod, container, {
    type: 'app',
    attempt,
    imageRef: 'sha256:x',
    volumePaths: new Map(),
    nodeMemoryBytes: 2 ** 30,
  })
}

const refusal = (podConfig: object, containerConfig: object = CONTAINER_CONFIG) => {
  try {
    parseCrictlConfigs({
      podConfig: podConfig as Json,
      podSource: 'pod.json',
      containerConfig: containerConfig as Json,
      containerSource: 'ctr.json',
    })
  } catch (error) {
    return (error as Error).message
  }

  return 'accepted'
}

describe('crictl pod config, as crictl sends it', () => {
  it("runs crictl's example pod config: attempt 1, log directory /tmp, no cgroup parent", () => {
    const config = sandboxOf(POD_CONFIG)
    expect(config.metadata).toEqual({name: 'nginx-sandbox', namespace: 'default', uid: 'hdishd83djaidwnduwk28bcsb', attempt: 1})
    expect(config.logDirectory).toBe('/tmp')
    expect(config.linux?.cgroupParent).toBe('')
    expect(config.linux?.sysctls).toEqual({})
    // Go's zero value: every namespace POD.
    expect(config.linux?.securityContext?.namespaceOptions).toEqual({network: 'POD', pid: 'POD', ipc: 'POD'})
  })

  it('passes linux.cgroup_parent to LinuxPodSandboxConfig.cgroup_parent', () => {
    expect(sandboxOf({...POD_CONFIG, linux: {cgroup_parent: '/podctl-test'}}).linux?.cgroupParent).toBe('/podctl-test')
    expect(sandboxOf({...POD_CONFIG, linux: {cgroup_parent: '/test.slice'}}).linux?.cgroupParent).toBe('/test.slice')
    expect(refusal({...POD_CONFIG, linux: {cgroup_parent: '/a/../b'}})).toBe(
      'pod.json: linux.cgroup_parent "/a/../b" must not contain ".."',
    )
    expect(refusal({...POD_CONFIG, linux: {cgroup_parent: 3}})).toMatch(/^pod\.json: linux\.cgroup_parent must be a string/)
  })

  it('passes linux.sysctls to the sandbox config', () => {
    const config = sandboxOf({
      ...POD_CONFIG,
      linux: {sysctls: {'net.ipv4.ip_unprivileged_port_start': '80', 'kernel.shm_rmid_forced': '1'}},
    })
    expect(config.linux?.sysctls).toEqual({'net.ipv4.ip_unprivileged_port_start': '80', 'kernel.shm_rmid_forced': '1'})
    expect(refusal({...POD_CONFIG, linux: {sysctls: {'Net..bad': '1'}}})).toBe(
      'pod.json: linux.sysctls "Net..bad" is not a valid sysctl name (e.g. net.ipv4.ip_unprivileged_port_start)',
    )
    expect(refusal({...POD_CONFIG, linux: {sysctls: ['net.x=1']}})).toMatch(/^pod\.json: linux\.sysctls /)
  })

  it('maps namespace_options to host namespaces where the pod spec says them, numbers or names', () => {
    const options = (namespaceOptions: object) => {
      const podConfig = {...POD_CONFIG, linux: {security_context: {namespace_options: namespaceOptions}}}
      const {pod} = parseCrictlPodConfig(podConfig as Json, 'pod.json')
      return {pod, sent: sandboxOf(podConfig).linux?.securityContext?.namespaceOptions}
    }

    const host = options({network: 2, pid: 2, ipc: 2})
    expect(host.pod).toMatchObject({hostNetwork: true, hostPID: true, hostIPC: true, shareProcessNamespace: false})
    expect(host.pod.namespaceOptions).toBeUndefined()
    expect(host.sent).toEqual({network: 'NODE', pid: 'NODE', ipc: 'NODE'})
    const perContainer = options({pid: 'CONTAINER'})
    expect(perContainer.pod).toMatchObject({hostNetwork: false, hostPID: false, shareProcessNamespace: false})
    expect(perContainer.sent).toEqual({network: 'POD', pid: 'CONTAINER', ipc: 'POD'})
    expect(options({}).pod.shareProcessNamespace).toBe(true)
  })

  it('passes modes the pod spec cannot say through exactly (CONTAINER network/IPC, TARGET with target_id)', () => {
    const podConfig = {...POD_CONFIG, linux: {security_context: {namespace_options: {network: 1, pid: 3, ipc: 1, target_id: 'abc'}}}}
    expect(sandboxOf(podConfig).linux?.securityContext?.namespaceOptions).toEqual({
      network: 'CONTAINER',
      pid: 'TARGET',
      ipc: 'CONTAINER',
      targetId: 'abc',
    })
    expect(refusal({...POD_CONFIG, linux: {security_context: {namespace_options: {pid: 4}}}})).toBe(
      'pod.json: linux.security_context.namespace_options.pid must be one of POD (0), CONTAINER (1), NODE (2), TARGET (3), not 4',
    )
  })

  it("ignores linux.namespaces as crictl's Go decoder does (not a LinuxPodSandboxConfig field)", () => {
    const config = sandboxOf({...POD_CONFIG, linux: {namespaces: {options: {network: 2}}}})
    expect(config.linux?.securityContext?.namespaceOptions).toEqual({network: 'POD', pid: 'POD', ipc: 'POD'})
  })

  it('keeps log_directory, hostname, dns_config, port_mappings, labels and annotations', () => {
    const config = sandboxOf({
      ...POD_CONFIG,
      hostname: 'box',
      dns_config: {servers: ['10.0.0.10'], searches: ['example.com'], options: ['ndots:2']},
      port_mappings: [{protocol: 1, container_port: 53, host_port: 5353}],
      labels: {app: 'nginx'},
      annotations: {note: 'x'},
    })
    expect(config).toMatchObject({
      hostname: 'box',
      logDirectory: '/tmp',
      dnsConfig: {servers: ['10.0.0.10'], searches: ['example.com'], options: ['ndots:2']},
      labels: {app: 'nginx'},
      annotations: {note: 'x'},
    })
  })
})

describe('crictl container config, as crictl sends it', () => {
  it("runs crictl's example container config: attempt 0, no tty, the pod's namespaces", () => {
    const config = containerOf(POD_CONFIG, CONTAINER_CONFIG)
    expect(config.metadata).toEqual({name: 'busybox', attempt: 0})
    expect(config).toMatchObject({command: ['top'], logPath: 'busybox.0.log', stdin: false, stdinOnce: false, tty: false})
    expect(config.linux?.securityContext?.namespaceOptions).toEqual({network: 'POD', pid: 'POD', ipc: 'POD'})
  })

  it('passes stdin, stdin_once and tty to CreateContainer', () => {
    const config = containerOf(POD_CONFIG, {...CONTAINER_CONFIG, stdin: true, stdin_once: true, tty: true})
    expect(config).toMatchObject({stdin: true, stdinOnce: true, tty: true})
    expect(refusal(POD_CONFIG, {...CONTAINER_CONFIG, tty: 'yes'})).toMatch(/^ctr\.json: tty must be/)
  })

  it('keeps metadata.attempt as the first restart count', () => {
    const config = containerOf(POD_CONFIG, {...CONTAINER_CONFIG, metadata: {name: 'busybox', attempt: 4}})
    expect(config.metadata).toEqual({name: 'busybox', attempt: 4})
    expect(parseCrictlContainerConfig({...CONTAINER_CONFIG, metadata: {name: 'b', attempt: 2}}, 'c').container.attempt).toBe(2)
    expect(refusal(POD_CONFIG, {...CONTAINER_CONFIG, metadata: {name: 'b', attempt: -1}})).toMatch(/^ctr\.json: metadata\.attempt /)
  })

  it("passes the container's own namespace_options exactly, else follows the pod", () => {
    const own = {...CONTAINER_CONFIG, linux: {security_context: {namespace_options: {pid: 3, target_id: 'abc'}}}}
    expect(containerOf(POD_CONFIG, own).linux?.securityContext?.namespaceOptions).toEqual({
      network: 'POD',
      pid: 'TARGET',
      ipc: 'POD',
      targetId: 'abc',
    })
    const hostPod = {...POD_CONFIG, linux: {security_context: {namespace_options: {network: 2, pid: 1}}}}
    expect(containerOf(hostPod, CONTAINER_CONFIG).linux?.securityContext?.namespaceOptions).toEqual({
      network: 'NODE',
      pid: 'CONTAINER',
      ipc: 'POD',
    })
  })
})
