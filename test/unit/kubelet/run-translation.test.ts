import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {parseDocuments} from '../../../src/lib/manifest/load.js'
import type {PodModel} from '../../../src/lib/manifest/model.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'
import {expandReferences} from '../../../src/lib/kube/expansion.js'
import {restartCountFromLogs, verifyRunAsNonRoot} from '../../../src/lib/kubelet/container.js'
import {DEFAULT_MASKED_PATHS, DEFAULT_READONLY_PATHS, generateContainerConfig} from '../../../src/lib/kubelet/container-config.js'
import {checkHostPath, managedHostsFile, volumeHostPaths} from '../../../src/lib/kubelet/pod-dirs.js'
import {containerOomScoreAdj, podQosClass, sandboxResources} from '../../../src/lib/kubelet/resources.js'
import {BackOff, CRASH_BACKOFF_INITIAL_MS, CRASH_BACKOFF_MAX_MS} from '../../../src/lib/kube/backoff.js'
import {containerHash} from '../../../src/lib/kube/labels.js'
import {planPodRun, REDACTED, redactAuth} from '../../../src/lib/kubelet/run-plan.js'
import {generatePodSandboxConfig, parseResolvConf, podDnsConfig, podHostname} from '../../../src/lib/kubelet/sandbox.js'
import {eventAge, EventTimeline} from '../../../src/lib/output/timeline.js'

const UID = '0b9c2f4e-7d1a-4c3b-9e8f-112233445566'
const GiB = 1024 ** 3
const HOST_RESOLV = '# generated\nnameserver 10.0.0.2\nnameserver 10.0.0.3\nsearch corp.example lab.example\noptions ndots:1 timeout:2\n'

const FULL = `
apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  uid: ${UID}
  labels: {app: web, io.kubernetes.pod.name: spoofed}
  annotations: {team: checkout}
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 15
  hostname: web-0
  dnsConfig:
    nameservers: [1.1.1.1, 10.0.0.2]
    searches: [svc.example]
    options: [{name: ndots, value: "5"}, {name: edns0}]
  runtimeClassName: test-handler
  volumes:
  - {name: cache, emptyDir: {}}
  - {name: config, hostPath: {path: /etc/web, type: DirectoryOrCreate}}
  initContainers:
  - name: migrate
    image: localhost:5000/app:1
    command: [sh, -c, "echo migrate"]
    resources: {limits: {cpu: "1", memory: 256Mi}}
  containers:
  - name: app
    image: localhost:5000/app:1
    command: [/bin/server]
    args: [--port, $(PORT), --greeting, "$(GREETING)", "$$(PORT)", $(MISSING)]
    workingDir: /srv
    env:
    - {name: PORT, value: "8080"}
    - {name: GREETING, value: "hello on $(PORT)"}
    ports:
    - {name: http, containerPort: 8080, hostPort: 18080}
    - {containerPort: 9090, protocol: UDP}
    resources:
      limits: {cpu: 500m, memory: 128Mi}
    securityContext:
      runAsUser: 1000
      runAsGroup: 3000
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      capabilities: {add: [NET_BIND_SERVICE], drop: [ALL]}
    lifecycle:
      postStart: {exec: {command: [sh, -c, "echo started"]}}
      preStop: {exec: {command: [sh, -c, "sleep 1"]}}
    volumeMounts:
    - {name: cache, mountPath: /cache}
    - {name: config, mountPath: /etc/web, readOnly: true}
  - name: sidecar
    image: busybox
    securityContext: {privileged: true}
`

async function pod(text = FULL): Promise<PodModel> {
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => UID})
}

const POD_DIRS = '/var/lib/podctl/pods'

