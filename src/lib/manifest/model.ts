/**
 * The pod podctl runs, after validation and the API server's defaulting: the subset of a
 * Kubernetes v1 Pod that podctl supports. Both input forms (a Pod manifest, crictl's pair of
 * config files) are translated into this one model; the runtime layer only ever sees it.
 */
import type {PullPolicy, RestartPolicy} from '../kube/labels.js'

// One definition each: the label readers and the image manager use the same values.

export type DnsPolicy = 'ClusterFirst' | 'ClusterFirstWithHostNet' | 'Default' | 'None'
export type HostPathType = '' | 'DirectoryOrCreate' | 'Directory' | 'FileOrCreate' | 'File' | 'Socket' | 'CharDevice' | 'BlockDevice'
export type PortProtocol = 'TCP' | 'UDP' | 'SCTP'

export interface ExecHandler {
  exec: {command: string[]}
}

/** A port by number, or by the name of one of the container's ports (IntOrString). */
export type PortReference = number | string

export interface HttpGetAction {
  /** As written (may carry a query); empty → the request goes to "/". */
  path: string
  port: PortReference
  /** Empty → the pod IP. */
  host?: string
  scheme: 'HTTP' | 'HTTPS'
  httpHeaders: Array<{name: string; value: string}>
}

export interface TcpSocketAction {
  port: PortReference
  host?: string
}

export interface GrpcAction {
  port: number
  /** The service name sent in HealthCheckRequest ("" when absent). */
  service: string
}

/** One handler of a probe (exactly one is set). */
export type ProbeHandler = {exec: {command: string[]}} | {httpGet: HttpGetAction} | {tcpSocket: TcpSocketAction} | {grpc: GrpcAction}

/** A lifecycle hook's handler: exec, httpGet, sleep, or tcpSocket (accepted by the API server, failed by the kubelet). */
export type LifecycleHandler =
  {exec: {command: string[]}} | {httpGet: HttpGetAction} | {tcpSocket: TcpSocketAction} | {sleep: {seconds: number}}

/** A v1 Probe after the API server's defaulting. */
export interface ProbeModel {
  handler: ProbeHandler
  initialDelaySeconds: number
  periodSeconds: number
  timeoutSeconds: number
  successThreshold: number
  failureThreshold: number
  /** The probe's own grace period (liveness and startup only), overriding the pod's on a probe kill. */
  terminationGracePeriodSeconds?: number
}

export interface ContainerPortModel {
  name?: string
  containerPort: number
  hostPort?: number
  protocol: PortProtocol
  hostIP?: string
}

export interface ResourceListModel {
  /** Quantities as written ("500m", "128Mi"); parsed by the translation. */
  cpu?: string
  memory?: string
}

export type ProfileType = 'RuntimeDefault' | 'Unconfined' | 'Localhost'

/** seccompProfile / appArmorProfile: localhostProfile is set exactly when type is Localhost. */
export interface SecurityProfileModel {
  type: ProfileType
  localhostProfile?: string
}

export interface SELinuxOptionsModel {
  user?: string
  role?: string
  type?: string
  level?: string
}

/** A container's securityContext, with the Kubernetes API field names. windowsOptions is read and dropped (Linux only). */
export interface SecurityContextModel {
  runAsUser?: number
  runAsGroup?: number
  runAsNonRoot?: boolean
  privileged?: boolean
  readOnlyRootFilesystem?: boolean
  allowPrivilegeEscalation?: boolean
  capabilities?: {add: string[]; drop: string[]}
  seccompProfile?: SecurityProfileModel
  appArmorProfile?: SecurityProfileModel
  seLinuxOptions?: SELinuxOptionsModel
  procMount?: 'Default' | 'Unmasked'
}

/** CRI NamespaceOption as a crictl config gives it (modes by name; target_id for TARGET). */
export interface NamespaceOptionsModel {
  network: 'POD' | 'CONTAINER' | 'NODE' | 'TARGET'
  pid: 'POD' | 'CONTAINER' | 'NODE' | 'TARGET'
  ipc: 'POD' | 'CONTAINER' | 'NODE' | 'TARGET'
  targetId?: string
}

/** The pod's securityContext (v1.PodSecurityContext), with the Kubernetes API field names. */
export interface PodSecurityContextModel {
  runAsUser?: number
  runAsGroup?: number
  runAsNonRoot?: boolean
  supplementalGroups?: number[]
  supplementalGroupsPolicy?: 'Merge' | 'Strict'
  /** Group that owns the pod's volumes and is added to every container's supplemental groups. */
  fsGroup?: number
  fsGroupChangePolicy?: 'OnRootMismatch' | 'Always'
  sysctls?: Array<{name: string; value: string}>
  seccompProfile?: SecurityProfileModel
  appArmorProfile?: SecurityProfileModel
  seLinuxOptions?: SELinuxOptionsModel
  seLinuxChangePolicy?: 'MountOption' | 'Recursive'
}

/** A field accepted with no effect on a single node (listed in one warning; --strict refuses it). */
export interface IgnoredField {
  path: string
  reason: string
}

