#!/usr/bin/env node
/**
 * Benchmark (not a test): `podctl sync --watch` supervising N pods, each with an exec readiness
 * probe every second. Each probe appends the host's uptime (/proc/uptime is not namespaced) to a
 * hostPath file, so the probes' real times are read back afterwards: the interval between
 * two probes of a container should be the period (1 s); "late" is how much longer it was, and a probe
 * more than half a period late is a missed period. The supervisor's CPU use comes from /proc/PID/stat
 * over the measured window. The floor, measured in the same run just before: how many ExecSync calls
 * per second the runtime serves at all, made directly (the same command, as many in flight as podctl's
 * prober allows). A probe load above that rate cannot be kept up by any client, the kubelet included;
 * "kept up" is then judged against what the runtime can serve. Needs the lab (scripts/lab.sh up) and
 * a build (npm run build).
 *
 *   node bench/sync-watch.mjs [--pods 50] [--seconds 60] [--namespace bench-watch]
 *
 * --case stuck-kill: one pod stuck in a 30 s kill (it ignores SIGTERM, terminationGracePeriodSeconds
 * 30, and fails its liveness probe every second, so it is killed again and again) among N (20)
 * crash-looping pods (each runs 1 s and exits 1, restartPolicy Always). Each crash-looping container
 * writes the host's uptime into a hostPath file when it starts and just before it exits, so its real
 * restarts are read back afterwards and set against the kubelet's schedule: restart k comes the
 * back-off window after the previous instance finished (at once, then 10 s, 20 s, 40 s, ...; scaled
 * with --backoff-base-ms). "Late" is how much later it came; a supervisor that lets the stuck pod's
 * kill hold the others is up to 30 s late.
 *
 *   node bench/sync-watch.mjs --case stuck-kill [--pods 20] [--seconds 80] [--backoff-base-ms 10000]
 *
 * --case http: the same measure with an httpGet readiness probe every second instead of an exec one
 * (100 pods by default). Each container runs busybox httpd; the probe's path is a CGI script that
 * appends the host's uptime to the hostPath file, so lateness is read back the same way. No exec is
 * involved, so the runtime sets no ceiling: every period is expected on time.
 *
 *   node bench/sync-watch.mjs --case http [--pods 100] [--seconds 60]
 */
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {setTimeout as sleep} from 'node:timers/promises'

import {CriClient} from '../dist/lib/cri/client.js'
import {EXEC_PROBES_IN_FLIGHT} from '../dist/lib/util/concurrency.js'
import {cpuSeconds, labEnv, labPodctlEnv, option, PODCTL, runPodctl} from './lib.mjs'

const CASE = option('case', 'probes')
const PODS = Number(option('pods', {'stuck-kill': '20', http: '100'}[CASE] ?? '50'))
const SECONDS = Number(option('seconds', CASE === 'stuck-kill' ? '80' : '60'))
const NAMESPACE = option('namespace', 'bench-watch')
/** The crash back-off's first step in the stuck-kill case (10 s: the kubelet's ladder, 10 s doubling to 300 s). */
const BACKOFF_BASE_MS = Number(option('backoff-base-ms', '10000'))
/** Node.js options for the supervisor alone, e.g. SUPERVISOR_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/p' (not in NODE_OPTIONS). */
const SUPERVISOR_NODE_ARGS = (process.env.SUPERVISOR_NODE_ARGS ?? '').split(' ').filter(Boolean)
const work = mkdtempSync(join(tmpdir(), 'podctl-bench-watch-'))
const lab = labEnv()
const env = labPodctlEnv(lab, work)
const busybox = lab.PODCTL_LAB_BUSYBOX ?? 'localhost:5000/podctl/busybox:1.36'

function podctl(args) {
  return runPodctl(args, env)
}

function ms(seconds) {
  return `${(seconds * 1000).toFixed(0)} ms`
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]
}

/** ExecSync calls per second the runtime serves with `inFlight` at once, over `seconds`, round-robin over the containers. */
async function execSyncRate(containerIds, inFlight, seconds) {
  const client = new CriClient({runtimeEndpoint: env.CONTAINER_RUNTIME_ENDPOINT})
  const until = performance.now() + seconds * 1000
  let calls = 0
  const started = performance.now()
  await Promise.all(
    Array.from({length: inFlight}, async (_, worker) => {
      for (let next = worker; performance.now() < until; next += inFlight) {
        const containerId = containerIds[next % containerIds.length]
        const cmd = ['sh', '-c', 'cat /proc/uptime > /dev/null']
        await client.runtime('execSync', {containerId, cmd, timeout: '10'}, {timeoutMs: 30_000})
        calls++
      }
    }),
  )
  client.close()
  return calls / ((performance.now() - started) / 1000)
}

