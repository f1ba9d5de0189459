import {type AddressInfo, createServer, type Server, type Socket} from 'node:net'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {httpProbe} from '../../../src/lib/prober/http.js'
import {requestText} from '../../../src/lib/prober/plain-http.js'

/** What the server answers to each path, byte for byte (split into the writes it makes), and whether it then closes. */
const answers: Record<string, {writes: string[]; close: boolean}> = {
  '/chunked': {
    writes: ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nall \r\n', '4;ext=1\r\ngood\r\n0\r\n\r\n'],
    close: false,
  },
  '/length': {writes: ['HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nokay'], close: false},
  '/early-hints': {writes: ['HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n', 'HTTP/1.1 204 No Content\r\n\r\n'], close: false},
  '/until-close': {writes: ['HTTP/1.0 500 Oops\r\n\r\nbro', 'ken'], close: true},
  '/slow-head': {writes: ['HTTP/1.1 2', '00 OK\r\nContent-', 'Length: 2\r\n\r\no', 'k'], close: false},
  '/cut-body': {writes: ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort'], close: true},
  '/nothing': {writes: [], close: true},
  '/stall-body': {writes: ['HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab'], close: false},
  '/garbage': {writes: ['SSH-2.0-OpenSSH_9.2\r\n\r\n'], close: true},
  '/huge-chunks': {writes: [`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${'4000\r\n'}${'y'.repeat(0x40_00)}\r\n`], close: false},
}

const requests: string[] = []
let server: Server
let port: number

beforeAll(async () => {
  server = createServer((socket: Socket) => {
    let text = ''
    socket.on('data', async (chunk) => {
      text += chunk.toString('latin1')
      if (!text.includes('\r\n\r\n')) return
      requests.push(text)
      const answer = answers[text.split(' ')[1]]
      for (const write of answer.writes) {
        socket.write(write)
        // Each write its own segment, so the reader sees the answer in pieces.
        await new Promise((resolve) => {
          setTimeout(resolve, 5)
        })
      }

      if (answer.close) socket.end()
    })
    socket.on('error', () => {})
  })
  await new Promise<void>((resolve) => {
    server.listen(0, '127.0.0.1', resolve)
  })
  port = (server.address() as AddressInfo).port
})

afterAll(() => {
  server.close()
})

const probe = (path: string) =>
  httpProbe({scheme: 'http', host: '127.0.0.1', port, path, headers: [], userAgent: 'kube-probe/1.36', timeoutMs: 2000})

describe('httpGet probe over a bare socket', () => {
  it("sends the kubelet's request: Host with the port, its headers, Connection: close", async () => {
    await probe('/length')
    expect(requests.at(-1)).toBe(
      `GET /length HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUser-Agent: kube-probe/1.36\r\nAccept: */*\r\nConnection: close\r\n\r\n`,
    )
    expect(requestText(new URL('http://10.0.0.5/a?b=c'), {'X-A': ['1', '2']}, '10.0.0.5:80')).toBe(
      'GET /a?b=c HTTP/1.1\r\nHost: 10.0.0.5:80\r\nX-A: 1\r\nX-A: 2\r\nConnection: close\r\n\r\n',
    )
  })

  it('refuses a header value that would split the request, as Go does', async () => {
    const outcome = await httpProbe({
      scheme: 'http',
      host: '127.0.0.1',
      port,
      path: '/length',
      headers: [{name: 'x-evil', value: 'a\r\nX-Injected: 1'}],
      userAgent: 'kube-probe/1.36',
      timeoutMs: 2000,
    })
    expect(outcome).toEqual({
      status: 'failure',
      output: `Get "http://127.0.0.1:${port}/length": net/http: invalid header field value for "X-Evil"`,
    })
  })

  it('reads chunked bodies, Content-Length, bodies up to the close, and past 1xx answers', async () => {
    expect(await probe('/chunked')).toEqual({status: 'success', output: 'all good'})
    expect(await probe('/length')).toEqual({status: 'success', output: 'okay'})
    expect(await probe('/slow-head')).toEqual({status: 'success', output: 'ok'})
    expect(await probe('/early-hints')).toEqual({status: 'success', output: ''})
    expect(await probe('/until-close')).toEqual({status: 'failure', output: 'HTTP probe failed with statuscode: 500'})
    const big = await probe('/huge-chunks')
    expect(big.status).toBe('success')
    expect(big.output).toHaveLength(10 * 1024)
  })

  it('words a connection that ends early or speaks something else as Go does', async () => {
    const url = (path: string) => `Get "http://127.0.0.1:${port}${path}"`
    expect(await probe('/nothing')).toEqual({status: 'failure', output: `${url('/nothing')}: EOF`})
    const stalled = await httpProbe({
      scheme: 'http',
      host: '127.0.0.1',
      port,
      path: '/stall-body',
      headers: [],
      userAgent: 'k',
      timeoutMs: 300,
    })
    expect(stalled).toEqual({
      status: 'unknown',
      output: '',
      error: new Error('context deadline exceeded (Client.Timeout or context cancellation while reading body)'),
    })
    // A body cut short is ReadAtMost's error: the probe errs (its result is thrown away), it does not fail.
    expect(await probe('/cut-body')).toEqual({status: 'unknown', output: '', error: new Error('unexpected EOF')})
    expect(await probe('/garbage')).toEqual({
      status: 'failure',
      output: `${url('/garbage')}: net/http: HTTP/1.x transport connection broken: malformed HTTP response "SSH-2.0-OpenSSH_9.2"`,
    })
  })
})