describe('generatePodSandboxConfig', () => {
  it('builds the kubelet PodSandboxConfig with the contract labels and annotations', async () => {
    const config = generatePodSandboxConfig(await pod(), {attempt: 2, logsRoot: '/var/log/pods/', hostResolvConf: HOST_RESOLV, podDirRoot: POD_DIRS})
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
        {protocol: 'TCP', containerPort: 8080, hostPort: 18080, hostIp: ''},
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
    expect(generatePodSandboxConfig(shared, {attempt: 0, logsRoot: '/logs', hostResolvConf: '', podDirRoot: POD_DIRS}).linux?.securityContext?.namespaceOptions?.pid).toBe('POD')
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
    expect(parseResolvConf('nameserver 1.2.3.4 # x\nsearch a\nsearch b c\n; comment\n')).toEqual({servers: ['1.2.3.4'], searches: ['b', 'c'], options: []})
  })
})

describe('generateContainerConfig', () => {
  it('builds the kubelet ContainerConfig: labels, annotations, log path, mounts, resources, security', async () => {
    const model = await pod()
    const app = model.containers[0]
    const config = generateContainerConfig(model, app, {
      type: 'app',
      attempt: 3,
      imageRef: 'sha256:abc',
      imageUser: {uid: 0},
      volumePaths: volumeHostPaths(model, POD_DIRS),
      etcHostsPath: `${POD_DIRS}/${UID}/etc-hosts`,
      terminationMessageFile: `${POD_DIRS}/${UID}/containers/app/deadbeef`,
      nodeMemoryBytes: 8 * GiB,
    })
    expect(config).toEqual({
      metadata: {name: 'app', attempt: 3},
      image: {image: 'sha256:abc', userSpecifiedImage: 'localhost:5000/app:1'},
      command: ['/bin/server'],
      args: ['--port', '8080', '--greeting', 'hello on 8080', '$(PORT)', '$(MISSING)'],
      workingDir: '/srv',
      labels: {
        'io.kubernetes.pod.name': 'web',
        'io.kubernetes.pod.namespace': 'shop',
        'io.kubernetes.pod.uid': UID,
        'io.kubernetes.container.name': 'app',
      },
      annotations: {
        'io.kubernetes.container.hash': containerHash(app),
        'io.kubernetes.container.restartCount': '3',
        'io.kubernetes.container.terminationMessagePath': '/dev/termination-log',
        'io.kubernetes.container.terminationMessagePolicy': 'File',
        'io.kubernetes.pod.terminationGracePeriod': '15',
        'io.kubernetes.container.preStopHandler': '{"exec":{"command":["sh","-c","sleep 1"]}}',
        'io.kubernetes.container.ports': '[{"name":"http","hostPort":18080,"containerPort":8080,"protocol":"TCP"},{"containerPort":9090,"protocol":"UDP"}]',
        'io.podctl.containerType': 'app',
      },
      devices: [],
      CDIDevices: [],
      mounts: [
        {containerPath: '/cache', hostPath: `${POD_DIRS}/${UID}/volumes/kubernetes.io~empty-dir/cache`, readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE'},
        {containerPath: '/etc/web', hostPath: '/etc/web', readonly: true, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE'},
        {containerPath: '/etc/hosts', hostPath: `${POD_DIRS}/${UID}/etc-hosts`, readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE'},
        {containerPath: '/dev/termination-log', hostPath: `${POD_DIRS}/${UID}/containers/app/deadbeef`, readonly: false, selinuxRelabel: false, propagation: 'PROPAGATION_PRIVATE'},
      ],
      logPath: 'app/3.log',
      stdin: false,
      stdinOnce: false,
      tty: false,
      linux: {
        resources: {
          cpuPeriod: '100000',
          cpuQuota: '50000',
          cpuShares: '512',
          memoryLimitInBytes: '134217728',
          // Burstable: 1000 - 1000 × 128Mi / 8Gi = 985 (integer division).
          oomScoreAdj: '985',
        },
        securityContext: {
          capabilities: {addCapabilities: ['NET_BIND_SERVICE'], dropCapabilities: ['ALL']},
          privileged: false,
          namespaceOptions: {network: 'POD', pid: 'CONTAINER', ipc: 'POD'},
          runAsUser: {value: '1000'},
          runAsGroup: {value: '3000'},
          runAsUsername: '',
          readonlyRootfs: true,
          noNewPrivs: true,
          maskedPaths: DEFAULT_MASKED_PATHS,
          readonlyPaths: DEFAULT_READONLY_PATHS,
          seccomp: {profileType: 'Unconfined'},
        },
      },
      envs: [
        {key: 'PORT', value: Buffer.from('8080')},
        {key: 'GREETING', value: Buffer.from('hello on 8080')},
      ],
    })
  })

  it('takes the user from the image when the container sets none, and leaves optional annotations out', async () => {
    const model = await pod()
    const sidecar = model.containers[1]
    const config = generateContainerConfig(model, sidecar, {
      type: 'app',
      attempt: 0,
      imageRef: 'sha256:def',
      imageUser: {username: 'nobody'},
      volumePaths: new Map(),
      nodeMemoryBytes: 8 * GiB,
    })
    expect(config.linux?.securityContext?.runAsUser).toBeUndefined()
    expect(config.linux?.securityContext?.runAsUsername).toBe('nobody')
    expect(config.linux?.securityContext?.privileged).toBe(true)
    expect(config.annotations).not.toHaveProperty('io.kubernetes.container.preStopHandler')
    expect(config.annotations).not.toHaveProperty('io.kubernetes.container.ports')
    expect(config.mounts).toEqual([])
    expect(config.logPath).toBe('sidecar/0.log')
    // No limits → shares 2, and Burstable (the pod has limits elsewhere) with no memory request → 999.
    expect(config.linux?.resources).toEqual({cpuPeriod: '100000', cpuQuota: '0', cpuShares: '2', memoryLimitInBytes: '0', oomScoreAdj: '999'})
    const withUid = generateContainerConfig(model, sidecar, {type: 'app', attempt: 0, imageRef: 'x', imageUser: {uid: 65534}, volumePaths: new Map(), nodeMemoryBytes: GiB})
    expect(withUid.linux?.securityContext?.runAsUser).toEqual({value: '65534'})
  })

  it('keeps the hash stable and sensitive to the spec', async () => {
    const model = await pod()
    expect(containerHash(model.containers[0])).toBe(containerHash((await pod()).containers[0]))
    expect(containerHash(model.containers[0])).not.toBe(containerHash({...model.containers[0], args: []}))
    expect(containerHash(model.containers[0])).toMatch(/^[0-9a-f]+$/)
  })

  it('does not mount the managed /etc/hosts over a volume mounted there', async () => {
    const model = await pod(FULL.replace('mountPath: /cache', 'mountPath: /etc/hosts'))
    const config = generateContainerConfig(model, model.containers[0], {
      type: 'app',
      attempt: 0,
      imageRef: 'x',
      volumePaths: volumeHostPaths(model, POD_DIRS),
      etcHostsPath: '/p/etc-hosts',
      nodeMemoryBytes: GiB,
    })
    expect(config.mounts?.filter((mount) => mount?.containerPath === '/etc/hosts').map((mount) => mount?.hostPath)).toEqual([
      `${POD_DIRS}/${UID}/volumes/kubernetes.io~empty-dir/cache`,
    ])
  })
})

describe('QoS and OOM score (pkg/kubelet/qos)', () => {
  const container = (limits: {cpu?: string; memory?: string}, requests: {cpu?: string; memory?: string} = {}) => ({
    name: 'c',
    image: 'busybox',
    command: [],
    args: [],
    env: [],
    ports: [],
    resources: {limits, requests},
    lifecycle: {},
    volumeMounts: [],
    terminationMessagePath: '/dev/termination-log',
    terminationMessagePolicy: 'File' as const,
  })

  it('classifies pods and scores their containers', async () => {
    const base = await pod()
    const guaranteed = {...base, initContainers: [], containers: [container({cpu: '1', memory: '1Gi'})]}
    const bestEffort = {...base, initContainers: [], containers: [container({})]}
    const burstable = {...base, initContainers: [], containers: [container({memory: '1Gi'}, {memory: '512Mi'})]}
    expect(podQosClass(guaranteed)).toBe('Guaranteed')
    expect(containerOomScoreAdj(guaranteed, guaranteed.containers[0], 8 * GiB)).toBe(-997)
    expect(podQosClass(bestEffort)).toBe('BestEffort')
    expect(containerOomScoreAdj(bestEffort, bestEffort.containers[0], 8 * GiB)).toBe(1000)
    expect(podQosClass(burstable)).toBe('Burstable')
    expect(containerOomScoreAdj(burstable, burstable.containers[0], 8 * GiB)).toBe(938)
    expect(containerOomScoreAdj(burstable, burstable.containers[0], 512 * 1024 * 1024)).toBe(3)
    expect(sandboxResources(guaranteed)).toEqual({cpuPeriod: '100000', cpuQuota: '100000', cpuShares: '1024', memoryLimitInBytes: String(GiB)})
  })
})

describe('runAsNonRoot (verifyRunAsNonRoot)', () => {
  it('refuses root, allows a numeric non-root user, and cannot verify a named one', async () => {
    const model = await pod()
    const c = {...model.containers[1], securityContext: {runAsNonRoot: true}}
    expect(verifyRunAsNonRoot(model, c, {uid: 0})).toBe(`container has runAsNonRoot and image will run as root (pod: "web_shop(${UID})", container: sidecar)`)
    expect(verifyRunAsNonRoot(model, c, {uid: 1000})).toBeUndefined()
    expect(verifyRunAsNonRoot(model, c, {username: 'app'})).toMatch(/image has non-numeric user \(app\), cannot verify user is non-root/)
    expect(verifyRunAsNonRoot(model, {...c, securityContext: {runAsNonRoot: true, runAsUser: 5}}, {uid: 0})).toBeUndefined()
    expect(verifyRunAsNonRoot(model, model.containers[1], {uid: 0})).toBeUndefined()
  })
})

describe('expandReferences (the kubelet $(VAR) expansion)', () => {
  const lookup = (name: string) => ({A: 'x', B: 'y'})[name]
  it('expands known names, keeps unknown ones and honours $$', () => {
    expect(expandReferences('$(A)-$(B)', lookup)).toBe('x-y')
    expect(expandReferences('$(C)', lookup)).toBe('$(C)')
    expect(expandReferences('$$(A)', lookup)).toBe('$(A)')
    expect(expandReferences('$A $(A', lookup)).toBe('$A $(A')
    expect(expandReferences('cost: 5$', lookup)).toBe('cost: 5$')
  })
})

describe('host-side pod files', () => {
  it('writes the kubelet-managed hosts file', () => {
    expect(managedHostsFile(['10.1.2.3'], 'web-0')).toBe(
      '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n' +
        'fe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n10.1.2.3\tweb-0\n',
    )
  })

  it('checks hostPath types like the hostPath plugin', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-hostpath-'))
    writeFileSync(join(dir, 'file'), 'x')
    await expect(checkHostPath(join(dir, 'file'), 'Directory')).rejects.toThrow(`hostPath type check failed: ${join(dir, 'file')} is not a directory`)
    await expect(checkHostPath(join(dir, 'none'), 'File')).rejects.toThrow('does not exist')
    await checkHostPath(join(dir, 'made/deep'), 'DirectoryOrCreate')
    await checkHostPath(join(dir, 'made/deep'), 'Directory')
    await checkHostPath(join(dir, 'new-file'), 'FileOrCreate')
    await checkHostPath(join(dir, 'new-file'), 'File')
    await checkHostPath(join(dir, 'anything'), '')
  })

  it('continues the restart count after the highest N.log (calcRestartCountByLogDir)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-logs-'))
    expect(await restartCountFromLogs(join(dir, 'missing'))).toBe(0)
    mkdirSync(join(dir, 'app'))
    for (const name of ['0.log', '2.log.20240101-000000', 'notes.txt']) writeFileSync(join(dir, 'app', name), '')
    mkdirSync(join(dir, 'app', '7.log'))
    expect(await restartCountFromLogs(join(dir, 'app'))).toBe(3)
  })
})

