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

export const POD_RULE = {
  supported: ['apiVersion', 'kind', 'metadata', 'spec'],
  ignored: ['status'],
}

export const METADATA_RULE = {
  supported: ['name', 'namespace', 'uid', 'labels', 'annotations'],
  ignored: ['creationTimestamp'],
  unsupported: {
    generateName: 'set metadata.name',
    ownerReferences: '',
    finalizers: '',
    resourceVersion: 'remove it (it belongs to an object read back from a cluster)',
    managedFields: 'remove it (it belongs to an object read back from a cluster)',
    selfLink: '',
    generation: '',
    deletionTimestamp: '',
    deletionGracePeriodSeconds: 'use terminationGracePeriodSeconds',
  },
}

export const SPEC_RULE = {
  supported: [
    'containers',
    'initContainers',
    'volumes',
    'restartPolicy',
    'terminationGracePeriodSeconds',
    'hostNetwork',
    'hostPID',
    'hostIPC',
    'shareProcessNamespace',
    'hostname',
    'dnsPolicy',
    'dnsConfig',
    'runtimeClassName',
  ],
  unsupported: {
    imagePullSecrets: 'pass --creds/--auth or use a docker config file (~/.docker/config.json)',
    securityContext: 'set securityContext on each container',
    nodeName: 'podctl runs the pod on this node',
    nodeSelector: 'podctl runs the pod on this node',
    affinity: 'podctl runs the pod on this node',
    tolerations: 'podctl runs the pod on this node',
    topologySpreadConstraints: 'podctl runs the pod on this node',
    schedulerName: 'podctl runs the pod on this node',
    schedulingGates: '',
    priority: '',
    priorityClassName: '',
    preemptionPolicy: '',
    serviceAccountName: 'there is no API server to issue a token',
    serviceAccount: 'there is no API server to issue a token',
    automountServiceAccountToken: 'there is no API server to issue a token',
    enableServiceLinks: 'there are no Services without an API server',
    subdomain: '',
    setHostnameAsFQDN: '',
    hostAliases: '',
    readinessGates: '',
    ephemeralContainers: '',
    activeDeadlineSeconds: 'use --timeout',
    overhead: '',
    os: '',
    hostUsers: '',
    resourceClaims: '',
    resources: 'set resources on each container',
  },
}

export const CONTAINER_RULE = {
  supported: [
    'name',
    'image',
    'imagePullPolicy',
    'command',
    'args',
    'workingDir',
    'env',
    'ports',
    'resources',
    'securityContext',
    'lifecycle',
    'volumeMounts',
    'terminationMessagePath',
    'terminationMessagePolicy',
    'livenessProbe',
    'readinessProbe',
    'startupProbe',
  ],
  unsupported: {
    envFrom: 'list each variable under env with a value',
    stdin: 'use podctl exec/attach after run',
    stdinOnce: '',
    tty: '',
    volumeDevices: '',
    resizePolicy: '',
    restartPolicy: 'sidecar init containers are not supported; set the pod restartPolicy',
    stopSignal: '',
  },
}

export const ENV_RULE = {supported: ['name', 'value'], unsupported: {valueFrom: 'use value'}}
export const PORT_RULE = {supported: ['name', 'containerPort', 'hostPort', 'protocol', 'hostIP']}
export const RESOURCES_RULE = {supported: ['limits', 'requests'], unsupported: {claims: ''}}
export const RESOURCE_LIST_RULE = {
  supported: ['cpu', 'memory'],
  unsupported: {
    'ephemeral-storage': 'podctl sets cpu and memory only',
    'hugepages-2Mi': 'podctl sets cpu and memory only',
    'hugepages-1Gi': 'podctl sets cpu and memory only',
  },
}
export const SECURITY_CONTEXT_RULE = {
  supported: [
    'runAsUser',
    'runAsGroup',
    'runAsNonRoot',
    'privileged',
    'readOnlyRootFilesystem',
    'allowPrivilegeEscalation',
    'capabilities',
  ],
  unsupported: {
    seLinuxOptions: '',
    seccompProfile: 'containers run Unconfined, as the kubelet does by default',
    appArmorProfile: '',
    procMount: '',
    windowsOptions: '',
  },
}
export const CAPABILITIES_RULE = {supported: ['add', 'drop']}
export const LIFECYCLE_RULE = {supported: ['postStart', 'preStop'], unsupported: {stopSignal: ''}}
export const HANDLER_RULE = {supported: ['exec', 'httpGet', 'tcpSocket', 'sleep']}
export const EXEC_RULE = {supported: ['command']}
export const VOLUME_MOUNT_RULE = {
  supported: ['name', 'mountPath', 'readOnly'],
  unsupported: {
    subPath: 'mount a hostPath of the subdirectory instead',
    subPathExpr: '',
    mountPropagation: '',
    recursiveReadOnly: '',
  },
}
const VOLUME_SOURCES_UNSUPPORTED = Object.fromEntries(
  [
    'configMap',
    'secret',
    'persistentVolumeClaim',
    'projected',
    'downwardAPI',
    'nfs',
    'csi',
    'ephemeral',
    'image',
    'iscsi',
    'gitRepo',
    'local',
  ].map((name) => [name, 'podctl supports hostPath and emptyDir volumes']),
)
export const VOLUME_RULE = {supported: ['name', 'hostPath', 'emptyDir'], unsupported: VOLUME_SOURCES_UNSUPPORTED}
export const HOST_PATH_RULE = {supported: ['path', 'type']}
export const EMPTY_DIR_RULE = {supported: ['medium'], unsupported: {sizeLimit: ''}}
export const DNS_CONFIG_RULE = {supported: ['nameservers', 'searches', 'options']}
export const DNS_OPTION_RULE = {supported: ['name', 'value']}
