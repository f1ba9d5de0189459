#!/usr/bin/env node
/**
 * Benchmark (not a test): the memory of a supervisor (`podctl sync --watch`) keeping N probed pods,
 * the issue-37 load. Each pod runs busybox httpd with an httpGet readiness probe every second and an
 * exec liveness probe every 4 s (N = 35: 43.75 probes/s). The pods are started once with
 * `podctl run`; then each build under test (this checkout, and any build named with --against DIR)
 * supervises them in turn, interleaved round by round (A B, B A, ...), so the machine's load hits both
 * alike. For each supervisor it samples /proc/PID/status (VmRSS, RssAnon, RssFile) and
 * /proc/PID/stat (CPU) over the window after its first probes ran, and reports the median and peak RSS,
 * the CPU share of one core, and the RSS of a bare `node -e 'setInterval(…)'` for scale.
 * --variant 'LABEL|CHECKOUT|NODE ARGS' (repeatable) adds a supervisor to compare: another checkout's
 * build (empty: this one) and Node.js options for it (e.g. --max-semi-space-size=2).
 * Each supervisor also loads bench/memory-probe.mjs, which reports its V8 heap spaces (committed and
 * used) and memoryUsage(), printed after its RSS.
 * With --heap, it also writes one heap snapshot of each build (--heapsnapshot-signal) and prints the
 * self size of its objects by constructor, the top rows.
 * Needs the lab (scripts/lab.sh up) and a build (npm run build).
 *
 *   node bench/supervisor-memory.mjs [--pods 35] [--seconds 60] [--rounds 2] [--against /path/to/other/checkout]
 *     [--variant 'small young|/path/to/checkout|--max-semi-space-size=2'] [--heap]
 */
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {setTimeout as sleep} from 'node:timers/promises'

import {cpuSeconds, labEnv, labPodctlEnv, option, PODCTL, ROOT, runPodctl} from './lib.mjs'

const PODS = Number(option('pods', '35'))
const SECONDS = Number(option('seconds', '60'))
const ROUNDS = Number(option('rounds', '2'))
const AGAINST = option('against', undefined)
const HEAP = process.argv.includes('--heap')
const NAMESPACE = option('namespace', `bench-mem-${process.pid}`)
const SUPERVISOR_NODE_ARGS = (process.env.SUPERVISOR_NODE_ARGS ?? '').split(' ').filter(Boolean)
const work = mkdtempSync(join(tmpdir(), 'podctl-bench-mem-'))
const lab = labEnv()
const env = labPodctlEnv(lab, work)
const busybox = lab.PODCTL_LAB_BUSYBOX ?? 'localhost:5000/podctl/busybox:1.36'
const builds = [{name: 'this checkout', podctl: PODCTL, nodeArgs: []}]
if (AGAINST) builds.push({name: AGAINST, podctl: join(AGAINST, 'bin', 'run.js'), nodeArgs: []})
for (let i = 0; i < process.argv.length; i++) {
  if (process.argv[i] !== '--variant') continue
  const [name, checkout, nodeArgs = ''] = process.argv[i + 1].split('|')
  builds.push({name, podctl: checkout ? join(checkout, 'bin', 'run.js') : PODCTL, nodeArgs: nodeArgs.split(' ').filter(Boolean)})
}

function podctl(args) {
  return runPodctl(args, env)
}

/** VmRSS, RssAnon, RssFile and VmHWM of a process, in MB. */
function memory(pid) {
  const fields = {}
  for (const line of readFileSync(`/proc/${pid}/status`, 'utf8').split('\n')) {
    const match = /^(VmRSS|RssAnon|RssFile|VmHWM):\s+(\d+) kB/.exec(line)
    if (match) fields[match[1]] = Number(match[2]) / 1024
  }

  return fields
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}

const HTTPD = ['mkdir -p /www', 'echo ok > /www/healthz', 'exec httpd -f -p 8080 -h /www'].join(' && ')

function manifest() {
  return Array.from({length: PODS}, (_, index) =>
    [
      'apiVersion: v1',
      'kind: Pod',
      `metadata: {name: mem-${index}, namespace: ${NAMESPACE}}`,
      'spec:',
      '  terminationGracePeriodSeconds: 1',
      '  containers:',
      '  - name: app',
      `    image: ${busybox}`,
      `    command: [sh, -c, ${JSON.stringify(HTTPD)}]`,
      '    readinessProbe:',
      '      httpGet: {path: /healthz, port: 8080}',
      '      periodSeconds: 1',
      '    livenessProbe:',
      '      exec: {command: [cat, /www/healthz]}',
      '      periodSeconds: 4',
      '      timeoutSeconds: 5',
      '      failureThreshold: 10',
    ].join('\n'),
  ).join('\n---\n')
}

/** Sums self sizes by constructor name ("(type) name") in a .heapsnapshot. */
function heapByConstructor(file) {
  const snapshot = JSON.parse(readFileSync(file, 'utf8'))
  const meta = snapshot.snapshot.meta
  const stride = meta.node_fields.length
  const typeAt = meta.node_fields.indexOf('type')
  const nameAt = meta.node_fields.indexOf('name')
  const sizeAt = meta.node_fields.indexOf('self_size')
  const types = meta.node_types[typeAt]
  const totals = new Map()
  let all = 0
  for (let i = 0; i < snapshot.nodes.length; i += stride) {
    const type = types[snapshot.nodes[i + typeAt]]
    const name = type === 'object' || type === 'native' ? snapshot.strings[snapshot.nodes[i + nameAt]] : `(${type})`
    const size = snapshot.nodes[i + sizeAt]
    all += size
    const entry = totals.get(name) ?? {size: 0, count: 0}
    entry.size += size
    entry.count++
    totals.set(name, entry)
  }

  return {all, rows: [...totals].sort((a, b) => b[1].size - a[1].size).slice(0, 25)}
}

