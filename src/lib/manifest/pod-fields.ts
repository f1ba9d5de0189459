/**
 * The rule tables behind parsePod (pod.ts): for each part of a v1 Pod, the fields podctl reads, the
 * ones it ignores, and the ones it refuses with the hint that goes into the error. Data only.
 */

/** The API server's default for what a manifest leaves out. */
export const DEFAULT_TERMINATION_MESSAGE_PATH = '/dev/termination-log'

export const INT64_MAX = 2n ** 63n - 1n
export const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'] as const
export const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'] as const
export const PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const
export const HOST_PATH_TYPES = [
  '',
  'DirectoryOrCreate',
  'Directory',
  'FileOrCreate',
  'File',
  'Socket',
  'CharDevice',
  'BlockDevice',
] as const

const READ_BACK = 'read-back metadata of an object from a cluster'
const SCHEDULING = 'scheduling: the pod runs on this node'
const NO_API_SERVER = 'there is no API server'

/*
 * Each rule names its Kubernetes API type (`api`, pod-api-fields.ts): a key the rule does not name is
 * dropped with one warning when some Kubernetes release has it (a field of a newer release, or behind
 * an alpha feature gate, which an API server without the gate drops too), and refused with a
 * did-you-mean when no release has it, as kubectl's strict field validation refuses it.
 */

export const POD_RULE = {api: 'Pod', supported: ['apiVersion', 'kind', 'metadata', 'spec'], warned: {status: READ_BACK}}

export const METADATA_RULE = {
  api: 'ObjectMeta',
  supported: ['name', 'generateName', 'namespace', 'uid', 'labels', 'annotations'],
  warned: {
    creationTimestamp: READ_BACK,
    resourceVersion: READ_BACK,
    generation: READ_BACK,
    managedFields: READ_BACK,
    ownerReferences: READ_BACK,
    selfLink: READ_BACK,
    finalizers: READ_BACK,
  },
  unsupported: {
    deletionTimestamp: 'remove it (the pod was being deleted when it was read back)',
    deletionGracePeriodSeconds: 'use terminationGracePeriodSeconds',
  },
}

export const SPEC_RULE = {
  api: 'PodSpec',
  supported: [
    'containers',
    'initContainers',
    'volumes',
    'restartPolicy',
    'terminationGracePeriodSeconds',
    'activeDeadlineSeconds',
    'hostNetwork',
    'hostPID',
    'hostIPC',
    'shareProcessNamespace',
    'hostname',
    'hostnameOverride',
    'subdomain',
    'setHostnameAsFQDN',
    'hostAliases',
    'dnsPolicy',
    'dnsConfig',
    'runtimeClassName',
    'securityContext',
    'resources',
    'overhead',
    'os',
    'hostUsers',
    'imagePullSecrets',
  ],
  warned: {
    nodeName: SCHEDULING,
    nodeSelector: SCHEDULING,
    affinity: SCHEDULING,
    tolerations: SCHEDULING,
    topologySpreadConstraints: SCHEDULING,
    schedulerName: SCHEDULING,
    schedulingGates: SCHEDULING,
    priority: SCHEDULING,
    priorityClassName: SCHEDULING,
    preemptionPolicy: SCHEDULING,
    readinessGates: 'no Service or controller reads pod conditions here',
    resourceClaims: 'no DRA driver; refused if a container uses resources.claims',
    enableServiceLinks: 'there are no Services without an API server',
    serviceAccountName: `${NO_API_SERVER}: no token is mounted`,
    serviceAccount: `${NO_API_SERVER}: no token is mounted`,
    automountServiceAccountToken: `${NO_API_SERVER}: no token is mounted`,
    ephemeralContainers: 'added by kubectl debug on a running pod; podctl exec does that here',
  },
  unsupported: {},
}

