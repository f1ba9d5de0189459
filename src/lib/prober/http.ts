/**
 * pkg/probe/http: one GET from the node (NewRequestForHTTPGetAction + DoHTTPProbe), over a bare
 * socket for http:// (plain-http.ts) and node:https for https://. No keep-alive,
 * no compression, no proxy, TLS without verification; redirects followed only to the same host (at
 * most 10, the kubelet's RedirectChecker(false)); the body read up to 10 KiB; 200 <= status < 400 is
 * success, a redirect it did not follow is a warning (which counts as success).
 */
import {request as httpRequest, type IncomingMessage} from 'node:http'
import {request as httpsRequest} from 'node:https'

import {plainGet} from './plain-http.js'
import {goDialError, type HttpGetResponse, joinHostPort, MAX_OUTPUT_BYTES, type ProbeOutcome} from './types.js'

export interface HttpGetRequest {
  scheme: 'http' | 'https'
  host: string
  port: number
  /** As written in the manifest (may hold a query). */
  path: string
  headers: ReadonlyArray<{name: string; value: string}>
  /** "kube-probe/1.36" or "kube-lifecycle/1.36": sent unless the headers name a User-Agent. */
  userAgent: string
  /** The whole exchange (Go's Client.Timeout): connect, headers, body. */
  timeoutMs: number
  signal?: AbortSignal
}

const MAX_REDIRECTS = 10

/** The probe's URL, as formatURL builds it: the path parsed as a URL reference, scheme and host:port set. */
export function probeUrl(request: Pick<HttpGetRequest, 'scheme' | 'host' | 'port' | 'path'>): URL {
  const path = request.path.startsWith('/') ? request.path : `/${request.path}`
  return new URL(path, `${request.scheme}://${joinHostPort(request.host, request.port)}`)
}

/** Go's http.Header canonical form of a header name ("x-custom" → "X-Custom"). */
function canonical(name: string): string {
  return name.toLowerCase().replaceAll(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase())
}

export function probeHeaders(request: Pick<HttpGetRequest, 'headers' | 'userAgent'>): Record<string, string[]> {
  const headers: Record<string, string[]> = {}
  for (const {name, value} of request.headers) (headers[canonical(name)] ??= []).push(value)
  headers['User-Agent'] ??= [request.userAgent]
  headers.Accept ??= ['*/*']
  return headers
}

/** One GET with the kubelet's redirect rule; rejects with Go's wording of the error (`Get "URL": ...`). */
export async function httpGet(request: HttpGetRequest): Promise<HttpGetResponse> {
  const deadline = Date.now() + request.timeoutMs
  const headers = probeHeaders(request)
  const first = probeUrl(request)
  let url = first
  for (let redirects = 0; ; redirects++) {
    // The probe's own URL names its port as the kubelet's does; a redirect's Host is its Location's.
    const authority = redirects === 0 ? joinHostPort(request.host, request.port) : url.host
    const response = await getOnce(url, headers, {deadline, signal: request.signal, authority})
    const location = response.statusCode >= 300 && response.statusCode < 400 ? response.location : undefined
    if (location === undefined) return response
    const next = new URL(location, url)
    // A redirect to another host ends the chain with the redirect itself (http.ErrUseLastResponse).
    if (next.hostname !== first.hostname) return response
    if (redirects + 1 >= MAX_REDIRECTS) throw new Error(`Get "${next.href}": stopped after ${MAX_REDIRECTS} redirects`)
    url = next
  }
}

function getOnce(
  url: URL,
  headers: Record<string, string[]>,
  options: {deadline: number; signal?: AbortSignal; authority: string},
): Promise<HttpGetResponse & {location?: string}> {
  if (url.protocol === 'http:') return plainGet(url, headers, options)
  const {deadline, signal} = options
  const where = `Get "${url.href}"`
  const address = joinHostPort(url.hostname.replaceAll(/^\[|\]$/g, ''), Number(url.port || (url.protocol === 'https:' ? 443 : 80)))
  return new Promise((resolve, reject) => {
    const {Host: host, ...rest} = headers
    const options = {
      method: 'GET',
      headers: {...rest, ...(host ? {Host: host[0]} : {}), Connection: 'close'},
      agent: false as const,
      rejectUnauthorized: false,
      signal,
    }
    let gotHeaders = false
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, options, (response: IncomingMessage) => {
      gotHeaders = true
      const chunks: Buffer[] = []
      let size = 0
      response.on('data', (chunk: Buffer) => {
        if (size >= MAX_OUTPUT_BYTES) return
        chunks.push(chunk.subarray(0, MAX_OUTPUT_BYTES - size))
        size += Math.min(chunk.length, MAX_OUTPUT_BYTES - size)
        // Enough read: the rest is not waited for (ReadAtMost stops at the limit).
        if (size >= MAX_OUTPUT_BYTES) done()
      })
      response.on('end', done)
      response.on('error', (error) => fail(`${where}: ${error.message}`))
      function done(): void {
        clearTimeout(timer)
        const location = response.headers.location
        resolve({statusCode: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), location})
        request.destroy()
      }
    })
    const timer = setTimeout(
      () => {
        const stage = gotHeaders
          ? 'Client.Timeout or context cancellation while reading body'
          : 'Client.Timeout exceeded while awaiting headers'
        fail(`${where}: context deadline exceeded (${stage})`)
      },
      Math.max(0, deadline - Date.now()),
    )
    function fail(message: string): void {
      clearTimeout(timer)
      request.destroy()
      reject(Object.assign(new Error(message), {httpResponseToHttps: false}))
    }

    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      if (signal?.aborted) return reject(new Error(`${where}: context canceled`))
      // An HTTPS request answered in plain HTTP (Go: "server gave HTTP response to HTTPS client").
      const plain = /wrong version number|http request/i.test(error.message) || error.code === 'ERR_SSL_WRONG_VERSION_NUMBER'
      const text = plain ? 'http: server gave HTTP response to HTTPS client' : goDialError(address, error)
      reject(Object.assign(new Error(`${where}: ${text}`), {httpResponseToHttps: plain}))
    })
    request.end()
  })
}

/** DoHTTPProbe: the response judged the kubelet's way; a transport error is a failure with its text. */
export async function httpProbe(request: HttpGetRequest): Promise<ProbeOutcome> {
  let response: HttpGetResponse
  try {
    response = await httpGet(request)
  } catch (error) {
    return {status: 'failure', output: (error as Error).message}
  }

  // ReadAtMost's error: DoHTTPProbe returns it, and the worker throws the result away.
  if (response.bodyError !== undefined) return {status: 'unknown', output: '', error: new Error(response.bodyError)}
  if (response.statusCode >= 200 && response.statusCode < 400) {
    if (response.statusCode >= 300) return {status: 'warning', output: `Probe terminated redirects, Response body: ${response.body}`}
    return {status: 'success', output: response.body}
  }

  // The kubelet keeps the body out of the message on purpose (it may hold secrets).
  return {status: 'failure', output: `HTTP probe failed with statuscode: ${response.statusCode}`}
}