export interface VolumeMountModel {
  name: string
  mountPath: string
  readOnly: boolean
  /** A path inside the volume mounted instead of its root (subPathExpr: $(VAR) expanded from the container's env). */
  subPath?: string
  subPathExpr?: string
  mountPropagation?: 'None' | 'HostToContainer' | 'Bidirectional'
  recursiveReadOnly?: 'Disabled' | 'IfPossible' | 'Enabled'
}

/** resourceFieldRef: a container's limit or request, divided (rounded up) by divisor. */
export interface ResourceFieldRefModel {
  containerName?: string
  resource: string
  divisor?: string
}

/** env[].valueFrom (one of). */
export interface EnvVarSourceModel {
  fieldRef?: {fieldPath: string}
  resourceFieldRef?: ResourceFieldRefModel
  configMapKeyRef?: {name: string; key: string; optional: boolean}
  secretKeyRef?: {name: string; key: string; optional: boolean}
  /** A key of a KEY=VALUE file in an emptyDir volume, read when the container starts (EnvFiles). */
  fileKeyRef?: FileKeyRefModel
}

export interface FileKeyRefModel {
  volumeName: string
  /** Relative to the volume, without '..'. */
  path: string
  key: string
  optional: boolean
}

export interface EnvVarModel {
  name: string
  /** '' when valueFrom is set. */
  value: string
  valueFrom?: EnvVarSourceModel
}

export interface EnvFromModel {
  prefix: string
  configMapRef?: {name: string; optional: boolean}
  secretRef?: {name: string; optional: boolean}
}

export interface ContainerModel {
  name: string
  /** As written in the manifest (the kubelet's requestedImage). */
  image: string
  /** Absent → defaulted from the image tag at run time (the API server's rule). */
  imagePullPolicy?: PullPolicy
  command: string[]
  args: string[]
  workingDir?: string
  env: EnvVarModel[]
  envFrom?: EnvFromModel[]
  ports: ContainerPortModel[]
  resources: {limits: ResourceListModel; requests: ResourceListModel}
  /** What an in-place resize of a resource does (`podctl resize`): NotRequired (the default) or RestartContainer. */
  resizePolicy?: Array<{resourceName: 'cpu' | 'memory'; restartPolicy: 'NotRequired' | 'RestartContainer'}>
  securityContext?: SecurityContextModel
  lifecycle: {postStart?: LifecycleHandler; preStop?: LifecycleHandler}
  livenessProbe?: ProbeModel
  readinessProbe?: ProbeModel
  startupProbe?: ProbeModel
  /** Init containers only: Always makes it a sidecar (started in order, not waited on, kept running). */
  restartPolicy?: 'Always'
  volumeMounts: VolumeMountModel[]
  terminationMessagePath: string
  terminationMessagePolicy: 'File' | 'FallbackToLogsOnError'
  /** Passed to the runtime as they are (CreateContainer stdin, stdin_once, tty). */
  stdin?: boolean
  stdinOnce?: boolean
  tty?: boolean
  /** crictl container configs only: metadata.attempt (the first restart count) and namespace_options as given. */
  attempt?: number
  namespaceOptions?: NamespaceOptionsModel
  /** crictl container configs only: labels/annotations of their own, log_path. */
  extraLabels?: Record<string, string>
  extraAnnotations?: Record<string, string>
  logPath?: string
}

export interface KeyToPathModel {
  key: string
  path: string
  mode?: number
}

export interface DownwardAPIFileModel {
  path: string
  fieldRef?: {fieldPath: string}
  resourceFieldRef?: ResourceFieldRefModel
  mode?: number
}

/** One source of a projected volume; serviceAccountToken and clusterTrustBundle are kept only to be skipped with a warning. */
export interface VolumeProjectionModel {
  configMap?: {name: string; items: KeyToPathModel[]; optional: boolean}
  secret?: {name: string; items: KeyToPathModel[]; optional: boolean}
  downwardAPI?: {items: DownwardAPIFileModel[]}
  skipped?: 'serviceAccountToken' | 'clusterTrustBundle'
}

export interface VolumeModel {
  name: string
  hostPath?: {path: string; type: HostPathType}
  emptyDir?: {medium?: 'Memory'; sizeLimit?: string}
  configMap?: {name: string; items: KeyToPathModel[]; defaultMode: number; optional: boolean}
  secret?: {secretName: string; items: KeyToPathModel[]; defaultMode: number; optional: boolean}
  downwardAPI?: {items: DownwardAPIFileModel[]; defaultMode: number}
  projected?: {sources: VolumeProjectionModel[]; defaultMode: number}
  /**
   * A claim: served from its local directory <claims root>/<namespace>/<claimName> (path, set when
   * the run resolves it; kubelet/volumes/claims.ts), with the claim document of the input if any.
   * A --volume binding keeps this and adds hostPath, which then wins.
   */
  persistentVolumeClaim?: {claimName: string; readOnly: boolean; path?: string; claim?: ClaimObject}
  /** A source with no single-node plugin (nfs, csi, ...): bound to a host directory by --volume NAME=DIR. */
  external?: {source: string}
  /** An image volume: the image's content, read-only, mounted by the runtime (CRI Mount.image). */
  image?: {reference: string; pullPolicy?: PullPolicy}
}