/** The host's uptime now (s), the clock the containers write with. */
function uptime() {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0])
}

/** The back-off window before restart k (1: the first restart, at once) in the kubelet's ladder. */
function windowBefore(k) {
  return k <= 1 ? 0 : Math.min(BACKOFF_BASE_MS * 2 ** (k - 2), BACKOFF_BASE_MS * 30) / 1000
}

async function stuckKill() {
  const record = 'echo $1 $(cut -d" " -f1 /proc/uptime) >> /times/log'
  const crashers = Array.from({length: PODS}, (_, index) =>
    [
      'apiVersion: v1',
      'kind: Pod',
      `metadata: {name: crasher-${index}, namespace: ${NAMESPACE}}`,
      'spec:',
      '  terminationGracePeriodSeconds: 1',
      '  containers:',
      '  - name: app',
      `    image: ${busybox}`,
      `    command: [sh, -c, 'mark() { ${record}; }; mark S; sleep 1; mark E; exit 1', sh]`,
      '    volumeMounts: [{name: times, mountPath: /times}]',
      '  volumes:',
      `  - {name: times, hostPath: {path: ${join(work, 'times', String(index))}, type: DirectoryOrCreate}}`,
    ].join('\n'),
  )
  const stuck = [
    'apiVersion: v1',
    'kind: Pod',
    `metadata: {name: stuck, namespace: ${NAMESPACE}}`,
    'spec:',
    '  terminationGracePeriodSeconds: 30',
    '  containers:',
    '  - name: app',
    `    image: ${busybox}`,
    `    command: [sh, -c, "trap '' TERM; while true; do sleep 1; done"]`,
    '    livenessProbe:',
    '      exec: {command: ["false"]}',
    '      periodSeconds: 1',
    '      failureThreshold: 1',
  ].join('\n')
  const manifest = join(work, 'pods.yaml')
  writeFileSync(manifest, [stuck, ...crashers].join('\n---\n'))
  const own = {...env, PODCTL_BACKOFF_BASE_MS: String(BACKOFF_BASE_MS)}
  console.log(`starting 1 stuck pod and ${PODS} crash-looping pods in namespace ${NAMESPACE}`)
  const run = spawnSync(process.execPath, [PODCTL, 'run', '-f', manifest, '--quiet', '--parallel', '4', '--settle', '0'], {env: own})
  if (run.status !== 0) throw new Error(`podctl run: exit ${run.status}: ${run.stderr}`)
  const watchStart = uptime()
  const watch = spawn(process.execPath, [PODCTL, 'sync', '--watch', '--all', '-n', NAMESPACE], {
    env: own,
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  // The stuck pod's kills, as the supervisor prints them: [Killing, its next Started] in host uptime.
  const kills = []
  let partial = ''
  watch.stdout.setEncoding('utf8')
  watch.stdout.on('data', (chunk) => {
    const lines = (partial + chunk).split('\n')
    partial = lines.pop()
    for (const line of lines) {
      if (!line.includes(`stuck_${NAMESPACE}/app`)) continue
      if (/\bKilling\b/.test(line)) kills.push([uptime(), Number.POSITIVE_INFINITY])
      else if (/\bStarted\b/.test(line) && kills.length > 0) kills.at(-1)[1] = uptime()
    }
  })
  try {
    await sleep(SECONDS * 1000)
  } finally {
    const exited = new Promise((resolve) => {
      watch.on('exit', resolve)
    })
    watch.kill('SIGINT')
    await exited
  }

  const late = []
  let duringKill = 0
  for (let index = 0; index < PODS; index++) {
    const path = join(work, 'times', String(index), 'log')
    const marks = existsSync(path)
      ? readFileSync(path, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((line) => line.split(' '))
          .map(([kind, at]) => ({kind, at: Number(at)}))
      : []
    const starts = marks.filter((mark) => mark.kind === 'S').map((mark) => mark.at)
    const ends = marks.filter((mark) => mark.kind === 'E').map((mark) => mark.at)
    // Restart k is start k (start 0 is podctl run's); it is due the window after end k - 1. Only
    // restarts due while the supervisor ran count (the first exits may come before it started).
    for (let k = 1; k < starts.length && k - 1 < ends.length; k++) {
      const due = ends[k - 1] + windowBefore(k)
      if (due < watchStart + 2) continue
      late.push(Math.max(0, starts[k] - due))
      if (kills.some(([from, to]) => starts[k] > from && starts[k] < to)) duringKill++
    }
  }

  const killed = kills.map(([from, to]) => (Number.isFinite(to) ? `${(to - from).toFixed(1)} s` : 'still in it')).join(', ')
  console.log(`window ${SECONDS} s; the stuck pod's kills (Killing → restarted): ${killed || 'none'}`)
  console.log(
    `${late.length} restarts of ${PODS} crash-looping pods (back-off ${BACKOFF_BASE_MS / 1000} s doubling), ${duringKill} of them ` +
      `while the stuck pod was being killed; lateness vs the kubelet's schedule (the window after the previous exit): ` +
      `p50 ${ms(percentile(late, 50))}, p90 ${ms(percentile(late, 90))}, max ${ms(Math.max(...late))}`,
  )
}

/** busybox httpd on 8080 with /cgi-bin/probe, which records the host's uptime and answers 200. */
const HTTPD = [
  'mkdir -p /www/cgi-bin',
  String.raw`printf '#!/bin/sh\ncat /proc/uptime >> /probes/times\nprintf "Content-Type: text/plain\\r\\n\\r\\nok\\n"\n'` +
    ' > /www/cgi-bin/probe',
  'chmod +x /www/cgi-bin/probe',
  'exec httpd -f -p 8080 -h /www',
].join(' && ')

function probedContainer(http) {
  return http
    ? [`    command: [sh, -c, ${JSON.stringify(HTTPD)}]`, '    readinessProbe:', '      httpGet: {path: /cgi-bin/probe, port: 8080}']
    : [
        `    command: [sh, -c, "trap 'exit 0' TERM; while true; do sleep 1; done"]`,
        '    readinessProbe:',
        '      exec: {command: [sh, -c, "cat /proc/uptime >> /probes/times"]}',
      ]
}

async function probes(http) {
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
      ...probedContainer(http),
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
  const containerIds = podctl(['ps', '-n', NAMESPACE, '-q']).split('\n').filter(Boolean)
  const demand = PODS / 1
  // An httpGet probe needs nothing of the runtime: only exec probes have a ceiling to measure.
  const capacity = http ? Number.POSITIVE_INFINITY : await execSyncRate(containerIds, EXEC_PROBES_IN_FLIGHT, 10)
  if (!http) {
    console.log(
      `floor: the runtime serves ${capacity.toFixed(1)} ExecSync/s made directly (${EXEC_PROBES_IN_FLIGHT} in flight); ` +
        `the probes ask for ${demand.toFixed(1)}/s`,
    )
  }

  // The supervisor's events (one line each) tell how many probes failed: a timed-out exec is "Unhealthy".
  const watch = spawn(process.execPath, [...SUPERVISOR_NODE_ARGS, PODCTL, 'sync', '--watch', '--all', '-n', NAMESPACE], {
    env,
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  let events = ''
  watch.stdout.setEncoding('utf8')
  watch.stdout.on('data', (chunk) => {
    events += chunk
  })
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
    const rate = probes / wall
    const unhealthy = events.split('\n').filter((line) => /\bUnhealthy\b/.test(line)).length
    console.log(`window ${wall.toFixed(1)} s, ${PODS} pods, ${probes} probes (${(probes / wall / PODS).toFixed(2)} per pod per second)`)
    console.log(
      `probes run: ${rate.toFixed(1)}/s = ${(rate / demand).toFixed(2)} × the demand, ` +
        `${(rate / Math.min(demand, capacity)).toFixed(2)} × what the runtime can serve of it`,
    )
    console.log(`supervisor CPU: ${cpu.toFixed(1)} s = ${((cpu / wall) * 100).toFixed(1)} % of one core`)
    console.log(
      `probe lateness vs the 1 s period: p50 ${ms(percentile(late, 50))}, p99 ${ms(percentile(late, 99))}, ` +
        `max ${ms(Math.max(...late))}; periods missed by more than half a period: ${missed}; ` +
        `failed probes (Unhealthy events, whole run): ${unhealthy}`,
    )
    console.log(
      demand <= capacity
        ? missed === 0
          ? 'kept up: no period missed'
          : `did not keep up: ${missed} periods missed with the runtime able to serve the load`
        : `the load is ${(demand / capacity).toFixed(1)} × what the runtime can serve: no client keeps up; ` +
            `podctl ran ${((rate / capacity) * 100).toFixed(0)} % of the runtime's rate`,
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
}

if (CASE === 'stuck-kill') {
  try {
    await stuckKill()
  } finally {
    spawnSync(process.execPath, [PODCTL, 'kill', '--all', '-n', NAMESPACE, '--force', '--parallel', '8'], {env})
    rmSync(work, {recursive: true, force: true})
  }
} else {
  await probes(CASE === 'http')
}
