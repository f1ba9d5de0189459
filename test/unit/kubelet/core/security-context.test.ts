import {describe, expect, it} from 'vitest'

import {admitPods, checkAdmission, podRequests} from '../../../../src/lib/kubelet/lifecycle/admission.js'
import {generateContainerConfig} from '../../../../src/lib/kubelet/kuberuntime/container-config.js'
import {verifyRunAsNonRoot} from '../../../../src/lib/kubelet/kuberuntime/container.js'
import {managedHostsFile} from '../../../../src/lib/kubelet/volumes/pod-dirs.js'
import {generatePodSandboxConfig} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {effectiveSecurityContext} from '../../../../src/lib/kubelet/core/security-context.js'
import {PodFailedError} from '../../../../src/lib/kubelet/core/reasons.js'
import {podQosClass} from '../../../../src/lib/kubelet/core/resources.js'
import {GiB, pod} from '../../../support/pod-manifest.js'

const manifest = (spec: string, containers: string) => `
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: shop}
spec:
${spec}
  containers:
${containers}
`
const SECURE = manifest(
  `  hostname: busybox-1
  subdomain: sub
  setHostnameAsFQDN: true
  securityContext:
    runAsUser: 1000
    runAsGroup: 3000
    runAsNonRoot: true
    fsGroup: 2000
    supplementalGroups: [4000]
    supplementalGroupsPolicy: Strict
    sysctls: [{name: kernel.shm_rmid_forced, value: "1"}, {name: net.ipv4.ip_unprivileged_port_start, value: "80"}]
    seccompProfile: {type: RuntimeDefault}
    seLinuxOptions: {level: "s0:c123,c456"}`,
  `  - name: app
    image: busybox
    securityContext: {runAsUser: 2000, allowPrivilegeEscalation: false, seccompProfile: {type: Localhost, localhostProfile: my.json}}
  - name: side
    image: busybox
    stdin: true
    tty: true
    securityContext: {appArmorProfile: {type: Unconfined}, procMount: Default, readOnlyRootFilesystem: true}`,
)

const options = {type: 'app' as const, attempt: 0, imageRef: 'sha256:x', volumePaths: new Map(), nodeMemoryBytes: 8 * GiB}