export const CONTAINER_RULE = {
  api: 'Container',
  supported: [
    'name',
    'image',
    'imagePullPolicy',
    'command',
    'args',
    'workingDir',
    'env',
    'envFrom',
    'ports',
    'resources',
    'securityContext',
    'lifecycle',
    'volumeMounts',
    'terminationMessagePath',
    'terminationMessagePolicy',
    'stdin',
    'stdinOnce',
    'tty',
    'livenessProbe',
    'readinessProbe',
    'startupProbe',
    'restartPolicy',
    'resizePolicy',
  ],
  unsupported: {
    volumeDevices: 'raw block devices come from PersistentVolumeClaims',
  },
}

export const RESIZE_POLICY_RULE = {api: 'ContainerResizePolicy', supported: ['resourceName', 'restartPolicy']}
export const PORT_RULE = {api: 'ContainerPort', supported: ['name', 'containerPort', 'hostPort', 'protocol', 'hostIP']}
export const RESOURCES_RULE = {
  api: 'ResourceRequirements',
  supported: ['limits', 'requests'],
  unsupported: {claims: 'dynamic resource allocation needs a DRA driver and an API server'},
}
/** spec.resources: the pod-level cpu and memory. */
export const POD_RESOURCES_RULE = {
  api: 'ResourceRequirements',
  supported: ['limits', 'requests'],
  unsupported: {claims: 'the API server allows claims on containers only'},
}
export const RESOURCE_LIST_RULE = {
  supported: ['cpu', 'memory'],
  // The kubelet enforces local storage by eviction, not through the runtime.
  warned: {'ephemeral-storage': "the kubelet's eviction manager enforces it; podctl runs none"},
  unsupported: {
    'hugepages-2Mi': 'podctl sets cpu and memory only',
    'hugepages-1Gi': 'podctl sets cpu and memory only',
  },
  // pids: a per-container process limit no released Kubernetes version has.
  dropped: ['pids'],
}
export const SECURITY_CONTEXT_RULE = {
  api: 'SecurityContext',
  supported: [
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'privileged',
    'readOnlyRootFilesystem',
    'allowPrivilegeEscalation',
    'capabilities',
    'seccompProfile',
    'appArmorProfile',
    'seLinuxOptions',
    'procMount',
  ],
  // Windows only: the kubelet on Linux ignores it too.
  ignored: ['windowsOptions'],
}
export const POD_SECURITY_CONTEXT_RULE = {
  api: 'PodSecurityContext',
  supported: [
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'supplementalGroups',
    'supplementalGroupsPolicy',
    'fsGroup',
    'fsGroupChangePolicy',
    'sysctls',
    'seccompProfile',
    'appArmorProfile',
    'seLinuxOptions',
    'seLinuxChangePolicy',
  ],
  ignored: ['windowsOptions'],
}
export const PROFILE_RULE = {api: 'SeccompProfile', supported: ['type', 'localhostProfile']}
export const SE_LINUX_OPTIONS_RULE = {api: 'SELinuxOptions', supported: ['user', 'role', 'type', 'level']}
export const SYSCTL_RULE = {api: 'Sysctl', supported: ['name', 'value']}
export const HOST_ALIAS_RULE = {api: 'HostAlias', supported: ['ip', 'hostnames']}
export const OS_RULE = {api: 'PodOS', supported: ['name']}
export const CAPABILITIES_RULE = {api: 'Capabilities', supported: ['add', 'drop']}
export const LIFECYCLE_RULE = {api: 'Lifecycle', supported: ['postStart', 'preStop']}
export const HANDLER_RULE = {api: 'LifecycleHandler', supported: ['exec', 'httpGet', 'tcpSocket', 'sleep']}
export const EXEC_RULE = {api: 'ExecAction', supported: ['command']}
export const HOST_PATH_RULE = {api: 'HostPathVolumeSource', supported: ['path', 'type']}
export const DNS_CONFIG_RULE = {api: 'PodDNSConfig', supported: ['nameservers', 'searches', 'options']}
export const DNS_OPTION_RULE = {api: 'PodDNSConfigOption', supported: ['name', 'value']}
