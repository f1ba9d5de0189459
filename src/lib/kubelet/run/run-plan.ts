/**
 * `run --dry-run`: the CRI requests `run` would send for each pod, in order, built by the same
 * translation code — without a single runtime call. Values only the runtime can provide (sandbox
 * and container IDs, the image ID) are shown as <placeholders>; credentials are always redacted.
 */
import type {AuthConfig} from '../../../generated/runtime/v1/api.js'
import type {ContainerModel, ContainerType, IgnoredField, LifecycleHandler, PodModel} from '../../manifest/model.js'
import {type AdmissionVerdict, admitPods} from '../lifecycle/admission.js'
import {generateContainerConfig} from '../kuberuntime/container-config.js'
import {chainCredentials, type CredentialStore, DockerConfigKeyring, type RegistryAuth} from '../../images/credentials.js'
import {applyDefaultImageTag, defaultPullPolicy, parseNormalizedReference} from '../../images/reference.js'
import {makeEnvironmentVariables, nodeDownwardContext} from '../core/env.js'
import {podPullSecrets} from '../volumes/pod-objects.js'
import {type PlannedVolume, planVolumes, POD_IP_PLACEHOLDER} from '../volumes/volume-plan.js'
import {podHostnameAndDomain} from '../../manifest/pod-spec.js'
import {etcHostsPath, managedHostsFile, volumeHostPaths} from '../volumes/pod-dirs.js'
import {podDirectory} from '../core/pod-directory.js'
import {generatePodSandboxConfig} from '../kuberuntime/sandbox.js'
import {REDACTED} from '../../kube/labels.js'
import {initContainerNote} from '../kuberuntime/sidecars.js'

export {REDACTED} from '../../kube/labels.js'

export interface PlannedCall {
  /** e.g. "RuntimeService/RunPodSandbox" */
  rpc: string
  /** When the call is conditional or repeated. */
  note?: string
  request: unknown
}

export interface PodPlan {
  pod: string
  namespace: string
  uid: string
  /** Fields accepted with no effect on a single node (the warning). */
  ignoredFields?: IgnoredField[]
  /** The kubelet's admission verdict (absent with --skip-admission). */
  admission?: AdmissionVerdict
  /** Volumes set up before RunPodSandbox (files listed by path, mode and size; never their content). */
  volumes?: PlannedVolume[]
  /** The managed /etc/hosts every container mounts (pods with their own network), with the IP still to come. */
  etcHosts?: string
  calls: PlannedCall[]
  /** The probes podctl runs from the node while it waits or supervises, per container (absent when none). */
  probes?: Array<Partial<Pick<ContainerModel, 'livenessProbe' | 'readinessProbe' | 'startupProbe'>> & {container: string}>
}

/** A postStart hook that runs from the node, not through the runtime (httpGet, sleep, tcpSocket). */
function nodeHookCall(container: string, hook: Exclude<LifecycleHandler, {exec: unknown}>): PlannedCall {
  if ('httpGet' in hook) {
    const {scheme, host, port, path, httpHeaders} = hook.httpGet
    const shownPort = typeof port === 'number' ? port : `<port ${port}>`
    const url = `${scheme.toLowerCase()}://${host ?? '<pod IP>'}:${shownPort}${path.startsWith('/') ? '' : '/'}${path}`
    return {rpc: 'node: HTTP GET', note: `postStart hook of ${container}, from the node`, request: {url, httpHeaders}}
  }

  if ('sleep' in hook) return {rpc: 'node: sleep', note: `postStart hook of ${container}`, request: hook.sleep}
  const note = `postStart tcpSocket hook of ${container}: the kubelet does not run it, the container is killed (PostStartHookError)`
  return {rpc: 'none', note, request: hook.tcpSocket}
}

export interface PlanSettings {
  logsRoot: string
  podDirRoot: string
  hostResolvConf: string
  nodeMemoryBytes: number
  nodeCpus?: number
  skipAdmission?: boolean
  runtimeHandler?: string
  /** --creds/--auth; else `credentials` (the docker config files) are consulted per image. */
  auth?: RegistryAuth
  credentials?: CredentialStore
}

/** Every secret field of an AuthConfig replaced; the username and server stay visible. */
export function redactAuth(auth: RegistryAuth | undefined): Partial<AuthConfig> | null {
  if (!auth) return null
  const out: Partial<AuthConfig> = {}
  if (auth.username) out.username = auth.username
  if (auth.serverAddress) out.serverAddress = auth.serverAddress
  for (const key of ['password', 'auth', 'identityToken', 'registryToken'] as const) if (auth[key]) out[key] = REDACTED
  return out
}