describe('the kubelet security context', () => {
  it('merges container fields over the pod fields (DetermineEffectiveSecurityContext)', async () => {
    const model = await pod(SECURE)
    expect(effectiveSecurityContext(model, model.containers[0])).toEqual({
      runAsUser: 2000,
      runAsGroup: 3000,
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      seccompProfile: {type: 'Localhost', localhostProfile: 'my.json'},
      seLinuxOptions: {level: 's0:c123,c456'},
    })
  })

  it('builds each container security context as kuberuntime does', async () => {
    const model = await pod(SECURE)
    const app = generateContainerConfig(model, model.containers[0], {...options, imageUser: {uid: 0}}).linux?.securityContext
    expect(app).toMatchObject({
      runAsUser: {value: '2000'},
      runAsGroup: {value: '3000'},
      supplementalGroups: ['2000', '4000'],
      supplementalGroupsPolicy: 'Strict',
      noNewPrivs: true,
      seccomp: {profileType: 'Localhost', localhostRef: '/var/lib/kubelet/seccomp/my.json'},
      selinuxOptions: {user: '', role: '', type: '', level: 's0:c123,c456'},
    })
    const side = generateContainerConfig(model, model.containers[1], {...options, imageUser: {uid: 0}})
    expect(side).toMatchObject({stdin: true, stdinOnce: false, tty: true})
    expect(side.linux?.securityContext).toMatchObject({
      runAsUser: {value: '1000'},
      readonlyRootfs: true,
      seccomp: {profileType: 'RuntimeDefault'},
      apparmor: {profileType: 'Unconfined'},
      apparmorProfile: 'unconfined',
    })
  })

  it('gives the sandbox the pod user, groups, SELinux options, sysctls and the FQDN hostname', async () => {
    const config = generatePodSandboxConfig(await pod(SECURE), {attempt: 0, logsRoot: '/l', hostResolvConf: '', podDirRoot: '/p'})
    expect(config.hostname).toBe('busybox-1.sub.shop.svc.cluster.local')
    expect(config.linux?.sysctls).toEqual({'kernel.shm_rmid_forced': '1', 'net.ipv4.ip_unprivileged_port_start': '80'})
    expect(config.linux?.securityContext).toMatchObject({
      runAsUser: {value: '1000'},
      runAsGroup: {value: '3000'},
      supplementalGroups: ['2000', '4000'],
      supplementalGroupsPolicy: 'Strict',
      selinuxOptions: {user: '', role: '', type: '', level: 's0:c123,c456'},
      seccomp: {profileType: 'RuntimeDefault'},
    })
  })

  it('verifies runAsNonRoot over the merged context, with the kubelet message', async () => {
    const model = await pod(
      manifest('  securityContext: {runAsNonRoot: true}', '  - {name: app, image: busybox, securityContext: {runAsUser: 0}}'),
    )
    expect(verifyRunAsNonRoot(model, model.containers[0], {})).toMatch(/^container's runAsUser breaks non-root policy \(pod: "web_shop\(/)
    const image = await pod(manifest('  securityContext: {runAsNonRoot: true}', '  - {name: app, image: busybox}'))
    expect(verifyRunAsNonRoot(image, image.containers[0], {username: 'nginx'})).toMatch(
      /^container has runAsNonRoot and image has non-numeric user \(nginx\), cannot verify user is non-root/,
    )
    expect(verifyRunAsNonRoot(image, image.containers[0], {})).toBeUndefined()
  })

  it('writes hostAliases and the subdomain FQDN into the managed /etc/hosts', () => {
    const text = managedHostsFile(['10.1.2.3'], 'busybox-1', {
      domain: 'sub.shop.svc.cluster.local',
      hostAliases: [{ip: '127.0.0.1', hostnames: ['foo.local', 'bar.local']}],
    })
    expect(text.split('\n').slice(7)).toEqual([
      '10.1.2.3\tbusybox-1.sub.shop.svc.cluster.local\tbusybox-1',
      '',
      '# Entries added by HostAliases.',
      '127.0.0.1\tfoo.local\tbar.local',
      '',
    ])
  })
})

describe('pod-level resources', () => {
  it('size the sandbox cgroup and decide the QoS class', async () => {
    const model = await pod(manifest('  resources: {limits: {cpu: 500m, memory: 128Mi}}', '  - {name: a, image: busybox}'))
    expect(podQosClass(model)).toBe('Guaranteed')
    const config = generatePodSandboxConfig(model, {attempt: 0, logsRoot: '/l', hostResolvConf: '', podDirRoot: '/p'})
    expect(config.linux?.resources).toMatchObject({cpuQuota: '50000', cpuShares: '512', memoryLimitInBytes: String(128 * 1024 * 1024)})
    const burstable = await pod(manifest('  resources: {requests: {cpu: 500m}}', '  - {name: a, image: busybox}'))
    expect(podQosClass(burstable)).toBe('Burstable')
  })
})

describe('admission (OutOfcpu / OutOfmemory)', () => {
  const sized = (spec: string, containers: string) => pod(manifest(spec, containers))

  it('counts max(sum of app containers, largest init container), pod-level resources and overhead', async () => {
    const model = await sized(
      `  overhead: {cpu: 100m, memory: 10Mi}
  initContainers:
  - {name: init, image: busybox, resources: {requests: {cpu: "2", memory: 10Mi}}}`,
      `  - {name: a, image: busybox, resources: {requests: {cpu: 500m, memory: 100Mi}}}
  - {name: b, image: busybox, resources: {limits: {cpu: 500m, memory: 100Mi}}}`,
    )
    expect(podRequests(model)).toEqual({cpuMilli: 2100n, memoryBytes: 210n * 1024n * 1024n})
    const podLevel = await sized('  resources: {requests: {memory: 1Gi}}', '  - {name: a, image: busybox}')
    expect(podRequests(podLevel)).toEqual({cpuMilli: 0n, memoryBytes: BigInt(GiB)})
  })

  it("refuses a pod beyond the node's memory with the kubelet's reason and message, counting the pods before it", async () => {
    const big = await sized('', '  - {name: a, image: busybox, resources: {requests: {memory: 3Gi}}}')
    expect(() => checkAdmission([big], {cpus: 2, memoryBytes: 2 * GiB})).toThrow(PodFailedError)
    expect(() => checkAdmission([big], {cpus: 2, memoryBytes: 2 * GiB})).toThrow(
      `pod web_shop: OutOfmemory: Pod was rejected: Node didn't have enough resource: memory, requested: ${3 * GiB}, used: 0, ` +
        `capacity: ${2 * GiB} (--skip-admission runs it anyway)`,
    )
    const [first, second] = admitPods([big, big], {cpus: 2, memoryBytes: 4 * GiB})
    expect(first.admitted).toBe(true)
    expect(second).toMatchObject({admitted: false, reason: 'OutOfmemory'})
    const cpu = await sized('', '  - {name: a, image: busybox, resources: {requests: {cpu: "3"}}}')
    expect(admitPods([cpu], {cpus: 2, memoryBytes: GiB})[0].message).toBe(
      "Pod was rejected: Node didn't have enough resource: cpu, requested: 3000, used: 0, capacity: 2000",
    )
  })
})
