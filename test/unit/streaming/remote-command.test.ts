import {PassThrough, Readable} from 'node:stream'

import {afterEach, describe, expect, it} from 'vitest'

import {DeadlineExceededError, InterruptedError, RuntimeError, StreamingUnavailableError} from '../../../src/lib/errors.js'
import {parseDetachKeys} from '../../../src/lib/streaming/detach-keys.js'
import {withLocalStreams} from '../../../src/lib/streaming/local.js'
import {parseStatus, runRemoteCommand, type TerminalSource} from '../../../src/lib/streaming/remote-command.js'
import {usableUrl} from '../../../src/lib/streaming/runtime-streams.js'
import {FakeSpdyServer, type ServerStream} from '../../support/fake-spdy-server.js'

const exitStatus = (code: number) =>
  JSON.stringify({
    metadata: {},
    status: 'Failure',
    message: `command terminated with non-zero exit code: exit code ${code}`,
    reason: 'NonZeroExitCode',
    details: {causes: [{reason: 'ExitCode', message: String(code)}]},
  })

describe('parseStatus (the v4 error stream)', () => {
  it('reads success, nothing at all, and the exit code of a failed command', () => {
    expect(parseStatus('{"metadata":{},"status":"Success"}')).toEqual({exitCode: 0})
    expect(parseStatus('')).toEqual({exitCode: 0})
    expect(parseStatus(exitStatus(3))).toEqual({exitCode: 3})
    expect(parseStatus(exitStatus(130))).toEqual({exitCode: 130})
  })

  it('turns any other failure into a one-line RuntimeError with the server message', () => {
    const internal = JSON.stringify({
      status: 'Failure',
      message: 'error executing command in container:\n exec: "nope": not found',
      reason: 'InternalError',
    })
    expect(() => parseStatus(internal)).toThrow(new RuntimeError('error executing command in container: exec: "nope": not found'))
    expect(() => parseStatus('not json\nat all')).toThrow(new RuntimeError('the streaming server failed: not json at all'))
  })
})

describe('usableUrl', () => {
  it('accepts absolute http(s) URLs and refuses empty, relative or other URLs with StreamingUnavailable', () => {
    expect(usableUrl('http://127.0.0.1:1234/exec/abc', 'Exec').href).toBe('http://127.0.0.1:1234/exec/abc')
    expect(() => usableUrl('', 'Exec at unix:///x')).toThrow(StreamingUnavailableError)
    expect(() => usableUrl('', 'Exec at unix:///x')).toThrow(
      'Exec at unix:///x answered without a streaming URL; ' +
        'the runtime needs a streaming server (containerd: stream_server_address in its CRI config)',
    )
    expect(() => usableUrl('/exec/abc', 'Exec')).toThrow('answered an unusable streaming URL "/exec/abc"')
    expect(() => usableUrl('ws://h/exec/abc', 'Exec')).toThrow('answered a ws URL; podctl streams over http(s) only')
  })
})

