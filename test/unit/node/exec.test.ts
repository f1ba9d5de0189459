import {describe, expect, it} from 'vitest'

import {DeadlineExceededError, NotFoundError} from '../../../src/lib/errors.js'
import {EXEC_DEADLINE_GRACE_MS, EXEC_UNBOUNDED_DEADLINE_MS, execInContainer, execTiming} from '../../../src/lib/node/exec.js'
import type {CriClient} from '../../../src/lib/cri/client.js'
import type {Container} from '../../../src/generated/runtime/v1/api.js'

describe('execTiming', () => {
  it('sends no limit and keeps a generous deadline without --timeout', () => {
    expect(execTiming(undefined)).toEqual({timeoutSeconds: 0, deadlineMs: EXEC_UNBOUNDED_DEADLINE_MS})
  })

  it('rounds the command timeout up to whole seconds and makes the deadline longer', () => {
    expect(execTiming(5000)).toEqual({timeoutSeconds: 5, deadlineMs: 5000 + EXEC_DEADLINE_GRACE_MS})
    expect(execTiming(1500)).toEqual({timeoutSeconds: 2, deadlineMs: 2000 + EXEC_DEADLINE_GRACE_MS})
    expect(execTiming(1)).toEqual({timeoutSeconds: 1, deadlineMs: 1000 + EXEC_DEADLINE_GRACE_MS})
  })
})

describe('execInContainer', () => {
  const exited = {id: 'abcdef1234567890', metadata: {name: 'app', attempt: 0}, state: 'CONTAINER_EXITED'} as Container
  const noCalls = {runtime: () => Promise.reject(new Error('must not call the runtime'))} as unknown as CriClient

  it('refuses a container that is not running, before calling the runtime', async () => {
    await expect(execInContainer(noCalls, exited, ['ls'])).rejects.toMatchObject({
      code: 'ContainerNotRunning',
      exitCode: 9,
      message: 'container app (abcdef1234567) is not running (exited); exec needs a running container',
    })
  })

  it('sends the command timeout in the request and the longer deadline on the call', async () => {
    const calls: unknown[] = []
    const client = {
      async runtime(...args: unknown[]) {
        calls.push(args)
        return {exitCode: 3, stdout: Buffer.from('o'), stderr: Buffer.from('e')}
      },
    } as unknown as CriClient
    const running = {...exited, state: 'CONTAINER_RUNNING'} as Container
    const outcome = await execInContainer(client, running, ['sh', '-c', 'exit 3'], {timeoutMs: 2000})
    expect(outcome).toEqual({exitCode: 3, stdout: Buffer.from('o'), stderr: Buffer.from('e')})
    expect(calls).toEqual([
      [
        'execSync',
        {containerId: running.id, cmd: ['sh', '-c', 'exit 3'], timeout: '2'},
        {timeoutMs: 2000 + EXEC_DEADLINE_GRACE_MS, signal: undefined},
      ],
    ])
  })
})

describe('execInContainer timeouts', () => {
  const running = {id: 'abcdef1234567890', metadata: {name: 'app', attempt: 0}, state: 'CONTAINER_RUNNING'} as Container

  it("turns the runtime's deadline answer into a message about the command's --timeout", async () => {
    const client = {
      async runtime() {
        throw new DeadlineExceededError('ExecSync got no answer')
      },
    } as unknown as CriClient
    await expect(execInContainer(client, running, ['sleep', '9'], {timeoutMs: 2000})).rejects.toMatchObject({
      exitCode: 4,
      message:
        'command "sleep 9" in container app (abcdef1234567) did not finish within 2s (--timeout) ' +
        'and was stopped; raise --timeout to give it longer',
    })
  })

  it("turns CRI-O's timed-out answer (exit -1, conmon's message) into the same DeadlineExceeded, exit 4", async () => {
    const client = {
      async runtime() {
        return {exitCode: -1, stdout: Buffer.alloc(0), stderr: Buffer.from('command timed out')}
      },
    } as unknown as CriClient
    await expect(execInContainer(client, running, ['sleep', '9'], {timeoutMs: 1000})).rejects.toMatchObject({
      code: 'DeadlineExceeded',
      exitCode: 4,
      message:
        'command "sleep 9" in container app (abcdef1234567) did not finish within 1s (--timeout) ' +
        'and was stopped; raise --timeout to give it longer',
    })
  })

  it('keeps a command that itself exits -1 with other output, or any answer without --timeout, as its exit code', async () => {
    const answering = (stderr: string) =>
      ({
        async runtime() {
          return {exitCode: -1, stdout: Buffer.alloc(0), stderr: Buffer.from(stderr)}
        },
      }) as unknown as CriClient
    await expect(execInContainer(answering('boom'), running, ['x'], {timeoutMs: 1000})).resolves.toMatchObject({exitCode: -1})
    await expect(execInContainer(answering('command timed out'), running, ['x'])).resolves.toMatchObject({exitCode: -1})
  })

  it('passes other failures through unchanged', async () => {
    const failure = new NotFoundError('ExecSync: container gone')
    const client = {
      async runtime() {
        throw failure
      },
    } as unknown as CriClient
    await expect(execInContainer(client, running, ['true'], {timeoutMs: 2000})).rejects.toBe(failure)
  })
})
