import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {lab, labClient, labEnv, uniqueNamespace} from '../support/lab.js'
import {useLabNamespace} from '../support/lab-namespace.js'
import {podctl} from '../support/podctl.js'

/**
 * `sync --watch --metrics-address` against the lab: a pod with a liveness exec probe, supervised
 * with metrics on a loopback port the system picks; /metrics shows the kubelet's prober_probe_total
 * growing and the running container. Traffic only to 127.0.0.1.
 */
const client = labClient()
const namespace = uniqueNamespace('metrics')
const work = mkdtempSync(join(tmpdir(), 'podctl-metrics-'))
const env = labEnv({
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
})

useLabNamespace(client, namespace, work)

/** The value of the first series matching `pattern` (a line of the text format), or undefined. */
function valueOf(text: string, pattern: RegExp): number | undefined {
  const line = text.split('\n').find((candidate) => pattern.test(candidate))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

/** Fetches /metrics until `done` says the text is what the test waits for (at most 30 s); the last text. */
async function scrapeUntil(address: string, done: (text: string) => boolean): Promise<string> {
  let text = ''
  for (let tries = 0; tries < 150; tries++) {
    text = await (await fetch(`http://${address}/metrics`)).text()
    if (done(text)) return text
    await new Promise((resolve) => {
      setTimeout(resolve, 200)
    })
  }

  return text
}

/** The text once the series has a value, the text once it grew past that, and /healthz's answer. */
async function scrapeWhileGrowing(address: string, series: RegExp): Promise<string[]> {
  const first = await scrapeUntil(address, (text) => (valueOf(text, series) ?? 0) >= 1)
  const before = valueOf(first, series) ?? 0
  const later = await scrapeUntil(address, (text) => (valueOf(text, series) ?? 0) > before)
  return [first, later, await (await fetch(`http://${address}/healthz`)).text()]
}

describe('sync --watch --metrics-address', () => {
  it("serves prober_probe_total (growing with each liveness probe) and the supervised pod's running container", async () => {
    const path = join(work, 'probed.yaml')
    writeFileSync(
      path,
      `apiVersion: v1
kind: Pod
metadata: {name: probed, namespace: ${namespace}}
spec:
  terminationGracePeriodSeconds: 2
  containers:
  - name: c
    image: ${lab().busybox}
    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]
    livenessProbe:
      exec: {command: ['true']}
      periodSeconds: 1
`,
    )
    expect((await podctl(['run', '-f', path, '-q'], {env})).code).toBe(0)
    const labels = `container="c",pod="probed",namespace="${namespace}",pod_uid="[^"]+"`
    const successful = new RegExp(`^prober_probe_total\\{probe_type="Liveness",result="successful",${labels}\\} `)
    const scraped: string[] = []
    let address = ''
    const watch = await podctl(['sync', '--watch', 'probed', '-n', namespace, '-q', '--metrics-address', '127.0.0.1:0'], {
      env,
      timeoutMs: 90_000,
      onSpawn(child) {
        let stderr = ''
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString()
          const found = /Serving metrics at http:\/\/(127\.0\.0\.1:\d+)\/metrics\n/.exec(stderr)?.[1]
          if (!found || address) return
          address = found
          void scrapeWhileGrowing(address, successful)
            .then((texts) => scraped.push(...texts))
            .finally(() => child.kill('SIGINT'))
        })
      },
    })
    expect(watch.code, watch.stderr).toBe(0)
    expect(watch.stderr).toMatch(/^Serving metrics at http:\/\/127\.0\.0\.1:\d+\/metrics$/m)
    const [first, later, health] = scraped
    expect(valueOf(first, successful)).toBeGreaterThanOrEqual(1)
    expect(valueOf(later, successful)).toBeGreaterThan(valueOf(first, successful)!)
    expect(later).toContain('# TYPE prober_probe_total counter\n')
    expect(later).toContain('\nkubelet_running_pods 1\n')
    expect(later).toContain('\nkubelet_running_containers{container_state="running"} 1\n')
    expect(later).toContain(`\npodctl_container_restarts_total{namespace="${namespace}",pod="probed",container="c"} 0\n`)
    expect(later).not.toMatch(/result="failed"/)
    expect(health).toBe('ok')
    expect((await podctl(['kill', 'probed', '-n', namespace], {env})).code).toBe(0)
  })
})
