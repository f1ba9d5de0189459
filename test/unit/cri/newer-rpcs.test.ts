import {describe, expect, it} from 'vitest'

import type {CriClient} from '../../../src/lib/cri/client.js'
import {callNewerRpc} from '../../../src/lib/cri/newer-rpcs.js'
import {ExitCode, NotFoundError, UnimplementedError} from '../../../src/lib/errors.js'

/** A client whose Version answers `version` (or fails when it is an Error). */
function clientWith(version: Error | {runtimeName: string; runtimeVersion: string}): CriClient {
  return {
    runtimeEndpoint: 'unix:///run/cri.sock',
    async runtime() {
      if (version instanceof Error) throw version
      return version
    },
  } as unknown as CriClient
}

const unimplemented = async () => {
  throw new UnimplementedError('runtime at unix:///run/cri.sock does not implement CheckpointContainer')
}

describe('callNewerRpc', () => {
  it('names the runtime from Version, without its leading v, and keeps exit 6', async () => {
    const error = await callNewerRpc(
      clientWith({runtimeName: 'containerd', runtimeVersion: 'v1.6.20'}),
      'CheckpointContainer',
      unimplemented,
    ).catch((error_: unknown) => error_)
    expect(error).toBeInstanceOf(UnimplementedError)
    expect((error as UnimplementedError).exitCode).toBe(ExitCode.UNIMPLEMENTED)
    expect((error as Error).message).toBe(
      "containerd 1.6.20 does not implement CheckpointContainer (the CRI's checkpoint API needs containerd 1.7+ or CRI-O 1.25+)",
    )
  })

  it('falls back to the endpoint when Version fails too', async () => {
    const error = await callNewerRpc(clientWith(new Error('down')), 'RuntimeConfig', unimplemented).catch((error_: unknown) => error_)
    expect((error as Error).message).toBe(
      "runtime at unix:///run/cri.sock does not implement RuntimeConfig (the CRI's RuntimeConfig needs containerd 2.0+ or CRI-O 1.28+)",
    )
  })

  it('passes every other failure and every answer through', async () => {
    const client = clientWith({runtimeName: 'containerd', runtimeVersion: 'v1.7.0'})
    const notFound = new NotFoundError('CheckpointContainer: container "x" not found')
    await expect(
      callNewerRpc(client, 'CheckpointContainer', async () => {
        throw notFound
      }),
    ).rejects.toBe(notFound)
    await expect(callNewerRpc(client, 'RuntimeConfig', async () => 'answer')).resolves.toBe('answer')
  })
})
