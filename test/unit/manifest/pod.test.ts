import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {ExitCode} from '../../../src/lib/errors.js'
import {parseCrictlConfigs} from '../../../src/lib/manifest/crictl.js'
import {ManifestError} from '../../../src/lib/manifest/fields.js'
import {loadCrictlConfigs, loadPodManifest, parseDocuments} from '../../../src/lib/manifest/load.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'

const UID = '11111111-2222-3333-4444-555555555555'

async function parse(text: string) {
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => UID})
}

/** The one-line error a manifest produces (and that it is a usage error, exit 2). */
async function refusal(text: string): Promise<string> {
  try {
    await parse(text)
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError)
    expect((error as ManifestError).exitCode).toBe(ExitCode.USAGE)
    expect((error as Error).message).not.toContain('\n')
    return (error as Error).message
  }

  throw new Error('the manifest was accepted')
}

const MINIMAL = `
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: app
    image: busybox:1.36
`

/** MINIMAL with `extra` appended under the first container (indented for it). */
function withContainerFields(extra: string): string {
  return `${MINIMAL}${extra
    .split('\n')
    .map((line) => (line ? `    ${line}` : line))
    .join('\n')}\n`
}

describe('parsePod: defaults as the API server applies them', () => {
  it('fills namespace, uid, restartPolicy, DNS policy and termination message settings', async () => {
    const pod = await parse(MINIMAL)
    expect(pod).toEqual({
      source: 'pod.yaml',
      name: 'web',
      namespace: 'default',
      uid: UID,
      uidGenerated: true,
      labels: {},
      annotations: {},
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: undefined,
      hostNetwork: false,
      hostPID: false,
      hostIPC: false,
      shareProcessNamespace: false,
      hostname: undefined,
      dnsPolicy: 'ClusterFirst',
      dnsConfig: undefined,
      runtimeClassName: undefined,
      volumes: [],
      initContainers: [],
      containers: [
        {
          name: 'app',
          image: 'busybox:1.36',
          imagePullPolicy: undefined,
          command: [],
          args: [],
          workingDir: undefined,
          env: [],
          ports: [],
          resources: {limits: {}, requests: {}},
          securityContext: undefined,
          lifecycle: {postStart: undefined, preStop: undefined},
          volumeMounts: [],
          terminationMessagePath: '/dev/termination-log',
          terminationMessagePolicy: 'File',
        },
      ],
    })
  })

  it('keeps a given uid, and defaults hostPort to containerPort for host-network pods', async () => {
    const pod = await parse(`
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: team-a, uid: abc-123}
spec:
  hostNetwork: true
  containers:
  - name: app
    image: busybox
    ports: [{containerPort: 8080}]
`)
    expect(pod.uid).toBe('abc-123')
    expect(pod.uidGenerated).toBe(false)
    expect(pod.namespace).toBe('team-a')
    expect(pod.containers[0].ports).toEqual([{name: undefined, containerPort: 8080, hostPort: 8080, protocol: 'TCP', hostIP: undefined}])
  })

  it('accepts what kubectl run --dry-run=client -o yaml writes', async () => {
    const pod = await parse(`
apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: null
  labels:
    run: web
  name: web
spec:
  containers:
  - image: nginx
    name: web
    resources: {}
  dnsPolicy: ClusterFirst
  restartPolicy: Always
status: {}
`)
    expect(pod.labels).toEqual({run: 'web'})
    expect(pod.containers[0].resources).toEqual({limits: {}, requests: {}})
  })

  it('reads every supported field', async () => {
    const pod = await parse(`
apiVersion: v1
kind: Pod
metadata:
  name: full
  namespace: ns1
  labels: {app: full, tier: "1"}
  annotations: {example.com/note: "hello world"}
spec:
  restartPolicy: OnFailure
  terminationGracePeriodSeconds: 5
  hostIPC: true
  shareProcessNamespace: true
  hostname: box
  dnsPolicy: None
  dnsConfig:
    nameservers: [1.1.1.1]
    searches: [example.com]
    options: [{name: ndots, value: "2"}, {name: edns0}]
  runtimeClassName: test-handler
  volumes:
  - {name: data, emptyDir: {}}
  - {name: host, hostPath: {path: /tmp, type: Directory}}
  initContainers:
  - name: init
    image: busybox
    command: [sh, -c, "true"]
  containers:
  - name: app
    image: busybox:1.36
    imagePullPolicy: Never
    command: [sh]
    args: [-c, "sleep 1"]
    workingDir: /work
    env: [{name: A, value: "1"}, {name: B}]
    ports: [{name: http, containerPort: 80, hostPort: 8080, protocol: UDP, hostIP: 127.0.0.1}]
    resources:
      limits: {cpu: 500m, memory: 128Mi}
      requests: {cpu: 100m, memory: 64Mi}
    securityContext:
      runAsUser: 1000
      runAsGroup: 2000
      runAsNonRoot: true
      privileged: false
      readOnlyRootFilesystem: true
      allowPrivilegeEscalation: false
      capabilities: {add: [NET_ADMIN], drop: [ALL]}
    lifecycle:
      postStart: {exec: {command: [sh, -c, "echo hi"]}}
      preStop: {exec: {command: [sh, -c, "echo bye"]}}
    volumeMounts:
    - {name: data, mountPath: /data}
    - {name: host, mountPath: /host, readOnly: true}
    terminationMessagePath: /tmp/msg
    terminationMessagePolicy: FallbackToLogsOnError
`)
    expect(pod.restartPolicy).toBe('OnFailure')
    expect(pod.terminationGracePeriodSeconds).toBe(5)
    expect(pod.hostIPC).toBe(true)
    expect(pod.shareProcessNamespace).toBe(true)
    expect(pod.dnsConfig).toEqual({
      nameservers: ['1.1.1.1'],
      searches: ['example.com'],
      options: [{name: 'ndots', value: '2'}, {name: 'edns0'}],
    })
    expect(pod.volumes).toEqual([
      {name: 'data', emptyDir: {}},
      {name: 'host', hostPath: {path: '/tmp', type: 'Directory'}},
    ])
    const [app] = pod.containers
    expect(app.env).toEqual([
      {name: 'A', value: '1'},
      {name: 'B', value: ''},
    ])
    expect(app.resources).toEqual({limits: {cpu: '500m', memory: '128Mi'}, requests: {cpu: '100m', memory: '64Mi'}})
    expect(app.securityContext).toEqual({
      runAsUser: 1000,
      runAsGroup: 2000,
      runAsNonRoot: true,
      privileged: false,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: {add: ['NET_ADMIN'], drop: ['ALL']},
    })
    expect(app.lifecycle.preStop).toEqual({exec: {command: ['sh', '-c', 'echo bye']}})
    expect(app.volumeMounts).toEqual([
      {name: 'data', mountPath: '/data', readOnly: false},
      {name: 'host', mountPath: '/host', readOnly: true},
    ])
    expect(app.terminationMessagePolicy).toBe('FallbackToLogsOnError')
    expect(pod.initContainers.map((c) => c.name)).toEqual(['init'])
  })
})

