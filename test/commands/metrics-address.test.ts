/** sync --watch --metrics-address against the fake runtime: where it listens, what it serves, how it fails. */
import {writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {join} from 'node:path'

import {afterAll, beforeAll, describe, expect, it} from 'vitest'

import {ExitCode} from '../../src/lib/errors.js'
import {podctl} from '../support/podctl.js'
import {socketDir, startEmptyRuntime} from '../support/fake-runtime.js'

const dir = socketDir()
const socket = join(dir, 'cri.sock')
const env = {CONTAINER_RUNTIME_ENDPOINT: undefined, CRI_CONFIG_FILE: undefined, PODCTL_POD_DIR_ROOT: join(dir, 'pods')}
const args = (...rest: string[]) => ['-r', socket, ...rest]
let stop: () => Promise<void>

beforeAll(async () => {
  stop = await startEmptyRuntime(socket)
})

afterAll(async () => {
  await stop()
})

describe('sync --watch --metrics-address', () => {
  it('says where it listens on stderr (port 0 picks one), serves /metrics and /healthz, 404 elsewhere, until Ctrl-C', async () => {
    const seen: string[] = []
    const result = await podctl(args('sync', '--all', '--watch', '-q', '--metrics-address', '127.0.0.1:0'), {
      env,
      onSpawn(child) {
        let stderr = ''
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString()
          const address = /Serving metrics at http:\/\/(127\.0\.0\.1:\d+)\/metrics\n/.exec(stderr)?.[1]
          if (!address || seen.length > 0) return
          seen.push(address)
          void (async () => {
            const metrics = await fetch(`http://${address}/metrics`)
            seen.push(metrics.headers.get('content-type') ?? '', await metrics.text())
            const health = await fetch(`http://${address}/healthz`)
            seen.push(`${health.status} ${await health.text()}`)
            const other = await fetch(`http://${address}/`)
            seen.push(`${other.status}`)
          })().finally(() => child.kill('SIGINT'))
        })
      },
    })
    expect(result.code, result.stderr).toBe(0)
    const [, contentType, text, health, other] = seen
    expect(contentType).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(text).toContain('# TYPE prober_probe_total counter\n')
    expect(text).toContain('# TYPE kubelet_running_containers gauge\n')
    expect(health).toBe('200 ok')
    expect(other).toBe('404')
  })

  it('fails at start on a busy port, in one line naming the flag', async () => {
    const busy = createServer()
    await new Promise<void>((resolve) => {
      busy.listen(0, '127.0.0.1', resolve)
    })
    const {port} = busy.address() as {port: number}
    try {
      const result = await podctl(args('sync', '--all', '--watch', '-q', '--metrics-address', `127.0.0.1:${port}`), {env})
      expect(result.code).toBe(ExitCode.USAGE)
      expect(result.stderr).toBe(
        `Error: --metrics-address 127.0.0.1:${port}: the address is already in use; choose another port (0 picks a free one)\n`,
      )
    } finally {
      await new Promise<void>((resolve) => {
        busy.close(() => resolve())
      })
    }
  })

  it('needs --watch', async () => {
    const result = await podctl(args('sync', '--all', '--metrics-address', '127.0.0.1:0'), {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe("Error: --metrics-address needs --watch: the metrics are the supervisor's; add --watch or drop the flag\n")
  })
})

describe('run --metrics-address', () => {
  it('needs --supervise, and says so before any pod starts', async () => {
    const manifest = join(dir, 'pod.yaml')
    writeFileSync(manifest, 'apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: app, image: busybox}]\n')
    const result = await podctl(args('run', '-f', manifest, '--metrics-address', '127.0.0.1:0'), {env})
    expect(result.code).toBe(ExitCode.USAGE)
    expect(result.stderr).toBe(
      "Error: --metrics-address needs --supervise: the metrics are the supervisor's; add --supervise or drop the flag\n",
    )
  })
})
