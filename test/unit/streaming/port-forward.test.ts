import net from 'node:net'

import {afterEach, describe, expect, it} from 'vitest'

import {UsageError} from '../../../src/lib/errors.js'
import {expandAddresses, forwardingLine, parsePortSpec, startPortForward} from '../../../src/lib/streaming/port-forward.js'
import {FakeSpdyServer, type ServerStream} from '../../support/fake-spdy-server.js'

describe('parsePortSpec', () => {
  it("reads kubectl's forms", () => {
    expect(parsePortSpec('8080')).toEqual({localPort: 8080, remotePort: 8080})
    expect(parsePortSpec('9000:80')).toEqual({localPort: 9000, remotePort: 80})
    expect(parsePortSpec(':80')).toEqual({localPort: 0, remotePort: 80})
    expect(parsePortSpec('0:80')).toEqual({localPort: 0, remotePort: 80})
  })

  it('refuses anything else with a usage error naming the argument', () => {
    for (const bad of ['http', '80:', '1:2:3', '0', '70000', '70000:80', '-1']) expect(() => parsePortSpec(bad), bad).toThrow(UsageError)
    expect(() => parsePortSpec('x:80')).toThrow(
      'port "x:80": not a port; give [LOCAL:]REMOTE, e.g. 8080, 9000:80 or :80 (a free local port)',
    )
  })
})

describe('expandAddresses', () => {
  it('expands localhost to 127.0.0.1 and an optional ::1, keeps the rest', () => {
    expect(expandAddresses(['localhost', ' 10.0.0.1', ''])).toEqual([
      {address: '127.0.0.1', optional: false},
      {address: '::1', optional: true},
      {address: '10.0.0.1', optional: false},
    ])
  })
})

describe('forwardingLine', () => {
  it("prints kubectl's line, IPv6 in brackets", () => {
    expect(forwardingLine({address: '127.0.0.1', localPort: 4000, remotePort: 80})).toBe('Forwarding from 127.0.0.1:4000 -> 80')
    expect(forwardingLine({address: '::1', localPort: 4000, remotePort: 80})).toBe('Forwarding from [::1]:4000 -> 80')
  })
})

describe('startPortForward against a fake streaming server', () => {
  let server: FakeSpdyServer | undefined

  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('pairs an error and a data stream per connection, carries bytes both ways and half-closes as FIN', async () => {
    server = new FakeSpdyServer(['portforward.k8s.io'])
    // An upper-casing echo that answers at the client's FIN, then finishes its side.
    const received = new Map<number, string>()
    server.onData = (stream, data) => received.set(stream.id, (received.get(stream.id) ?? '') + data.toString())
    server.onFin = (stream) => {
      if (stream.headers.streamtype !== 'data') return
      stream.write(`${stream.headers.port}:${received.get(stream.id)?.toUpperCase()}`)
      stream.end()
    }

    const url = new URL(await server.listen())
    const lines: string[] = []
    const forwarder = await startPortForward(
      url,
      [
        {localPort: 0, remotePort: 8080},
        {localPort: 0, remotePort: 9090},
      ],
      {
        addresses: ['127.0.0.1'],
        timeoutMs: 5000,
        onLine: (line) => lines.push(line),
      },
    )
    expect(forwarder.listening.map((l) => l.remotePort)).toEqual([8080, 9090])
    expect(await roundTrip(forwarder.listening[0].localPort, 'hello')).toBe('8080:HELLO')
    expect(await roundTrip(forwarder.listening[1].localPort, 'two')).toBe('9090:TWO')
    const streams = server.connections[0].streams.map((s) => s.headers)
    expect(streams).toEqual([
      {streamtype: 'error', port: '8080', requestid: '0'},
      {streamtype: 'data', port: '8080', requestid: '0'},
      {streamtype: 'error', port: '9090', requestid: '1'},
      {streamtype: 'data', port: '9090', requestid: '1'},
    ])
    // podctl never writes on an error stream: it closes its side at once.
    expect(server.connections[0].streams.filter((s) => s.headers.streamtype === 'error').every((s) => s.finished)).toBe(true)
    expect(lines).toEqual([
      `Handling connection for ${forwarder.listening[0].localPort}`,
      `Handling connection for ${forwarder.listening[1].localPort}`,
    ])
    forwarder.close()
    await forwarder.ended
    await expect(roundTrip(forwarder.listening[0].localPort, 'x')).rejects.toThrow('ECONNREFUSED')
  })

  it("reports the server's error for a connection and closes it; losing the session ends the forwarder", async () => {
    server = new FakeSpdyServer(['portforward.k8s.io'])
    server.onStream = (stream: ServerStream) => {
      if (stream.headers.streamtype !== 'error') return
      stream.write('error forwarding port 8080 to pod x: connection refused')
      stream.end()
    }

    const url = new URL(await server.listen())
    const lines: string[] = []
    const forwarder = await startPortForward(url, [{localPort: 0, remotePort: 8080}], {
      addresses: ['127.0.0.1'],
      timeoutMs: 5000,
      onLine: (line, to) => lines.push(`${to}: ${line}`),
    })
    expect(await roundTrip(forwarder.listening[0].localPort, 'x')).toBe('')
    expect(lines).toContain('stderr: error forwarding port 8080: error forwarding port 8080 to pod x: connection refused')
    server.connections[0].close()
    await expect(forwarder.ended).rejects.toThrow("lost the connection to the runtime's streaming server; port-forward ended")
  })

  it('a local port in use is a usage error and nothing is left listening', async () => {
    server = new FakeSpdyServer(['portforward.k8s.io'])
    const url = new URL(await server.listen())
    const taken = net.createServer()
    await new Promise<void>((resolve) => {
      taken.listen(0, '127.0.0.1', resolve)
    })
    const port = (taken.address() as net.AddressInfo).port
    await expect(
      startPortForward(
        url,
        [
          {localPort: 0, remotePort: 1},
          {localPort: port, remotePort: 2},
        ],
        {addresses: ['127.0.0.1'], timeoutMs: 5000},
      ),
    ).rejects.toThrow(new UsageError(`cannot listen on 127.0.0.1:${port}: the port is in use; pick another local port`))
    taken.close()
    expect(server.connections).toEqual([])
  })
})

/** Sends `text`, half-closes, and returns everything the other end sent before closing. */
function roundTrip(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({host: '127.0.0.1', port})
    let answer = ''
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString()
    })
    // A reset after the server's error is a closed connection too.
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? resolve(answer) : reject(error)))
    socket.on('close', () => resolve(answer))
    socket.end(text)
  })
}
