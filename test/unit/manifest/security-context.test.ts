import {describe, expect, it} from 'vitest'

import {type ApiType, isApiField} from '../../../src/lib/manifest/api-fields.js'
import {ManifestError} from '../../../src/lib/manifest/fields.js'
import {ignoredFieldsWarning, loadRunInput, parseDocuments} from '../../../src/lib/manifest/load.js'
import {
  CONTAINER_RULE,
  METADATA_RULE,
  POD_SECURITY_CONTEXT_RULE,
  SECURITY_CONTEXT_RULE,
  SPEC_RULE,
} from '../../../src/lib/manifest/pod-fields.js'
import {parsePod} from '../../../src/lib/manifest/pod.js'

const UID = '11111111-2222-3333-4444-555555555555'

async function parse(text: string, options: {namespace?: string} = {}) {
  const [document] = await parseDocuments(text, 'pod.yaml')
  return parsePod(document, 'pod.yaml', {newUid: () => UID, ...options})
}

async function refusal(text: string): Promise<string> {
  try {
    await parse(text)
  } catch (error) {
    expect(error).toBeInstanceOf(ManifestError)
    return (error as Error).message
  }

  throw new Error('the manifest was accepted')
}

const pod = (spec: string, container = '', metadata = '') => `
apiVersion: v1
kind: Pod
metadata:
  name: web${metadata}
spec:
${spec}
  containers:
  - name: app
    image: busybox:1.36${container}
`

describe('the pod securityContext', () => {
  it('accepts securityContext: {} and every field, with the API names', async () => {
    expect((await parse(pod('  securityContext: {}'))).securityContext).toEqual({})
    const model = await parse(
      pod(`  securityContext:
    runAsUser: 1000
    runAsGroup: 3000
    runAsNonRoot: true
    supplementalGroups: [4000, 5000]
    supplementalGroupsPolicy: Strict
    fsGroup: 2000
    fsGroupChangePolicy: OnRootMismatch
    sysctls: [{name: kernel.shm_rmid_forced, value: "1"}]
    seccompProfile: {type: Localhost, localhostProfile: profiles/audit.json}
    appArmorProfile: {type: RuntimeDefault}
    seLinuxOptions: {level: "s0:c123,c456"}
    seLinuxChangePolicy: MountOption
    windowsOptions: {runAsUserName: ContainerUser}`),
    )
    expect(model.securityContext).toEqual({
      runAsUser: 1000,
      runAsGroup: 3000,
      runAsNonRoot: true,
      supplementalGroups: [4000, 5000],
      supplementalGroupsPolicy: 'Strict',
      fsGroup: 2000,
      fsGroupChangePolicy: 'OnRootMismatch',
      sysctls: [{name: 'kernel.shm_rmid_forced', value: '1'}],
      seccompProfile: {type: 'Localhost', localhostProfile: 'profiles/audit.json'},
      appArmorProfile: {type: 'RuntimeDefault'},
      seLinuxOptions: {level: 's0:c123,c456'},
      seLinuxChangePolicy: 'MountOption',
    })
  })

  it('reads the container fields podctl added: seccompProfile, appArmorProfile, procMount, seLinuxOptions', async () => {
    const model = await parse(
      pod(
        '  hostUsers: false',
        `
    securityContext:
      seccompProfile: {type: RuntimeDefault}
      appArmorProfile: {type: Localhost, localhostProfile: k8s-apparmor-example-deny-write}
      procMount: Unmasked
      seLinuxOptions: {type: spc_t}
      runAsNonRoot: true`,
      ),
    )
    expect(model.containers[0].securityContext).toEqual({
      runAsNonRoot: true,
      seccompProfile: {type: 'RuntimeDefault'},
      appArmorProfile: {type: 'Localhost', localhostProfile: 'k8s-apparmor-example-deny-write'},
      procMount: 'Unmasked',
      seLinuxOptions: {type: 'spc_t'},
    })
  })

  it("refuses invalid values with the API server's reasons", async () => {
    expect(await refusal(pod('  securityContext: {seccompProfile: {type: Localhost}}'))).toBe(
      'pod.yaml: spec.securityContext.seccompProfile.localhostProfile must be set when type is Localhost',
    )
    expect(await refusal(pod('  securityContext: {seccompProfile: {type: RuntimeDefault, localhostProfile: x}}'))).toBe(
      'pod.yaml: spec.securityContext.seccompProfile.localhostProfile can only be set when type is Localhost',
    )
    expect(await refusal(pod('  securityContext: {sysctls: [{name: "Net.Bad!", value: "1"}]}'))).toMatch(/is not a valid sysctl name/)
    expect(
      await refusal(pod('  hostNetwork: true\n  securityContext: {sysctls: [{name: net.ipv4.ip_unprivileged_port_start, value: "0"}]}')),
    ).toBe(
      'pod.yaml: spec.securityContext.sysctls[0].name "net.ipv4.ip_unprivileged_port_start" ' +
        'is not allowed with hostNetwork: it would change the node',
    )
    expect(await refusal(pod('', '\n    securityContext: {procMount: Unmasked}'))).toBe(
      'pod.yaml: spec.containers[0].securityContext.procMount Unmasked needs spec.hostUsers: false',
    )
  })

  it('translates the deprecated AppArmor annotation into the field, and a field into the annotation', async () => {
    const annotated = await parse(
      pod('', '', '\n  annotations:\n    container.apparmor.security.beta.kubernetes.io/app: localhost/k8s-apparmor-example-deny-write'),
    )
    expect(annotated.containers[0].securityContext?.appArmorProfile).toEqual({
      type: 'Localhost',
      localhostProfile: 'k8s-apparmor-example-deny-write',
    })
    const field = await parse(pod('  securityContext: {appArmorProfile: {type: RuntimeDefault}}'))
    expect(field.annotations['container.apparmor.security.beta.kubernetes.io/app']).toBe('runtime/default')
    expect(await refusal(pod('', '', '\n  annotations:\n    container.apparmor.security.beta.kubernetes.io/app: bogus'))).toMatch(
      /"bogus" is invalid: use runtime\/default, unconfined or localhost\/<profile>$/,
    )
  })

  it('lists the seccomp alpha annotations in the warning', async () => {
    const model = await parse(pod('', '', '\n  annotations:\n    seccomp.security.alpha.kubernetes.io/pod: runtime/default'))
    expect(model.ignoredFields).toEqual([
      {
        path: 'metadata.annotations.seccomp.security.alpha.kubernetes.io/pod',
        reason: 'removed in Kubernetes 1.27; use securityContext.seccompProfile',
      },
    ])
  })
})

