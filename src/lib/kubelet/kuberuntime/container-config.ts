/**
 * The kubelet's generateContainerConfig (kuberuntime_container.go and _linux.go): the CreateContainer
 * config of one container, a pure function of the pod, the container and what the runtime told
 * us (image ID and user), shared by `run` and `run --dry-run`.
 */
import type {RuntimeRequest} from '../../cri/client.js'
import type {ContainerModel, ContainerType, PodModel} from '../../manifest/model.js'
import type {DeepPartial, MountPropagation, UserNamespace} from '../../../generated/runtime/v1/api.js'
import {expandReferences} from '../../kube/expansion.js'
import {buildContainerLogsPath} from '../../kube/helpers.js'
import {newContainerAnnotations, newContainerLabels, PodctlAnnotation} from '../../kube/labels.js'
import {volumeMounts} from '../volumes/mounts.js'
import {containerOomScoreAdj, effectiveResources, linuxResources} from '../core/resources.js'
import {podNamespaceOptions} from './sandbox.js'
import {containerSecurityContext} from '../core/security-context.js'

export type ContainerConfig = NonNullable<RuntimeRequest<'createContainer'>['config']>

export {DEFAULT_MASKED_PATHS, DEFAULT_READONLY_PATHS} from '../core/security-context.js'

export interface ContainerConfigOptions {
  type: ContainerType
  /** The restart count: ContainerMetadata.attempt, the restartCount annotation and the log file name. */
  attempt: number
  /** The image ID from the ensure-image flow. */
  imageRef: string
  /** The image's user (ImageStatus image.uid / image.username): used when runAsUser is not set. */
  imageUser?: {uid?: number; username?: string}
  /** Host path of each volume, by name. */
  volumePaths: ReadonlyMap<string, string>
  /** Host file with the kubelet-managed /etc/hosts, when the pod has an IP. */
  etcHostsPath?: string
  /** Host file mounted at terminationMessagePath. */
  terminationMessageFile?: string
  nodeMemoryBytes: number
  /** The environment built by makeEnvironmentVariables (kubelet/env.ts); default: env values expanded in order. */
  env?: ReadonlyArray<{name: string; value: string; secret?: boolean}>
  /** Host paths of subPath mounts prepared before CreateContainer (kubelet/mounts.ts), by volumeMounts index. */
  subPaths?: ReadonlyMap<number, string>
  /** The container's resources after an in-place resize (resize.ts), in place of its spec's; its hash stays the spec's. */
  resized?: ContainerModel['resources']
  /** Each image volume's image, ensured before CreateContainer (volume name → ID and reference). */
  imageVolumes?: ReadonlyMap<string, {imageRef: string; reference: string}>
  /** The sandbox's user namespace (hostUsers: false): every container of the pod is in it. */
  usernsOptions?: DeepPartial<UserNamespace>
}

/** The container's environment in order, each value expanded against the variables before it. */
function containerEnvironment(container: ContainerModel): Array<{name: string; value: string}> {
  const defined = new Map<string, string>()
  return container.env.map(({name, value}) => {
    const expanded = expandReferences(value, (ref) => defined.get(ref))
    defined.set(name, expanded)
    return {name, value: expanded}
  })
}

/** Mounts in the kubelet's order: volumeMounts, the managed /etc/hosts, the termination-message file. */
function containerMounts(
  pod: PodModel,
  container: ContainerModel,
  options: ContainerConfigOptions,
  env: ReadonlyMap<string, string>,
): NonNullable<ContainerConfig['mounts']> {
  const privateMount = 'PROPAGATION_PRIVATE' as MountPropagation
  const mounts: NonNullable<ContainerConfig['mounts']> = volumeMounts(pod, container, options.volumePaths, {
    env,
    subPaths: options.subPaths,
    images: options.imageVolumes,
  })
  const mountsEtcHosts = container.volumeMounts.some((mount) => mount.mountPath === '/etc/hosts')
  if (options.etcHostsPath && !mountsEtcHosts) {
    mounts.push({
      containerPath: '/etc/hosts',
      hostPath: options.etcHostsPath,
      readonly: false,
      selinuxRelabel: false,
      propagation: privateMount,
    })
  }

  if (options.terminationMessageFile) {
    mounts.push({
      containerPath: container.terminationMessagePath,
      hostPath: options.terminationMessageFile,
      readonly: false,
      selinuxRelabel: false,
      propagation: privateMount,
    })
  }

  return mounts
}

/** The kubelet's annotations plus io.podctl.secretEnv: the names (never the values) of the variables taken from a Secret. */
function containerAnnotations(
  pod: PodModel,
  container: ContainerModel,
  options: ContainerConfigOptions,
  env: ReadonlyArray<{name: string; secret?: boolean}>,
): Record<string, string> {
  const sidecarIndex = pod.initContainers.findIndex((init) => init.name === container.name)
  const annotations = newContainerAnnotations(pod, container, options.type, options.attempt, sidecarIndex)
  const secretNames = env.filter((variable) => variable.secret).map((variable) => variable.name)
  if (secretNames.length > 0) annotations[PodctlAnnotation.secretEnv] = JSON.stringify(secretNames)
  return annotations
}

/** The kubelet's generateContainerConfig + generateLinuxContainerConfig. */
export function generateContainerConfig(pod: PodModel, container: ContainerModel, options: ContainerConfigOptions): ContainerConfig {
  const env = options.env ?? containerEnvironment(container)
  const values = new Map(env.map(({name, value}) => [name, value]))
  const expand = (text: string) => expandReferences(text, (name) => values.get(name))
  const resources = effectiveResources(options.resized ? {...container, resources: options.resized} : container)
  const {capabilities, ...security} = containerSecurityContext(pod, container, options.imageUser)
  return {
    metadata: {name: container.name, attempt: options.attempt},
    image: {image: options.imageRef, userSpecifiedImage: container.image},
    command: container.command.map(expand),
    args: container.args.map(expand),
    workingDir: container.workingDir ?? '',
    labels: newContainerLabels(pod, container),
    annotations: containerAnnotations(pod, container, options, env),
    devices: [],
    CDIDevices: [],
    mounts: containerMounts(pod, container, options, values),
    logPath: container.logPath ?? buildContainerLogsPath(container.name, options.attempt),
    stdin: container.stdin ?? false,
    stdinOnce: container.stdinOnce ?? false,
    tty: container.tty ?? false,
    linux: {
      resources: {
        ...linuxResources(resources.cpuRequestMilli, resources.cpuLimitMilli, resources.memoryLimitBytes),
        oomScoreAdj: String(containerOomScoreAdj(pod, container, options.nodeMemoryBytes)),
      },
      securityContext: {
        ...(capabilities ? {capabilities} : {}),
        ...security,
        namespaceOptions: {
          ...containerNamespaceOptions(pod, container),
          ...(options.usernsOptions ? {usernsOptions: options.usernsOptions} : {}),
        },
      },
    },
    envs: env.map(({name, value}) => ({key: name, value: Buffer.from(value, 'utf8')})),
  }
}

/** The pod's namespaces, or a crictl container config's own namespace_options as crictl sends them. */
function containerNamespaceOptions(pod: PodModel, container: ContainerModel): ReturnType<typeof podNamespaceOptions> {
  const given = container.namespaceOptions
  return given ? podNamespaceOptions({...pod, namespaceOptions: given}) : podNamespaceOptions(pod)
}