describe('runRemoteCommand against a fake streaming server', () => {
  let server: FakeSpdyServer | undefined

  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  /** A server that runs `cat` with exit code `code`: stdin back on stdout, the status when stdin ends. */
  async function catServer(code: number): Promise<URL> {
    server = new FakeSpdyServer(['v4.channel.k8s.io'])
    const byType = new Map<string, ServerStream>()
    server.onStream = (stream) => byType.set(stream.headers.streamtype, stream)
    server.onData = (stream, data) => {
      if (stream.headers.streamtype === 'stdin') byType.get('stdout')?.write(data)
    }

    server.onFin = (stream, connection) => {
      if (stream.headers.streamtype !== 'stdin') return
      byType.get('stderr')?.write('done\n')
      byType.get('stdout')?.end()
      byType.get('stderr')?.end()
      byType.get('error')?.write(code === 0 ? '{"metadata":{},"status":"Success"}' : exitStatus(code))
      for (const other of byType.values()) other.reset()
      connection.close()
    }

    return new URL(await server.listen())
  }

  it('sends stdin (its end as FIN), copies stdout and stderr apart, and returns the exit code', async () => {
    const url = await catServer(7)
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const outcome = await runRemoteCommand(url, {
      stdin: Readable.from([Buffer.from('piped\n')]),
      stdout,
      stderr,
      tty: false,
      timeoutMs: 5000,
    })
    expect(outcome).toEqual({exitCode: 7})
    expect(stdout.read()?.toString()).toBe('piped\n')
    expect(stderr.read()?.toString()).toBe('done\n')
    expect(server?.connections[0].streams.map((s) => s.headers.streamtype)).toEqual(['error', 'stdin', 'stdout', 'stderr'])
  })

  it('with a TTY opens a resize stream instead of stderr and sends the size, then each change', async () => {
    const url = await catServer(0)
    let resized: () => void = () => {}
    let size = {width: 80, height: 24}
    const terminal: TerminalSource = {
      size: () => size,
      onResize(listener) {
        resized = listener
        return () => {}
      },
    }
    const stdin = new PassThrough()
    const session = runRemoteCommand(url, {stdin, stdout: new PassThrough(), tty: true, terminal, timeoutMs: 5000})
    await until(() => server?.connections[0]?.streams.find((s) => s.headers.streamtype === 'resize')?.data.length === 1)
    size = {width: 120, height: 40}
    resized()
    const resize = server!.connections[0].streams.find((s) => s.headers.streamtype === 'resize')!
    await until(() => resize.data.length === 2)
    stdin.end()
    expect(await session).toEqual({exitCode: 0})
    expect(resize.data.map(String)).toEqual(['{"Width":80,"Height":24}', '{"Width":120,"Height":40}'])
    expect(server!.connections[0].streams.map((s) => s.headers.streamtype)).toEqual(['error', 'stdin', 'stdout', 'resize'])
  })

  it('an abort (Ctrl-C without a TTY) ends the session with Interrupted', async () => {
    const url = await catServer(0)
    const controller = new AbortController()
    const session = runRemoteCommand(url, {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      tty: false,
      signal: controller.signal,
      timeoutMs: 5000,
    })
    await until(() => server?.connections[0]?.streams.length === 3)
    controller.abort()
    await expect(session).rejects.toThrow(InterruptedError)
  })

  it('the detach keys end a -it session with exit 0, sending neither them nor an end of stdin', async () => {
    const url = await catServer(0)
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const session = withLocalStreams(
      {stdin: true, tty: true, detachKeys: parseDetachKeys('ctrl-p,ctrl-q'), streams: {stdin, stdout, stderr: new PassThrough()}},
      (io) => runRemoteCommand(url, {...io, tty: true, timeoutMs: 5000}),
    )
    stdin.write('ls\r\u0010')
    await until(() => String(stdout.read() ?? '').includes('ls\r'))
    stdin.write('\u0011more')
    expect(await session).toEqual({exitCode: 0, detached: true})
    const sent = server!.connections[0].streams.find((s) => s.headers.streamtype === 'stdin')!
    expect(Buffer.concat(sent.data).toString()).toBe('ls\r')
    expect(sent.finished).toBe(false)
  })

  it('a server that refuses the session, or none at all, is StreamingUnavailable', async () => {
    server = new FakeSpdyServer(['v4.channel.k8s.io'], {status: 404, body: 'token not found'})
    const url = new URL(await server.listen())
    const io = {stdout: new PassThrough(), tty: false, timeoutMs: 5000}
    await expect(runRemoteCommand(url, io)).rejects.toThrow(
      new StreamingUnavailableError(`the streaming server at http://${url.host} refused the session: HTTP 404 token not found`),
    )
    await server.close()
    server = undefined
    await expect(runRemoteCommand(url, io)).rejects.toThrow(
      new StreamingUnavailableError(`cannot reach the runtime's streaming server at http://${url.host} (ECONNREFUSED)`),
    )
  })

  it('a connection lost before the exit status is a RuntimeError, not exit 0', async () => {
    server = new FakeSpdyServer(['v4.channel.k8s.io'])
    server.onStream = (stream, connection) => {
      if (stream.headers.streamtype !== 'stderr') return
      // Once the session runs: some output, then the connection drops.
      setTimeout(() => {
        connection.streams.find((s) => s.headers.streamtype === 'stdout')?.write('partial')
        connection.close()
      }, 100)
    }

    const url = new URL(await server.listen())
    const stdout = new PassThrough()
    await expect(runRemoteCommand(url, {stdout, stderr: new PassThrough(), tty: false, timeoutMs: 5000})).rejects.toThrow(
      new RuntimeError("the connection to the runtime's streaming server closed before the command's exit status arrived"),
    )
    expect(stdout.read()?.toString()).toBe('partial')
  })

  it('a server that never accepts the streams fails at the deadline', async () => {
    server = new FakeSpdyServer(['v4.channel.k8s.io'], undefined, true)
    const url = new URL(await server.listen())
    await expect(runRemoteCommand(url, {stdout: new PassThrough(), tty: false, timeoutMs: 300})).rejects.toThrow(
      new DeadlineExceededError("the streaming server did not accept the session's streams within 300ms"),
    )
  })
})

async function until(check: () => boolean | undefined): Promise<void> {
  const deadline = Date.now() + 5000
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met within 5s')
    await new Promise((resolve) => {
      setTimeout(resolve, 10)
    })
  }
}