describe('pod fields beside the containers', () => {
  it('reads hostAliases, subdomain, setHostnameAsFQDN, stdin/tty, resources, overhead, os, hostUsers, activeDeadlineSeconds', async () => {
    const model = await parse(
      pod(
        `  hostAliases: [{ip: "10.1.2.3", hostnames: [foo.remote, bar.remote]}]
  hostname: busybox-1
  subdomain: busybox-subdomain
  setHostnameAsFQDN: true
  resources: {limits: {cpu: "1", memory: 100Mi}}
  overhead: {cpu: 250m, memory: 120Mi}
  os: {name: linux}
  hostUsers: true
  activeDeadlineSeconds: 30`,
        '\n    stdin: true\n    stdinOnce: true\n    tty: true',
      ),
    )
    expect(model).toMatchObject({
      hostAliases: [{ip: '10.1.2.3', hostnames: ['foo.remote', 'bar.remote']}],
      hostname: 'busybox-1',
      subdomain: 'busybox-subdomain',
      setHostnameAsFQDN: true,
      resources: {limits: {cpu: '1', memory: '100Mi'}, requests: {cpu: '1', memory: '100Mi'}},
      overhead: {cpu: '250m', memory: '120Mi'},
      os: 'linux',
      hostUsers: true,
      activeDeadlineSeconds: 30,
    })
    expect(model.containers[0]).toMatchObject({stdin: true, stdinOnce: true, tty: true})
  })

  it('refuses a Windows pod, and an FQDN longer than 64 characters', async () => {
    expect(await refusal(pod('  os: {name: windows}'))).toBe('pod.yaml: spec.os.name is windows: this node runs Linux containers')
    expect(
      await refusal(pod('  hostname: a-rather-long-hostname-for-this\n  subdomain: and-a-long-subdomain\n  setHostnameAsFQDN: true')),
    ).toBe(
      'pod.yaml: spec.setHostnameAsFQDN FQDN a-rather-long-hostname-for-this.and-a-long-subdomain.default.svc.cluster.local ' +
        'is too long (64 characters is the max, 78 characters requested); shorten hostname or subdomain',
    )
  })

  it('-n sets the namespace of a pod that names none; a different one is refused, as kubectl does', async () => {
    expect((await parse(pod(''), {namespace: 'ci'})).namespace).toBe('ci')
    expect((await parse(pod('', '', '\n  namespace: ci'), {namespace: 'ci'})).namespace).toBe('ci')
    await expect(parse(pod('', '', '\n  namespace: prod'), {namespace: 'ci'})).rejects.toThrow(
      'pod.yaml: metadata.namespace "prod" does not match the namespace "ci" of --namespace; pass --namespace prod, or leave it out',
    )
  })

  it('makes a name from generateName as the API server does', async () => {
    const model = await parse(pod('').replace('  name: web', '  generateName: web-'))
    expect(model.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/)
  })
})

