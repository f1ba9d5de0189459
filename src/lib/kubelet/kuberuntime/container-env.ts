/**
 * What generateContainerConfig needs that only exists once the sandbox does (the kubelet's
 * GenerateRunContainerOptions): the environment (makeEnvironmentVariables, with status.podIP) and
 * the subPath mounts prepared on the host. A missing ConfigMap, Secret or key, or a bad subPath,
 * is the kubelet's CreateContainerConfigError.
 */
import {type EventSink, warningEvent} from '../../kube/events.js'
import type {ContainerModel, PodModel} from '../../manifest/model.js'
import {EnvReferenceError, type EnvVar, makeEnvironmentVariables, type NodeDownward, nodeDownwardContext} from '../core/env.js'
import {prepareSubPaths, SubPathError} from '../volumes/mounts.js'
import {PodFailedError, PodFailureReason} from '../core/reasons.js'
import type {SandboxContext} from './sandbox.js'

export interface RunContainerOptions {
  env: EnvVar[]
  subPaths: Map<number, string>
}

export async function runContainerOptions(
  pod: PodModel,
  container: ContainerModel,
  sandbox: SandboxContext,
  options: {nodeMemoryBytes: number; events: EventSink; object: string; node?: NodeDownward},
): Promise<RunContainerOptions> {
  try {
    const node = options.node ?? sandbox.node ?? (await nodeDownwardContext(options.nodeMemoryBytes))
    const built = makeEnvironmentVariables(pod, container, {...node, podIPs: sandbox.ips ?? [], volumePaths: sandbox.volumePaths})
    for (const warning of built.warnings) options.events(warningEvent('InvalidEnvironmentVariableNames', warning, options.object))
    const values = new Map(built.env.map(({name, value}) => [name, value]))
    return {env: built.env, subPaths: await prepareSubPaths(container, sandbox.volumePaths, values)}
  } catch (error) {
    const known = error instanceof EnvReferenceError || error instanceof SubPathError || (error as NodeJS.ErrnoException).code !== undefined
    if (!known) throw error
    const message = (error as Error).message
    options.events(warningEvent('Failed', `Error: ${message}`, options.object))
    throw new PodFailedError(message, {reason: PodFailureReason.CreateContainerConfigError, container: container.name})
  }
}
