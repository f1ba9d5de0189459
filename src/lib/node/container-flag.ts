/**
 * kubectl's `-c NAME` in podctl, where -c is crictl's --config: `exec web -c server -- env` from a
 * kubectl user means the container. When -c's value names no file, it is taken for the container
 * of the pod (and said so); when the pod has no such container either, the error says both.
 */
import {stat} from 'node:fs/promises'

import type {CriClient} from '../cri/client.js'
import {NotFoundError, PodctlError, UsageError} from '../errors.js'
import type {Container} from '../../generated/runtime/v1/api.js'
import {resolveContainer, type ResolveOptions} from './resolve.js'

/** -c's value when it was given on the command line (before "--") and no such file exists; else undefined. */
export async function configFlagAsContainer(argv: readonly string[], config: string | undefined): Promise<string | undefined> {
  if (config === undefined || !shortConfigValues(argv).includes(config)) return undefined
  try {
    await stat(config)
    return undefined
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? config : undefined
  }
}

/** The values given with -c (`-c VALUE`, `-cVALUE`, `-c=VALUE`) before "--". */
function shortConfigValues(argv: readonly string[]): string[] {
  const values: string[] = []
  for (let index = 0; index < argv.length && argv[index] !== '--'; index++) {
    const token = argv[index]
    if (token === '-c' && index + 1 < argv.length) values.push(argv[++index])
    else if (token.startsWith('-c') && !token.startsWith('--')) values.push(token.slice(token.startsWith('-c=') ? 3 : 2))
  }

  return values
}

export interface ContainerArgumentOptions extends ResolveOptions {
  /** -c's value taken for the container (configFlagAsContainer). */
  configAsContainer?: string
}

/** resolveContainer for exec and logs, with kubectl's -c; `note` says how -c was taken. */
export async function resolveContainerArgument(
  client: CriClient,
  ref: string,
  options: ContainerArgumentOptions,
): Promise<{container: Container; note?: string}> {
  const guess = options.configAsContainer
  if (guess === undefined || options.container !== undefined) return {container: await resolveContainer(client, ref, options)}
  try {
    const container = await resolveContainer(client, ref, {...options, container: guess})
    const note =
      `-c ${guess}: no config file of that name, so taken as the container ` +
      `(podctl's -c is crictl's --config; write --container ${guess})`
    return {container, note}
  } catch (error) {
    if (!(error instanceof NotFoundError || error instanceof UsageError)) throw error
    throw new UsageError(
      `cannot read config file ${guess}: no such file (podctl's -c is crictl's --config; a container is --container NAME), ` +
        `and as a container: ${(error as PodctlError).message}`,
    )
  }
}