export async function planPodRun(pod: PodModel, settings: PlanSettings): Promise<PodPlan> {
  const sandboxConfig = generatePodSandboxConfig(pod, {
    attempt: pod.attempt ?? 0,
    logsRoot: settings.logsRoot,
    hostResolvConf: settings.hostResolvConf,
    podDirRoot: settings.podDirRoot,
  })
  const runtimeHandler = settings.runtimeHandler ?? pod.runtimeClassName ?? ''
  const calls: PlannedCall[] = [
    {rpc: 'RuntimeService/RunPodSandbox', request: {config: sandboxConfig, runtimeHandler}},
    {rpc: 'RuntimeService/PodSandboxStatus', request: {podSandboxId: '<sandbox id>', verbose: false}},
  ]
  const volumePaths = volumeHostPaths(pod, settings.podDirRoot)
  const node = await nodeDownwardContext(settings.nodeMemoryBytes, settings.podDirRoot)
  const downward = {...node, podIPs: [POD_IP_PLACEHOLDER]}
  const containers: Array<[ContainerModel, ContainerType]> = [
    ...pod.initContainers.map((container): [ContainerModel, ContainerType] => [container, 'init']),
    ...pod.containers.map((container): [ContainerModel, ContainerType] => [container, 'app']),
  ]
  for (const [container, type] of containers) {
    const image = applyDefaultImageTag(container.image)
    const policy = container.imagePullPolicy ?? defaultPullPolicy(container.image)
    const spec = {image, annotations: sandboxConfig.annotations, runtimeHandler}
    if (policy !== 'Always') {
      calls.push({rpc: 'ImageService/ImageStatus', note: `pull policy ${policy}`, request: {image: spec, verbose: false}})
    }

    if (policy !== 'Never') {
      const secrets = podPullSecrets(pod)?.pullSecrets
      const store = secrets && settings.credentials ? chainCredentials(secrets, settings.credentials) : (secrets ?? settings.credentials)
      const auth = settings.auth ?? (await store?.lookup(parseNormalizedReference(image)))?.[0]?.auth
      calls.push({
        rpc: 'ImageService/PullImage',
        note: policy === 'IfNotPresent' ? 'only when ImageStatus finds no image' : `pull policy ${policy}`,
        request: {image: spec, auth: redactAuth(auth), sandboxConfig},
      })
    }

    const {env} = makeEnvironmentVariables(pod, container, downward)
    const config = generateContainerConfig(pod, container, {
      type,
      attempt: 0,
      imageRef: `<image ID of ${image}>`,
      volumePaths,
      env: env.map(({name, value, secret}) => ({name, value: secret ? REDACTED : value, secret})),
      ...(pod.hostNetwork ? {} : {etcHostsPath: etcHostsPath(settings.podDirRoot, pod.uid)}),
      terminationMessageFile: `${podDirectory(settings.podDirRoot, pod.uid)}/containers/${container.name}/<random>`,
      nodeMemoryBytes: settings.nodeMemoryBytes,
    })
    calls.push(
      {rpc: 'RuntimeService/CreateContainer', request: {podSandboxId: '<sandbox id>', config, sandboxConfig}},
      {
        rpc: 'RuntimeService/StartContainer',
        ...(type === 'init' ? {note: initContainerNote(container)} : {}),
        request: {containerId: `<container id of ${container.name}>`},
      },
    )
    const postStart = container.lifecycle.postStart
    if (postStart && 'exec' in postStart) {
      calls.push({
        rpc: 'RuntimeService/ExecSync',
        note: 'postStart hook',
        request: {containerId: `<container id of ${container.name}>`, cmd: postStart.exec.command},
      })
    } else if (postStart) {
      calls.push(nodeHookCall(container.name, postStart))
    }
  }

  const probes = [...pod.initContainers, ...pod.containers]
    .filter((container) => container.livenessProbe || container.readinessProbe || container.startupProbe)
    .map((container) => ({
      container: container.name,
      ...(container.startupProbe ? {startupProbe: container.startupProbe} : {}),
      ...(container.livenessProbe ? {livenessProbe: container.livenessProbe} : {}),
      ...(container.readinessProbe ? {readinessProbe: container.readinessProbe} : {}),
    }))
  const volumes = planVolumes(pod, volumePaths, downward)
  const {hostname, domain} = podHostnameAndDomain(pod)
  const etcHosts = pod.hostNetwork ? undefined : managedHostsFile(['<pod IP>'], hostname, {domain, hostAliases: pod.hostAliases})
  return {
    pod: pod.name,
    namespace: pod.namespace,
    uid: pod.uid,
    ...(pod.ignoredFields ? {ignoredFields: pod.ignoredFields} : {}),
    ...(etcHosts ? {etcHosts} : {}),
    ...(volumes.length > 0 ? {volumes} : {}),
    calls,
    ...(probes.length > 0 ? {probes} : {}),
  }
}

/** Every pod's plan; without explicit credentials the docker config files say which a pull would use. */
export function planPodRuns(pods: readonly PodModel[], settings: PlanSettings): Promise<PodPlan[]> {
  const credentials = settings.credentials ?? new DockerConfigKeyring()
  const {nodeCpus, skipAdmission, nodeMemoryBytes} = settings
  const verdicts = nodeCpus === undefined || skipAdmission ? [] : admitPods(pods, {cpus: nodeCpus, memoryBytes: nodeMemoryBytes})
  return Promise.all(
    pods.map(async (pod, index) => {
      const {calls, ...plan} = await planPodRun(pod, {...settings, credentials})
      return {...plan, ...(verdicts[index] ? {admission: verdicts[index]} : {}), calls}
    }),
  )
}