describe('BackOff.delaySince (crash-loop back-off from the finish time)', () => {
  it('restarts at once the first time, then waits 10 s, 20 s ... capped at 300 s', () => {
    const backOff = new BackOff({initialMs: CRASH_BACKOFF_INITIAL_MS, maxMs: CRASH_BACKOFF_MAX_MS})
    const key = 'web_shop_uid_app_hash'
    let t = 1_000_000
    expect(backOff.delaySince(key, t, t)).toBe(0)
    expect(backOff.next(key, t)).toBe(10_000)
    t += 1000
    expect(backOff.delaySince(key, t, t)).toBe(10_000)
    expect(backOff.delaySince(key, t, t + 4000)).toBe(6000)
    expect(backOff.next(key, t)).toBe(20_000)
    for (const expected of [40_000, 80_000, 160_000, 300_000, 300_000]) expect(backOff.next(key, (t += 1000))).toBe(expected)
    // Untouched for more than 2 × max: the ladder starts over.
    expect(backOff.delaySince(key, t + 600_001, t + 600_001)).toBe(0)
    expect(backOff.next(key, t + 600_001)).toBe(10_000)
  })
})

describe('dry-run plan', () => {
  it('lists the CRI requests in order with credentials redacted', async () => {
    const plan = await planPodRun(await pod(), {
      logsRoot: '/logs',
      podDirRoot: POD_DIRS,
      hostResolvConf: HOST_RESOLV,
      nodeMemoryBytes: GiB,
      auth: {username: 'alice', password: 'secretpass'},
    })
    expect(plan.calls.map((call) => call.rpc)).toEqual([
      'RuntimeService/RunPodSandbox',
      'RuntimeService/PodSandboxStatus',
      'ImageService/ImageStatus',
      'ImageService/PullImage',
      'RuntimeService/CreateContainer',
      'RuntimeService/StartContainer',
      'ImageService/ImageStatus',
      'ImageService/PullImage',
      'RuntimeService/CreateContainer',
      'RuntimeService/StartContainer',
      'RuntimeService/ExecSync',
      // busybox has no tag: pull policy Always, no ImageStatus first.
      'ImageService/PullImage',
      'RuntimeService/CreateContainer',
      'RuntimeService/StartContainer',
    ])
    expect(plan.calls[0].request).toMatchObject({runtimeHandler: 'test-handler'})
    const text = JSON.stringify(plan)
    expect(text).not.toContain('secretpass')
    expect(plan.calls[3].request).toMatchObject({auth: {username: 'alice', password: REDACTED}})
    expect(redactAuth({auth: 'YWxpY2U6cw==', identityToken: 't', serverAddress: 'r'})).toEqual({serverAddress: 'r', auth: REDACTED, identityToken: REDACTED})
  })
})

describe('event timeline', () => {
  it('prints a header once and aligned rows, objects without the pod prefix for a single pod', () => {
    const timeline = new EventTimeline({objects: ['web_shop', 'web_shop/app', 'web_shop/sidecar'], stripPrefix: 'web_shop/', startedAt: 0})
    const first = timeline.format({type: 'Normal', reason: 'Pulled', message: 'Container image "x" already present on machine', object: 'web_shop/app', at: new Date(1200)})
    const second = timeline.format({type: 'Warning', reason: 'FailedPostStartHook', message: 'PostStartHook failed', object: 'web_shop/sidecar', at: new Date(12_500)})
    expect(first.split('\n')).toEqual([
      'TYPE     REASON                  AGE    OBJECT     MESSAGE',
      'Normal   Pulled                  1.2s   app        Container image "x" already present on machine',
    ])
    expect(second).toBe('Warning  FailedPostStartHook     12s    sidecar    PostStartHook failed')
    expect(eventAge(125_000)).toBe('2m5s')
  })
})
