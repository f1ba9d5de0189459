import type {CriClient} from '../cri/client.js'
import {NotFoundError} from '../errors.js'
import {previousLogPath} from '../logs/cri-log.js'
import type {Container, ContainerState} from '../../generated/runtime/v1/api.js'
import {shortId} from '../kube/helpers.js'

export interface ContainerLogTarget {
  /** The file to read, on the node's filesystem. */
  path: string
  state: ContainerState
  /** Whether following makes sense: the container may still write to this file. */
  live: boolean
}

/** Where a container's log file is (ContainerStatus.log_path), or its previous attempt's. */
export async function containerLogTarget(
  client: CriClient,
  container: Container,
  options: {previous?: boolean} = {},
): Promise<ContainerLogTarget> {
  const {status} = await client.runtime('containerStatus', {containerId: container.id, verbose: false})
  const name = container.metadata?.name ?? shortId(container.id)
  const logPath = status?.logPath ?? ''
  if (logPath === '') {
    throw new NotFoundError(
      `container ${name} (${shortId(container.id)}) has no log file: it was created without a log path (its pod has no log directory)`,
    )
  }

  const state = status?.state ?? container.state
  if (!options.previous) return {path: logPath, state, live: isLive(state)}

  const previous = previousLogPath(logPath)
  if (previous === undefined) {
    const attempt = status?.metadata?.attempt ?? container.metadata?.attempt ?? 0
    throw new NotFoundError(
      attempt === 0
        ? `container ${name} is on its first attempt (0): there is no previous attempt's log`
        : `cannot tell the previous attempt's log from ${logPath}: it is not named <attempt>.log`,
    )
  }

  return {path: previous, state, live: false}
}

/** Running or about to run: its log file may still grow. */
export function isLive(state: `${ContainerState}`): boolean {
  return state === 'CONTAINER_RUNNING' || state === 'CONTAINER_CREATED'
}

/** For --follow: asks the runtime whether the container still runs; a removed container does not. */
export function containerLiveness(client: CriClient, containerId: string): () => Promise<boolean> {
  return async () => {
    try {
      const {status} = await client.runtime('containerStatus', {containerId, verbose: false})
      return isLive(status?.state ?? 'CONTAINER_UNKNOWN')
    } catch (error) {
      if (error instanceof NotFoundError) return false
      throw error
    }
  }
}