/** The snapshot the supervisor writes into dir on SIGUSR2, once its size has stopped growing. */
async function finishedSnapshot(dir) {
  let size = -1
  for (let waited = 0; waited < 120; waited++) {
    await sleep(1000)
    const file = readdirSync(dir).find((name) => name.endsWith('.heapsnapshot'))
    if (file === undefined) continue
    const now = statSync(join(dir, file)).size
    if (now > 0 && now === size) return join(dir, file)
    size = now
  }

  throw new Error('no heap snapshot within 120 s')
}

async function supervise(build, heap) {
  const heapDir = mkdtempSync(join(work, 'heap-'))
  const memoryFile = join(heapDir, 'memory.json')
  const args = [...SUPERVISOR_NODE_ARGS, ...build.nodeArgs, '--import', pathToFileURL(join(ROOT, 'bench', 'memory-probe.mjs')).href]
  if (heap) args.push('--heapsnapshot-signal=SIGUSR2')
  const watch = spawn(process.execPath, [...args, build.podctl, 'sync', '--watch', '--all', '-n', NAMESPACE], {
    env: {...env, PODCTL_BENCH_MEMORY_FILE: memoryFile},
    cwd: heapDir,
    stdio: ['ignore', 'pipe', 'ignore'],
  })
  let events = ''
  watch.stdout.setEncoding('utf8')
  watch.stdout.on('data', (chunk) => {
    events += chunk
  })
  try {
    // The first pass and the probes' start, then the window.
    await sleep(15_000)
    const cpuBefore = cpuSeconds(watch.pid)
    const startedAt = Date.now()
    const rss = []
    let last
    while (Date.now() - startedAt < SECONDS * 1000) {
      await sleep(1000)
      last = memory(watch.pid)
      rss.push(last.VmRSS)
    }

    const cpu = cpuSeconds(watch.pid) - cpuBefore
    const wall = (Date.now() - startedAt) / 1000
    const inside = JSON.parse(readFileSync(memoryFile, 'utf8'))
    let heapRows
    if (heap) {
      watch.kill('SIGUSR2')
      heapRows = heapByConstructor(await finishedSnapshot(heapDir))
    }

    const unhealthy = events.split('\n').filter((line) => /\bUnhealthy\b/.test(line)).length
    return {rssMedian: median(rss), rssPeak: Math.max(...rss), last, cpu: (cpu / wall) * 100, unhealthy, heapRows, inside}
  } finally {
    const exited = new Promise((resolve) => {
      watch.on('exit', resolve)
    })
    watch.kill('SIGINT')
    await exited
    rmSync(heapDir, {recursive: true, force: true})
  }
}

function bareNodeRss() {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'])
  return sleep(1500).then(() => {
    const rss = memory(child.pid).VmRSS
    child.kill()
    return rss
  })
}

try {
  const file = join(work, 'pods.yaml')
  writeFileSync(file, manifest())
  console.log(`starting ${PODS} pods in namespace ${NAMESPACE}`)
  podctl(['run', '-f', file, '--quiet', '--parallel', '4', '--settle', '0'])
  console.log(`bare node (setInterval): ${(await bareNodeRss()).toFixed(1)} MB RSS`)
  const results = new Map(builds.map((build) => [build.name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? builds : [...builds].reverse()
    for (const build of order) {
      const result = await supervise(build, HEAP && round === 0)
      results.get(build.name).push(result)
      const {rssMedian, rssPeak, last, cpu, unhealthy} = result
      console.log(
        `round ${round + 1} ${build.name}: RSS median ${rssMedian.toFixed(1)} MB, peak ${rssPeak.toFixed(1)} MB ` +
          `(at the end: anon ${last.RssAnon.toFixed(1)}, file ${last.RssFile.toFixed(1)}, high-water ${last.VmHWM.toFixed(1)}); ` +
          `CPU ${cpu.toFixed(1)} % of a core; Unhealthy events ${unhealthy}`,
      )
      const mb = (bytes) => (bytes / 1_048_576).toFixed(1)
      const {usage, spaces} = result.inside
      console.log(
        `  memoryUsage: rss ${mb(usage.rss)}, heapTotal ${mb(usage.heapTotal)}, heapUsed ${mb(usage.heapUsed)}, ` +
          `external ${mb(usage.external)}, arrayBuffers ${mb(usage.arrayBuffers)} MB; spaces (committed/used MB): ` +
          Object.entries(spaces)
            .map(([name, {committed, used}]) => `${name.replace('_space', '')} ${mb(committed)}/${mb(used)}`)
            .join(', '),
      )
      if (result.heapRows) {
        console.log(`  heap snapshot: ${(result.heapRows.all / 1_048_576).toFixed(1)} MB of objects; by constructor (self size):`)
        for (const [name, {size, count}] of result.heapRows.rows) {
          console.log(`    ${(size / 1_048_576).toFixed(2).padStart(7)} MB  ${String(count).padStart(7)}  ${name}`)
        }
      }
    }
  }
} finally {
  spawnSync(process.execPath, [PODCTL, 'kill', '--all', '-n', NAMESPACE, '--force', '--parallel', '8'], {env})
  rmSync(work, {recursive: true, force: true})
}
