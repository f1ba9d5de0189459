/**
 * `checkpoint`: CheckpointContainer for each container, one after the other (the runtime freezes
 * each with CRIU while it writes the archive), the archive path made absolute first: the runtime
 * would read a relative one against its own working directory, not the user's.
 */
import {resolve} from 'node:path'

import type {CriClient} from '../cri/client.js'
import {callNewerRpc} from '../cri/newer-rpcs.js'
import {asPodctlError, type PodctlError, UnimplementedError, UsageError} from '../errors.js'

export interface CheckpointOutcome {
  /** The IDs checkpointed, in order. */
  checkpointed: string[]
  failures: Array<{ref: string; error: PodctlError}>
}

/** The --export archive as the runtime must get it; refuses a missing one before any call. */
export function checkpointLocation(exportPath: string | undefined, cwd = process.cwd()): string {
  if (!exportPath) {
    throw new UsageError('checkpoint needs --export (-e): the tar archive to write the checkpoint to, e.g. --export=/tmp/web.tar')
  }

  return resolve(cwd, exportPath)
}

/**
 * One CheckpointContainer per ID; a failure is kept and the next one goes on (crictl stops at the
 * first: `stopAtFailure`), except UNIMPLEMENTED: the runtime would refuse every one alike.
 */
export async function checkpointContainers(
  client: CriClient,
  ids: readonly string[],
  location: string,
  options: {stopAtFailure?: boolean; onCheckpointed?: (id: string) => void} = {},
): Promise<CheckpointOutcome> {
  const outcome: CheckpointOutcome = {checkpointed: [], failures: []}
  for (const id of ids) {
    try {
      await callNewerRpc(client, 'CheckpointContainer', () => client.runtime('checkpointContainer', {containerId: id, location}))
      outcome.checkpointed.push(id)
      options.onCheckpointed?.(id)
    } catch (error) {
      const failure = asPodctlError(error)
      outcome.failures.push({ref: id, error: failure})
      if (options.stopAtFailure || failure instanceof UnimplementedError) break
    }
  }

  return outcome
}