describe('warnings and refusals', () => {
  const exported = `${pod(
    `  nodeName: node-1
  nodeSelector: {disktype: ssd}
  tolerations: [{key: k, operator: Exists}]
  serviceAccountName: default
  priority: 0
  enableServiceLinks: true`,
    '',
    '\n  resourceVersion: "123"\n  creationTimestamp: "2024-01-01T00:00:00Z"\n  managedFields: []',
  )}status: {phase: Running}\n`

  it('accepts scheduling fields and read-back metadata, listing them in one warning line', async () => {
    const model = await parse(exported)
    expect(model.ignoredFields?.map((field) => field.path)).toEqual([
      'status',
      'metadata.resourceVersion',
      'metadata.creationTimestamp',
      'metadata.managedFields',
      'spec.nodeName',
      'spec.nodeSelector',
      'spec.tolerations',
      'spec.serviceAccountName',
      'spec.priority',
      'spec.enableServiceLinks',
    ])
    expect(ignoredFieldsWarning([model])).toBe(
      'ignored on a single node: pod.yaml: status, metadata.resourceVersion, metadata.creationTimestamp, metadata.managedFields ' +
        '(read-back metadata of an object from a cluster); spec.nodeName, spec.nodeSelector, spec.tolerations, spec.priority ' +
        '(scheduling: the pod runs on this node); spec.serviceAccountName (there is no API server: no token is mounted); ' +
        'spec.enableServiceLinks (there are no Services without an API server); --strict refuses them',
    )
  })

  it('warns about ephemeral-storage (enforced by eviction, not by the runtime)', async () => {
    const model = await parse(
      pod('', '\n    resources: {requests: {ephemeral-storage: 2Gi, memory: 64Mi}, limits: {ephemeral-storage: 4Gi}}'),
    )
    expect(model.containers[0].resources).toEqual({limits: {}, requests: {memory: '64Mi'}})
    expect(model.ignoredFields?.map((field) => field.path)).toEqual([
      'spec.containers[0].resources.limits.ephemeral-storage',
      'spec.containers[0].resources.requests.ephemeral-storage',
    ])
  })

  it('--strict refuses them all in one error (exit 2)', async () => {
    const {mkdtempSync, writeFileSync} = await import('node:fs')
    const {join} = await import('node:path')
    const {tmpdir} = await import('node:os')
    const file = join(mkdtempSync(join(tmpdir(), 'podctl-strict-')), 'pod.yaml')
    writeFileSync(file, exported.replaceAll('busybox:1.36', 'localhost:5000/busybox:1.36'))
    const error = await loadRunInput({filename: file, strict: true}).catch((error_: unknown) => error_ as ManifestError)
    expect(error).toBeInstanceOf(ManifestError)
    const lines = (error as ManifestError).message.split('\n')
    expect(lines[0]).toBe('--strict refuses 10 fields with no effect on a single node:')
    expect(lines[1]).toBe(`  ${file}: status has no effect on a single node (read-back metadata of an object from a cluster)`)
    expect(lines).toHaveLength(11)
    expect((error as ManifestError).exitCode).toBe(2)
    const loaded = await loadRunInput({filename: file})
    expect(loaded.warning).toMatch(/^ignored on a single node: /)
  })

  it('refuses every field it cannot honour at once, each with its reason', async () => {
    const message = await refusal(
      pod(
        '  os: {name: windows}\n  restartPolicyy: Never',
        '\n    resources: {limits: {nvidia.com/gpu: 1}, claims: [{name: gpu}]}\n    volumeDevices: [{name: d, devicePath: /dev/xvda}]',
      ),
    )
    expect(message.split('\n')).toEqual([
      'pod.yaml: 5 fields cannot be run as written:',
      '  spec.restartPolicyy is not a known field; did you mean restartPolicy?',
      '  spec.os.name is windows: this node runs Linux containers',
      '  spec.containers[0].volumeDevices is not supported on a single node; raw block devices come from PersistentVolumeClaims',
      '  spec.containers[0].resources.claims is not supported on a single node; ' +
        'dynamic resource allocation needs a DRA driver and an API server',
      '  spec.containers[0].resources.limits[nvidia.com/gpu] is an extended resource: it needs a device plugin, which podctl does not run',
    ])
  })
})