describe('parsePod: refusals name the file and the field', () => {
  it('takes empty and blank command and args items as given, as the API server does (redis --save ""), but not null', async () => {
    const pod = await parse(withContainerFields('command: [redis-server]\nargs: ["--save", "", " "]'))
    expect(pod.containers[0]).toMatchObject({command: ['redis-server'], args: ['--save', '', ' ']})
    expect(await refusal(withContainerFields('args: ["--save", null]'))).toBe(
      'pod.yaml: spec.containers[0].args[1] must be a string, not null',
    )
  })

  it('refuses env valueFrom next to a value, and a fieldRef the API server does not allow in env', async () => {
    const message = await refusal(
      withContainerFields(`env:
- name: A
  value: x
- name: B
  value: y
  valueFrom: {fieldRef: {fieldPath: metadata.name}}`),
    )
    expect(message).toBe('pod.yaml: spec.containers[0].env[1].valueFrom may not be specified when `value` is not empty')
    expect(await refusal(withContainerFields('env: [{name: L, valueFrom: {fieldRef: {fieldPath: metadata.labels}}}]'))).toMatch(
      /^pod\.yaml: spec\.containers\[0\]\.env\[0\]\.valueFrom\.fieldRef\.fieldPath "metadata\.labels" is not supported; supported values: /,
    )
  })

  it('refuses unknown fields (typos) with a suggestion', async () => {
    expect(await refusal(withContainerFields('imagePullPolice: Always'))).toBe(
      'pod.yaml: spec.containers[0].imagePullPolice is not a known field; did you mean imagePullPolicy?',
    )
    expect(await refusal(withContainerFields('volumemounts: []'))).toBe(
      'pod.yaml: spec.containers[0].volumemounts is not a known field; did you mean volumeMounts?',
    )
    expect(await refusal(`${MINIMAL}  restartPolicyy: Never\n`)).toBe(
      'pod.yaml: spec.restartPolicyy is not a known field; did you mean restartPolicy?',
    )
    // A field that no Kubernetes release has is refused as kubectl's strict field validation refuses it, named by path.
    expect(await refusal(`${MINIMAL}  zzz: 1\n`)).toBe('pod.yaml: spec.zzz is not a field of PodSpec in Kubernetes 1.17–1.36')
    expect(await refusal(withContainerFields('imagePolicy: Always'))).toBe(
      'pod.yaml: spec.containers[0].imagePolicy is not a known field; did you mean imagePullPolicy?',
    )
  })

  it('validates names as Kubernetes does', async () => {
    expect(await refusal(MINIMAL.replace('name: web', 'name: Web_1'))).toMatch(
      /^pod\.yaml: metadata\.name "Web_1" is invalid: must be a lowercase RFC 1123 subdomain/,
    )
    expect(await refusal(MINIMAL.replace('name: app', 'name: my.app'))).toMatch(
      /^pod\.yaml: spec\.containers\[0\]\.name "my\.app" is invalid: must be a lowercase RFC 1123 label/,
    )
    expect(await refusal(MINIMAL.replace('  name: web', '  name: web\n  namespace: a.b'))).toMatch(
      /^pod\.yaml: metadata\.namespace "a\.b" is invalid: must be a lowercase RFC 1123 label/,
    )
    expect(await refusal(`${MINIMAL}  - name: app\n    image: busybox\n`)).toBe(
      'pod.yaml: spec.containers[1].name "app" is a duplicate container name',
    )
    expect(await refusal(`${MINIMAL}  initContainers:\n  - {name: app, image: busybox}\n`)).toBe(
      'pod.yaml: spec.containers[0].name "app" is a duplicate container name',
    )
    expect(await refusal(withContainerFields('env: [{name: 1A, value: x}]'))).toMatch(
      /^pod\.yaml: spec\.containers\[0\]\.env\[0\]\.name "1A" is invalid/,
    )
    expect(await refusal(MINIMAL.replace('  name: web', '  name: web\n  labels: {"-bad": x}'))).toMatch(
      /^pod\.yaml: metadata\.labels\.-bad key is invalid/,
    )
    expect(await refusal(MINIMAL.replace('  name: web', '  name: web\n  labels: {version: 2}'))).toBe(
      'pod.yaml: metadata.labels.version must be a string, not 2; quote it: "2"',
    )
  })

  it('checks volumes and mounts', async () => {
    expect(await refusal(withContainerFields('volumeMounts: [{name: data, mountPath: /data}]'))).toBe(
      'pod.yaml: spec.containers[0].volumeMounts[0].name "data" is not a volume of this pod; declare it under spec.volumes',
    )
    expect(await refusal(`${MINIMAL}  volumes:\n  - {name: a, emptyDir: {}}\n  - {name: a, emptyDir: {}}\n`)).toBe(
      'pod.yaml: spec.volumes[1].name "a" is a duplicate volume name',
    )
    expect(await refusal(`${MINIMAL}  volumes:\n  - {name: a, hostPath: {path: /x, type: Pipe}}\n`)).toMatch(
      /^pod\.yaml: spec\.volumes\[0\]\.hostPath\.type must be one of , DirectoryOrCreate, Directory/,
    )
    expect(await refusal(`${MINIMAL}  volumes:\n  - {name: a, hostPath: {path: relative}}\n`)).toBe(
      'pod.yaml: spec.volumes[0].hostPath.path "relative" must be an absolute path',
    )
    expect(await refusal(`${MINIMAL}  volumes:\n  - {name: a, emptyDir: {medium: HugePages}}\n`)).toMatch(
      /emptyDir\.medium "HugePages" is not supported by podctl/,
    )
    expect(await refusal(`${MINIMAL}  volumes:\n  - {name: a, emptyDir: {}, configMap: {name: x}}\n`)).toBe(
      'pod.yaml: spec.volumes[0] may not specify more than one volume type (emptyDir and configMap)',
    )
  })

  it('checks ports and resources', async () => {
    expect(await refusal(withContainerFields('ports: [{containerPort: 70000}]'))).toBe(
      'pod.yaml: spec.containers[0].ports[0].containerPort must be between 1 and 65535, not 70000',
    )
    expect(await refusal(withContainerFields('ports: [{hostPort: 80}]'))).toBe(
      'pod.yaml: spec.containers[0].ports[0].containerPort is required',
    )
    expect(await refusal(withContainerFields('ports: [{containerPort: 80, protocol: tcp}]'))).toBe(
      'pod.yaml: spec.containers[0].ports[0].protocol must be one of TCP, UDP, SCTP, not "tcp"',
    )
    expect(await refusal(withContainerFields('ports: [{containerPort: 80, hostPort: 8080}, {containerPort: 81, hostPort: 8080}]'))).toBe(
      'pod.yaml: spec.containers[0].ports[1].hostPort 8080/TCP is already used by another port of this pod',
    )
    expect(await refusal(withContainerFields('resources: {limits: {cpu: lots}}'))).toBe(
      'pod.yaml: spec.containers[0].resources.limits.cpu "lots" is not a quantity; use e.g. 500m or 2',
    )
    expect(await refusal(withContainerFields('resources: {limits: {nvidia.com/gpu: 1}}'))).toBe(
      'pod.yaml: spec.containers[0].resources.limits[nvidia.com/gpu] is an extended resource: ' +
        'it needs a device plugin, which podctl does not run',
    )
    expect(await refusal(withContainerFields('resources: {limits: {memory: 64Mi}, requests: {memory: 128Mi}}'))).toBe(
      'pod.yaml: spec.containers[0].resources.requests.memory must be less than or equal to the memory limit (64Mi)',
    )
  })

  it('checks kind, apiVersion, required fields and types', async () => {
    expect(await refusal(MINIMAL.replace('kind: Pod', 'kind: Deployment'))).toBe(
      'pod.yaml: kind "Deployment" is not supported; podctl runs Pods (copy spec.template into a Pod)',
    )
    expect(await refusal(MINIMAL.replace('apiVersion: v1', 'apiVersion: apps/v1'))).toBe(
      'pod.yaml: apiVersion must be "v1" for a Pod, not "apps/v1"',
    )
    expect(await refusal(MINIMAL.replace('    image: busybox:1.36\n', ''))).toBe('pod.yaml: spec.containers[0].image is required')
    expect(await refusal('apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: []}\n')).toBe(
      'pod.yaml: spec.containers must list at least one container',
    )
    expect(await refusal(withContainerFields('command: sleep 10'))).toBe(
      'pod.yaml: spec.containers[0].command must be a list, not "sleep 10"',
    )
    expect(await refusal(`${MINIMAL}  terminationGracePeriodSeconds: -1\n`)).toBe(
      'pod.yaml: spec.terminationGracePeriodSeconds must be at least 0, not -1',
    )
    expect(await refusal(withContainerFields('securityContext: {privileged: true, allowPrivilegeEscalation: false}'))).toBe(
      'pod.yaml: spec.containers[0].securityContext.allowPrivilegeEscalation cannot be false when privileged is true',
    )
  })
})

