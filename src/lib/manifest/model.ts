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

export interface SecurityContextModel {
  runAsUser?: number
  runAsGroup?: number
  runAsNonRoot?: boolean
  privileged?: boolean
  readOnlyRootFilesystem?: boolean
  allowPrivilegeEscalation?: boolean
  capabilities?: {add: string[]; drop: string[]}
}

export interface VolumeMountModel {
  name: string
  mountPath: string
  readOnly: boolean
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
  env: Array<{name: string; value: string}>
  ports: ContainerPortModel[]
  resources: {limits: ResourceListModel; requests: ResourceListModel}
  securityContext?: SecurityContextModel
  lifecycle: {postStart?: LifecycleHandler; preStop?: LifecycleHandler}
  livenessProbe?: ProbeModel
  readinessProbe?: ProbeModel
  startupProbe?: ProbeModel
  volumeMounts: VolumeMountModel[]
  terminationMessagePath: string
  terminationMessagePolicy: 'File' | 'FallbackToLogsOnError'
  /** crictl container configs only: labels/annotations of their own, log_path. */
  extraLabels?: Record<string, string>
  extraAnnotations?: Record<string, string>
  logPath?: string
}

export interface VolumeModel {
  name: string
  hostPath?: {path: string; type: HostPathType}
  emptyDir?: Record<string, never>
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
  dnsPolicy: DnsPolicy
  dnsConfig?: {nameservers: string[]; searches: string[]; options: Array<{name: string; value?: string}>}
  runtimeClassName?: string
  volumes: VolumeModel[]
  initContainers: ContainerModel[]
  containers: ContainerModel[]
  /** crictl pod configs only: an explicit log_directory and starting attempt. */
  logDirectory?: string
  attempt?: number
}

export {type ContainerType, type PullPolicy, type RestartPolicy} from '../kube/labels.js'