/** Every field of the v1 PodSpec, Container, PodSecurityContext and SecurityContext (Kubernetes 1.34). */
const V1 = {
  metadata: [
    'name',
    'generateName',
    'namespace',
    'selfLink',
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'labels',
    'annotations',
    'ownerReferences',
    'finalizers',
    'managedFields',
  ],
  spec: [
    'volumes',
    'initContainers',
    'containers',
    'ephemeralContainers',
    'restartPolicy',
    'terminationGracePeriodSeconds',
    'activeDeadlineSeconds',
    'dnsPolicy',
    'nodeSelector',
    'serviceAccountName',
    'serviceAccount',
    'automountServiceAccountToken',
    'nodeName',
    'hostNetwork',
    'hostPID',
    'hostIPC',
    'shareProcessNamespace',
    'securityContext',
    'imagePullSecrets',
    'hostname',
    'subdomain',
    'affinity',
    'schedulerName',
    'tolerations',
    'hostAliases',
    'priorityClassName',
    'priority',
    'dnsConfig',
    'readinessGates',
    'runtimeClassName',
    'enableServiceLinks',
    'preemptionPolicy',
    'overhead',
    'topologySpreadConstraints',
    'setHostnameAsFQDN',
    'os',
    'hostUsers',
    'schedulingGates',
    'resourceClaims',
    'resources',
    'hostnameOverride',
  ],
  container: [
    'name',
    'image',
    'command',
    'args',
    'workingDir',
    'ports',
    'envFrom',
    'env',
    'resources',
    'resizePolicy',
    'restartPolicy',
    'restartPolicyRules',
    'volumeMounts',
    'volumeDevices',
    'livenessProbe',
    'readinessProbe',
    'startupProbe',
    'lifecycle',
    'terminationMessagePath',
    'terminationMessagePolicy',
    'imagePullPolicy',
    'securityContext',
    'stdin',
    'stdinOnce',
    'tty',
  ],
  podSecurityContext: [
    'seLinuxOptions',
    'windowsOptions',
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'supplementalGroups',
    'supplementalGroupsPolicy',
    'fsGroup',
    'sysctls',
    'fsGroupChangePolicy',
    'seccompProfile',
    'appArmorProfile',
    'seLinuxChangePolicy',
  ],
  securityContext: [
    'capabilities',
    'privileged',
    'seLinuxOptions',
    'windowsOptions',
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'readOnlyRootFilesystem',
    'allowPrivilegeEscalation',
    'procMount',
    'seccompProfile',
    'appArmorProfile',
  ],
}

describe('no valid v1 field is ever "not a known field"', () => {
  // Fields podctl's rule does not name are dropped when the API has them (api-fields.ts), which is not "not a known field" either.
  const rules = {
    metadata: METADATA_RULE,
    spec: SPEC_RULE,
    container: CONTAINER_RULE,
    podSecurityContext: POD_SECURITY_CONTEXT_RULE,
    securityContext: SECURITY_CONTEXT_RULE,
  }
  for (const [part, fields] of Object.entries(V1)) {
    it(`${part}: each field is supported, warned about, dropped, or refused with a reason`, () => {
      const rule = rules[part as keyof typeof rules] as {
        supported: readonly string[]
        ignored?: readonly string[]
        warned?: Record<string, string>
        unsupported?: Record<string, string>
        dropped?: readonly string[]
        api?: ApiType
      }
      const unknown = fields.filter(
        (field) =>
          !rule.supported.includes(field) &&
          !rule.ignored?.includes(field) &&
          !(rule.warned && Object.hasOwn(rule.warned, field)) &&
          !(rule.unsupported && Object.hasOwn(rule.unsupported, field)) &&
          !rule.dropped?.includes(field) &&
          !(rule.api && isApiField(rule.api, field)),
      )
      expect(unknown).toEqual([])
    })
  }
})