/** A PersistentVolumeClaim document of the input (Filesystem only); namespace '' matches any pod's namespace. */
export interface ClaimObject {
  name: string
  namespace: string
  accessModes: string[]
  /** spec.resources.requests.storage, as written. */
  storage: string
  storageClassName?: string
  volumeMode: 'Filesystem'
  source: string
}

/** A ConfigMap document of the input. */
export interface ConfigMapObject {
  name: string
  namespace: string
  data: Record<string, string>
  binaryData: Record<string, Buffer>
  immutable: boolean
  source: string
}

/** A Secret document of the input; values decoded (never printed). */
export interface SecretObject {
  name: string
  namespace: string
  type: string
  data: Record<string, Buffer>
  source: string
}

/** The ConfigMaps and Secrets given beside the pods, found by namespace and name. */
export interface InputObjects {
  configMap(namespace: string, name: string): ConfigMapObject | undefined
  secret(namespace: string, name: string): SecretObject | undefined
}

/** The workload a pod came from (Deployment, Job, ...), for messages. */
export interface PodOwnerModel {
  kind: string
  name: string
  /** The object between them that owns the pod: "ReplicaSet web-5d8f9c7b6d", "Job backup-29412345". */
  via?: string
  /** Which of the workload's pods this is (0-based, in the order its controller makes them) and of how many. */
  replica?: number
  replicas?: number
}

/** A pod that starts only once an earlier pod of its workload is ready or completed (OrderedReady, Job parallelism). */
export interface StartAfterModel {
  /** The earlier pod's name (same namespace). */
  pod: string
  until: 'ready' | 'completed'
  /** Why, for messages: "StatefulSet db starts pod db-1 once db-0 is Running and Ready (OrderedReady)". */
  reason: string
}

export interface PodModel {
  /** Where the pod came from ("pod.yaml", "pod.yaml#2", "<stdin>"), for messages. */
  source: string
  name: string
  namespace: string
  uid: string
  /** True when the manifest had no uid and podctl made one up (a --replace may reuse the old pod's). */
  uidGenerated: boolean
  labels: Record<string, string>
  annotations: Record<string, string>
  restartPolicy: RestartPolicy
  terminationGracePeriodSeconds?: number
  hostNetwork: boolean
  hostPID: boolean
  hostIPC: boolean
  shareProcessNamespace: boolean
  hostname?: string
  subdomain?: string
  /** spec.hostnameOverride (alpha): the sandbox hostname as given. */
  hostnameOverride?: string
  setHostnameAsFQDN?: boolean
  hostAliases?: Array<{ip: string; hostnames: string[]}>
  securityContext?: PodSecurityContextModel
  /** Pod-level resources (spec.resources: cpu and memory), the sandbox's cgroup. */
  resources?: {limits: ResourceListModel; requests: ResourceListModel}
  /** spec.overhead as written (set by RuntimeClass admission in a cluster); counted by admission. */
  overhead?: ResourceListModel
  /** spec.os.name; only linux runs here. */
  os?: 'linux'
  /** spec.hostUsers; false asks for a user namespace. */
  hostUsers?: boolean
  activeDeadlineSeconds?: number
  /** Fields accepted with no effect on a single node (the one warning line; --strict refuses them). */
  ignoredFields?: IgnoredField[]
  /** Paths of fields podctl's Kubernetes version does not know, dropped as an API server without their gate drops them. */
  droppedFields?: string[]
  dnsPolicy: DnsPolicy
  dnsConfig?: {nameservers: string[]; searches: string[]; options: Array<{name: string; value?: string}>}
  runtimeClassName?: string
  volumes: VolumeModel[]
  initContainers: ContainerModel[]
  containers: ContainerModel[]
  /** crictl pod configs only: an explicit log_directory and starting attempt. */
  logDirectory?: string
  attempt?: number
  /**
   * crictl pod configs only: linux.cgroup_parent ("" for none) and linux.security_context.namespace_options, sent as
   * they are. A manifest's pod leaves cgroupParent out and gets the kubelet's (kubelet/core/pod-cgroup.ts).
   */
  cgroupParent?: string
  namespaceOptions?: NamespaceOptionsModel
  /** The ConfigMaps and Secrets of the input (env, volumes, imagePullSecrets read them). */
  objects?: InputObjects
  imagePullSecrets?: string[]
  serviceAccountName?: string
  /** The pod's own spec.automountServiceAccountToken, when given (it wins over the ServiceAccount's). */
  automountServiceAccountToken?: boolean
  owner?: PodOwnerModel
  startAfter?: StartAfterModel
  /** Warnings found while reading the pod (a projected source skipped, ...), printed before the run. */
  warnings?: string[]
  /** `sync --watch -f`: the watched manifest file (absolute) the pod comes from; its pods go when it goes. */
  manifestFile?: string
}

export {type ContainerType, type PullPolicy, type RestartPolicy} from '../kube/labels.js'
