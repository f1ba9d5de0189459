/**
 * Container.exec with user, env or workdir: the command entered from the host, by the same code as
 * `podctl exec --user/-e/-w` (host/host-exec.ts), its output collected instead of inherited, and
 * timeoutMs kept as the CRI's exec keeps it (the command is stopped, DeadlineExceededError).
 */
import {Writable} from 'node:stream'

import type {CriClient} from '../cri/client.js'
import {DeadlineExceededError} from '../errors.js'
import type {Container as CriContainer} from '../../generated/runtime/v1/api.js'
import {execFromHost} from '../host/host-exec.js'

/** A stream that keeps what is written to it. */
function collector(): {stream: Writable; text: () => string} {
  const chunks: Buffer[] = []
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk)
      done()
    },
  })
  return {stream, text: () => Buffer.concat(chunks).toString('utf8')}
}

export async function execEnteredFromHost(
  client: CriClient,
  container: CriContainer,
  cmd: readonly string[],
  options: {timeoutMs?: number; signal?: AbortSignal; user?: string; env?: Readonly<Record<string, string>>; workdir?: string},
): Promise<{exitCode: number; stdout: string; stderr: string}> {
  const [stdout, stderr] = [collector(), collector()]
  // The caller's signal and the time limit, as one (AbortSignal.any needs Node 20.3; podctl supports 20).
  const stop = new AbortController()
  const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => stop.abort(), options.timeoutMs)
  const onAbort = () => stop.abort()
  options.signal?.addEventListener('abort', onAbort, {once: true})
  const result = await execFromHost(client, container, {
    cmd,
    user: options.user,
    env: Object.entries(options.env ?? {}),
    workdir: options.workdir,
    io: {stdout: stdout.stream, stderr: stderr.stream},
    signal: stop.signal,
  }).finally(() => {
    clearTimeout(timer)
    options.signal?.removeEventListener('abort', onAbort)
  })
  if (stop.signal.aborted && !options.signal?.aborted) {
    throw new DeadlineExceededError(
      `command ${JSON.stringify(cmd.join(' '))} did not finish within ${options.timeoutMs} ms (timeoutMs) and was stopped; raise timeoutMs`,
    )
  }

  return {exitCode: result.exitCode, stdout: stdout.text(), stderr: stderr.text()}
}
