import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {discardEvents} from '../../../../src/lib/kube/events.js'
import {POD_LOGS_MARK, podLogDirectoryOwnership} from '../../../../src/lib/kubelet/core/owned-logs.js'
import {
  createPodSandbox,
  generatePodSandboxConfig,
  parseResolvConf,
  podDnsConfig,
  podHostname,
} from '../../../../src/lib/kubelet/kuberuntime/sandbox.js'
import {FakePodRuntime} from '../../../support/fake-pod-runtime.js'
import {FULL, HOST_RESOLV, pod, POD_DIRS, UID} from '../../../support/pod-manifest.js'

describe('generatePodSandboxConfig', () => {
  it('builds the kubelet PodSandboxConfig with the contract labels and annotations', async () => {
    const config = generatePodSandboxConfig(await pod(), {
      attempt: 2,
      logsRoot: '/var/log/pods/',
      hostResolvConf: HOST_RESOLV,
      podDirRoot: POD_DIRS,
    })
    expect(config).toEqual({
      metadata: {name: 'web', uid: UID, namespace: 'shop', attempt: 2},
      hostname: 'web-0',
      logDirectory: `/var/log/pods/shop_web_${UID}`,
      dnsConfig: {
        servers: ['10.0.0.2', '10.0.0.3', '1.1.1.1'],
        searches: ['corp.example', 'lab.example', 'svc.example'],
        options: ['ndots:5', 'timeout:2', 'edns0'],
      },
      portMappings: [
        {protocol: 'TCP', containerPort: 8080, hostPort: 18_080, hostIp: ''},
        {protocol: 'UDP', containerPort: 9090, hostPort: 0, hostIp: ''},
      ],
      labels: {app: 'web', 'io.kubernetes.pod.name': 'web', 'io.kubernetes.pod.namespace': 'shop', 'io.kubernetes.pod.uid': UID},
      annotations: {team: 'checkout', 'io.podctl.restartPolicy': 'OnFailure', 'io.podctl.podDirectory': `${POD_DIRS}/${UID}`},
      linux: {
        cgroupParent: '',
        securityContext: {
          namespaceOptions: {network: 'POD', pid: 'CONTAINER', ipc: 'POD'},
          privileged: true,
          seccomp: {profileType: 'RuntimeDefault'},
        },
        sysctls: {},
        overhead: {},
        // Pod totals: max(init 1 CPU / 256Mi, app 500m + sidecar 0) → the init container's.
        resources: {cpuPeriod: '100000', cpuQuota: '100000', cpuShares: '1024', memoryLimitInBytes: String(256 * 1024 * 1024)},
      },
    })
  })

  it('uses host namespaces and no hostname for host pods, and shares PID on request', async () => {
    const host = await pod(`
apiVersion: v1
kind: Pod
metadata: {name: node-agent}
spec:
  hostNetwork: true
  hostPID: true
  hostIPC: true
  containers: [{name: a, image: busybox}]
`)
    const config = generatePodSandboxConfig(host, {attempt: 0, logsRoot: '/logs', hostResolvConf: '', podDirRoot: POD_DIRS})
    expect(config.hostname).toBe('')
    expect(config.linux?.securityContext?.namespaceOptions).toEqual({network: 'NODE', pid: 'NODE', ipc: 'NODE'})
    const shared = await pod(FULL.replace('  hostname: web-0', '  hostname: web-0\n  shareProcessNamespace: true'))
    expect(
      generatePodSandboxConfig(shared, {attempt: 0, logsRoot: '/logs', hostResolvConf: '', podDirRoot: POD_DIRS}).linux?.securityContext
        ?.namespaceOptions?.pid,
    ).toBe('POD')
  })

  it('follows the kubelet DNS policies and hostname rule', async () => {
    const base = await pod()
    expect(podDnsConfig({...base, dnsConfig: undefined}, HOST_RESOLV)).toEqual(parseResolvConf(HOST_RESOLV))
    expect(podDnsConfig({...base, dnsPolicy: 'None'}, HOST_RESOLV)).toEqual({
      servers: ['1.1.1.1', '10.0.0.2'],
      searches: ['svc.example'],
      options: ['ndots:5', 'edns0'],
    })
    const long = 'a'.repeat(62) + '-b'
    expect(podHostname({...base, hostname: undefined, name: long})).toBe('a'.repeat(62))
    expect(parseResolvConf('nameserver 1.2.3.4 # x\nsearch a\nsearch b c\n; comment\n')).toEqual({
      servers: ['1.2.3.4'],
      searches: ['b', 'c'],
      options: [],
    })
  })
})

describe("createPodSandbox and the pod's log directory", () => {
  const work = mkdtempSync(join(tmpdir(), 'podctl-sandbox-logs-'))
  let fake: FakePodRuntime
  beforeAll(async () => {
    fake = await new FakePodRuntime().start()
  })
  afterAll(async () => {
    await fake.close()
    rmSync(work, {recursive: true, force: true})
  })

  const create = async (logsRoot: string) => {
    const manifest = await pod()
    const config = generatePodSandboxConfig(manifest, {attempt: 0, logsRoot, hostResolvConf: HOST_RESOLV, podDirRoot: POD_DIRS})
    await createPodSandbox(fake.client, manifest, config, {runtimeHandler: '', events: discardEvents})
    return config.logDirectory!
  }

  it('marks the directory it makes for this pod and runtime, which garbage collection reads back', async () => {
    const directory = await create(join(work, 'fresh'))
    expect(JSON.parse(readFileSync(join(directory, POD_LOGS_MARK), 'utf8'))).toEqual({
      madeBy: 'podctl',
      uid: UID,
      runtimeEndpoint: fake.client.runtimeEndpoint,
    })
    expect(await podLogDirectoryOwnership(directory, UID, fake.client.runtimeEndpoint)).toMatchObject({ours: true})
  })

  it('leaves unmarked a directory that was already there (it may be another tool’s)', async () => {
    const logsRoot = join(work, 'existing')
    const manifest = await pod()
    mkdirSync(join(logsRoot, `${manifest.namespace}_${manifest.name}_${UID}`), {recursive: true})
    const directory = await create(logsRoot)
    expect(existsSync(join(directory, POD_LOGS_MARK))).toBe(false)
  })
})
