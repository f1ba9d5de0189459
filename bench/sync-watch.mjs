#!/usr/bin/env node
/**
 * Benchmark (not a test): `podctl sync --watch` supervising N pods, each with an exec readiness
 * probe every second. Each probe appends the host's uptime (/proc/uptime is not namespaced) to a
 * hostPath file, so the probes' real times are read back afterwards: the interval between
 * two probes of a container should be the period (1 s); "late" is how much longer it was, and a probe
 * more than half a period late is a missed period. The supervisor's CPU use comes from /proc/PID/stat
 * over the measured window. Needs the lab (scripts/lab.sh up) and a build (npm run build).
 *
 *   node bench/sync-watch.mjs [--pods 50] [--seconds 60] [--namespace bench-watch]
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {labEnv, PODCTL} from './lib.mjs'

function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`)
  return index > 0 ? process.argv[index + 1] : fallback
}

const PODS = Number(option('pods', '50'))
const SECONDS = Number(option('seconds', '60'))
const NAMESPACE = option('namespace', 'bench-watch')
const work = mkdtempSync(join(tmpdir(), 'podctl-bench-watch-'))
const lab = labEnv()
const env = {
  ...process.env,
  CONTAINER_RUNTIME_ENDPOINT: lab.PODCTL_LAB_ENDPOINT,
  PODCTL_POD_DIR_ROOT: join(work, 'pods'),
  PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
  PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
}
const busybox = lab.PODCTL_LAB_BUSYBOX ?? 'localhost:5000/podctl/busybox:1.36'
const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100)

function podctl(args) {
  const result = spawnSync(process.execPath, [PODCTL, ...args], {env, encoding: 'utf8', maxBuffer: 64 << 20})
  if (result.status !== 0) throw new Error(`podctl ${args.join(' ')}: exit ${result.status}: ${result.stderr}`)
  return result.stdout
}

function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS
}

function ms(seconds) {
  return `${(seconds * 1000).toFixed(0)} ms`
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

const documents = Array.from({length: PODS}, (_, index) =>
  [
    'apiVersion: v1',
    'kind: Pod',
    `metadata: {name: probed-${index}, namespace: ${NAMESPACE}}`,
    'spec:',
    '  terminationGracePeriodSeconds: 1',
    '  containers:',
    '  - name: app',
    `    image: ${busybox}`,
    `    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]`,
    '    readinessProbe:',
    '      exec: {command: [sh, -c, "cat /proc/uptime >> /probes/times"]}',
    '      periodSeconds: 1',
    '    volumeMounts: [{name: probes, mountPath: /probes}]',
    '  volumes:',
    `  - {name: probes, hostPath: {path: ${join(work, 'probes', String(index))}, type: DirectoryOrCreate}}`,
  ].join('\n'),
)
const manifest = join(work, 'pods.yaml')
writeFileSync(manifest, documents.join('\n---\n'))

console.log(`starting ${PODS} pods in namespace ${NAMESPACE}`)
podctl(['run', '-f', manifest, '--quiet', '--parallel', '4', '--settle', '0'])
const watch = spawn(process.execPath, [PODCTL, 'sync', '--watch', '--all', '-n', NAMESPACE, '--quiet'], {env, stdio: 'ignore'})
try {
  // Let the supervisor's first pass add every container to the prober, then measure.
  const warmUp = Date.now() + 180_000
  while (
    Date.now() < warmUp &&
    !Array.from({length: PODS}, (_, index) => existsSync(join(work, 'probes', String(index), 'times'))).every(Boolean)
  ) {
    await sleep(500)
  }

  await sleep(2000)
  const cpuBefore = cpuSeconds(watch.pid)
  const startedAt = Date.now()
  await sleep(SECONDS * 1000)
  const cpu = cpuSeconds(watch.pid) - cpuBefore
  const wall = (Date.now() - startedAt) / 1000
  watch.kill('SIGINT')
  const uptimeNow = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0])
  const windowStart = uptimeNow - wall
  const late = []
  let probes = 0
  for (let index = 0; index < PODS; index++) {
    // The probes wrote into a hostPath volume: read on the host, no exec into a busy runtime.
    const text = readFileSync(join(work, 'probes', String(index), 'times'), 'utf8')
    const times = text
      .split('\n')
      .filter(Boolean)
      .map((line) => Number(line.split(' ')[0]))
      .filter((time) => time >= windowStart && time <= uptimeNow)
    probes += times.length
    for (let i = 1; i < times.length; i++) late.push(Math.max(0, times[i] - times[i - 1] - 1))
  }

  const missed = late.filter((value) => value > 0.5).length
  console.log(`window ${wall.toFixed(1)} s, ${PODS} pods, ${probes} probes (${(probes / wall / PODS).toFixed(2)} per pod per second)`)
  console.log(`supervisor CPU: ${cpu.toFixed(1)} s = ${((cpu / wall) * 100).toFixed(1)} % of one core`)
  console.log(
    `probe lateness vs the 1 s period: p50 ${ms(percentile(late, 50))}, p99 ${ms(percentile(late, 99))}, ` +
      `max ${ms(Math.max(...late))}; periods missed by more than half a period: ${missed}`,
  )
} finally {
  if (watch.exitCode === null && watch.signalCode === null) {
    const exited = new Promise((resolve) => {
      watch.on('exit', resolve)
    })
    watch.kill('SIGINT')
    await exited
  }

  podctl(['kill', '--all', '-n', NAMESPACE, '--force', '--parallel', '8'])
  rmSync(work, {recursive: true, force: true})
}