describe('loading manifests', () => {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-manifest-'))

  it('runs every document of a multi-document file and names each in errors', async () => {
    const path = join(dir, 'pods.yaml')
    writeFileSync(path, `${MINIMAL}---\n${MINIMAL.replace('name: web', 'name: db')}---\n`)
    const pods = await loadPodManifest(path)
    expect(pods.map((pod) => [pod.name, pod.source])).toEqual([
      ['web', `${path} (document 1)`],
      ['db', `${path} (document 2)`],
    ])
    expect(pods[0].uid).not.toBe(pods[1].uid)

    const typo = MINIMAL.replace('image: busybox:1.36', 'image: busybox\n    imagePullPolcy: Always').replace('name: web', 'name: db')
    writeFileSync(path, `${MINIMAL}---\n${typo}`)
    await expect(loadPodManifest(path)).rejects.toThrow(
      `${path} (document 2, Pod/db): spec.containers[0].imagePullPolcy is not a known field; did you mean imagePullPolicy?`,
    )

    writeFileSync(path, `${MINIMAL}---\n${MINIMAL}`)
    await expect(loadPodManifest(path)).rejects.toThrow(`pod "web" in namespace "default" is already defined in ${path} (document 1)`)
  })

  it('reads JSON and stdin, and names syntax errors by line', async () => {
    const json = JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'j'}, spec: {containers: [{name: 'c', image: 'busybox'}]}})
    const [pod] = await loadPodManifest('-', {stdin: async () => json})
    expect(pod.name).toBe('j')
    expect(pod.source).toBe('<stdin>')
    await expect(loadPodManifest('-', {stdin: async () => 'a: [\n'})).rejects.toThrow(
      /^<stdin>: line \d+, column \d+: .*\(not valid YAML or JSON\)$/,
    )
    await expect(loadPodManifest('-', {stdin: async () => ''})).rejects.toThrow('<stdin>: no Pod found (the manifest is empty)')
    await expect(loadPodManifest(join(dir, 'missing.yaml'))).rejects.toThrow(
      `${join(dir, 'missing.yaml')}: cannot read the manifest (no such file)`,
    )
  })

  it('refuses duplicate keys', async () => {
    await expect(loadPodManifest('-', {stdin: async () => `${MINIMAL}  restartPolicy: Never\n  restartPolicy: Always\n`})).rejects.toThrow(
      /^<stdin>: line \d+, column \d+: Map keys must be unique/,
    )
  })
})

