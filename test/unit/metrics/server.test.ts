import {createServer} from 'node:net'

import {afterEach, describe, expect, it} from 'vitest'

import {parseListenAddress} from '../../../src/lib/metrics/address.js'
import {EXPOSITION_CONTENT_TYPE} from '../../../src/lib/metrics/exposition.js'
import {MetricsRegistry} from '../../../src/lib/metrics/registry.js'
import {type MetricsServer, serveMetrics} from '../../../src/lib/metrics/server.js'

describe('--metrics-address', () => {
  it('is loopback without a host, and names the host it was given', () => {
    expect(parseListenAddress(':9100')).toEqual({host: '127.0.0.1', port: 9100, loopback: true})
    expect(parseListenAddress('9100')).toEqual({host: '127.0.0.1', port: 9100, loopback: true})
    expect(parseListenAddress('127.0.0.2:0')).toEqual({host: '127.0.0.2', port: 0, loopback: true})
    expect(parseListenAddress('localhost:1')).toEqual({host: 'localhost', port: 1, loopback: true})
    expect(parseListenAddress('[::1]:9100')).toEqual({host: '::1', port: 9100, loopback: true})
    expect(parseListenAddress('0.0.0.0:9100')).toEqual({host: '0.0.0.0', port: 9100, loopback: false})
    expect(parseListenAddress('[::]:9100')).toEqual({host: '::', port: 9100, loopback: false})
  })

  it('refuses what is not HOST:PORT in one line naming the flag', () => {
    for (const text of ['', 'host', 'host:', ':70000', '[nothost]:1', '1.2.3.4:9100:1']) {
      expect(() => parseListenAddress(text)).toThrow(
        `--metrics-address ${JSON.stringify(text)}: expected HOST:PORT, e.g. 127.0.0.1:9100 (port 0 picks a free one)`,
      )
    }
  })
})

describe('the metrics server', () => {
  let server: MetricsServer | undefined

  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('serves the registry at /metrics in the text format, ok at /healthz, and 404 elsewhere', async () => {
    const registry = new MetricsRegistry()
    registry.gauge('kubelet_running_pods', 'Pods.').set({}, 1)
    server = await serveMetrics(registry, parseListenAddress('127.0.0.1:0'))
    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/)
    const metrics = await fetch(`http://${server.address}/metrics`)
    expect(metrics.status).toBe(200)
    expect(metrics.headers.get('content-type')).toBe(EXPOSITION_CONTENT_TYPE)
    expect(await metrics.text()).toBe('# HELP kubelet_running_pods Pods.\n# TYPE kubelet_running_pods gauge\nkubelet_running_pods 1\n')
    const health = await fetch(`http://${server.address}/healthz`)
    expect([health.status, await health.text()]).toEqual([200, 'ok'])
    const other = await fetch(`http://${server.address}/metrics/probes`)
    expect([other.status, await other.text()]).toEqual([404, '404 page not found\n'])
  })

  it('fails at once on a busy port, in one line naming the flag and the way out', async () => {
    const busy = createServer()
    await new Promise<void>((resolve) => {
      busy.listen(0, '127.0.0.1', resolve)
    })
    const {port} = busy.address() as {port: number}
    try {
      await expect(serveMetrics(new MetricsRegistry(), parseListenAddress(`127.0.0.1:${port}`))).rejects.toThrow(
        `--metrics-address 127.0.0.1:${port}: the address is already in use; choose another port (0 picks a free one)`,
      )
    } finally {
      await new Promise<void>((resolve) => {
        busy.close(() => resolve())
      })
    }
  })
})