describe('crictl configs', () => {
  const podConfig = {
    metadata: {name: 'nginx-sandbox', namespace: 'default', attempt: 1, uid: 'hdishd83djaidwnduwk28bcsb'},
    hostname: 'box',
    log_directory: '/tmp/logs',
    dns_config: {servers: ['8.8.8.8'], searches: ['example.com'], options: ['ndots:2']},
    port_mappings: [{protocol: 0, container_port: 80, host_port: 8080}],
    labels: {app: 'nginx'},
    annotations: {note: 'x'},
    linux: {security_context: {namespace_options: {network: 2, pid: 1}}},
  }
  const containerConfig = {
    metadata: {name: 'busybox'},
    image: {image: 'busybox'},
    command: ['top'],
    args: ['-b'],
    working_dir: '/',
    envs: [{key: 'A', value: 'b'}],
    mounts: [{container_path: '/data', host_path: '/tmp/data', readonly: true}],
    labels: {ctr: 'yes'},
    annotations: {cnote: 'y'},
    log_path: 'busybox.log',
    linux: {
      resources: {cpu_period: 100_000, cpu_quota: 50_000, cpu_shares: 512, memory_limit_in_bytes: 134_217_728},
      security_context: {
        privileged: true,
        run_as_user: {value: 1000},
        readonly_rootfs: true,
        capabilities: {add_capabilities: ['NET_ADMIN']},
      },
    },
  }

  it('translates snake_case fields into the pod model', () => {
    const pod = parseCrictlConfigs({podConfig, podSource: 'pod.json', containerConfig, containerSource: 'ctr.json'})
    expect(pod).toMatchObject({
      name: 'nginx-sandbox',
      namespace: 'default',
      uid: 'hdishd83djaidwnduwk28bcsb',
      uidGenerated: false,
      attempt: 1,
      hostname: 'box',
      logDirectory: '/tmp/logs',
      labels: {app: 'nginx'},
      annotations: {note: 'x'},
      restartPolicy: 'Never',
      hostNetwork: true,
      hostPID: false,
      shareProcessNamespace: false,
      hostIPC: false,
      dnsPolicy: 'None',
      dnsConfig: {nameservers: ['8.8.8.8'], searches: ['example.com'], options: [{name: 'ndots', value: '2'}]},
      volumes: [{name: 'mount-0', hostPath: {path: '/tmp/data', type: ''}}],
    })
    expect(pod.containers[0]).toMatchObject({
      name: 'busybox',
      image: 'busybox',
      command: ['top'],
      args: ['-b'],
      workingDir: '/',
      env: [{name: 'A', value: 'b'}],
      ports: [{containerPort: 80, hostPort: 8080, protocol: 'TCP', hostIP: undefined}],
      resources: {limits: {cpu: '500m', memory: '134217728'}, requests: {cpu: '500m'}},
      securityContext: {privileged: true, runAsUser: 1000, readOnlyRootFilesystem: true, capabilities: {add: ['NET_ADMIN'], drop: []}},
      volumeMounts: [{name: 'mount-0', mountPath: '/data', readOnly: true}],
      extraLabels: {ctr: 'yes'},
      extraAnnotations: {cnote: 'y'},
      logPath: 'busybox.log',
    })
  })

  it('shares the PID namespace like crictl when namespace options are absent (Go zero value POD)', () => {
    const pod = parseCrictlConfigs(
      {
        podConfig: {metadata: {name: 'p', namespace: 'n'}},
        podSource: 'pod.json',
        containerConfig: {metadata: {name: 'c'}, image: {image: 'busybox'}},
        containerSource: 'ctr.json',
      },
      {newUid: () => UID},
    )
    expect(pod).toMatchObject({uid: UID, uidGenerated: true, shareProcessNamespace: true, hostNetwork: false, dnsPolicy: 'Default'})
  })

  it('refuses camelCase and unknown fields, naming the file', () => {
    const attempt = (pod: object, ctr: object) => () =>
      parseCrictlConfigs({podConfig: pod as never, podSource: 'pod.json', containerConfig: ctr as never, containerSource: 'ctr.json'})
    expect(attempt({...podConfig, logDirectory: '/x'}, containerConfig)).toThrow(
      'pod.json: logDirectory is not a known field; did you mean log_directory?',
    )
    expect(attempt(podConfig, {...containerConfig, image: {image: 'x', annotations: {}}})).toThrow(
      'ctr.json: image.annotations is not supported by podctl',
    )
    expect(attempt({metadata: {namespace: 'n'}}, containerConfig)).toThrow('pod.json: metadata.name is required')
    expect(attempt(podConfig, {metadata: {name: 'c'}})).toThrow('ctr.json: image is required (image.image)')
    expect(attempt({...podConfig, linux: {resources: {}}}, containerConfig)).toThrow(
      'pod.json: linux.resources is not supported by podctl; set linux.resources in the container config',
    )
  })

  it('loads the pair from files (YAML or JSON)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'podctl-crictl-'))
    writeFileSync(join(dir, 'pod.yaml'), 'metadata:\n  name: p\n  namespace: n\n')
    writeFileSync(join(dir, 'ctr.json'), JSON.stringify({metadata: {name: 'c'}, image: {image: 'busybox'}}))
    const pod = await loadCrictlConfigs(join(dir, 'pod.yaml'), join(dir, 'ctr.json'))
    expect(pod.containers[0].image).toBe('busybox')
    await expect(loadCrictlConfigs('-', '-')).rejects.toThrow('--pod-config and --container-config cannot both be - (stdin)')
  })
})
