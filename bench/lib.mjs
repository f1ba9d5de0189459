import {spawn, spawnSync} from 'node:child_process'
import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'

export const ROOT = fileURLToPath(new URL('..', import.meta.url))
export const PODCTL = `${ROOT}bin/run.js`

/** The settings of the lab's runtime that PODCTL_LAB_RUNTIME names (containerd2 by default), as scripts/lab.sh up wrote them. */
export function labEnv() {
  const runtime = process.env.PODCTL_LAB_RUNTIME || 'containerd2'
  const file = `/run/podctl-lab/rt/${runtime}/env`
  if (!existsSync(file)) {
    throw new Error(`runtime lab (${runtime}) not running: start it with PODCTL_LAB_RUNTIME=${runtime} bash scripts/lab.sh up`)
  }

  const env = {}
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const eq = line.indexOf('=')
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1)
  }

  return env
}

/** Wall time of one run of a command, in ms; fails loudly if the command fails. */
export function timeOnce(argv, env) {
  const started = process.hrtime.bigint()
  // A listing of 5000 pods prints more than spawnSync's default 1 MB, past which it kills the child.
  const result = spawnSync(argv[0], argv.slice(1), {env: {...process.env, ...env}, encoding: 'utf8', maxBuffer: 256 << 20})
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`)
  return ms
}

/**
 * Runs the cases interleaved (a, b, c, a, b, c, ...; each round starts one case later) so machine
 * noise hits them alike. Returns each case's median wall time and, for cases that name a floor,
 * the median of the per-round ratios to that floor (paired: case and floor from the same round),
 * which is what to compare between runs and machines.
 */
export function compare(cases, rounds, env) {
  const samples = Object.fromEntries(cases.map(({name}) => [name, []]))
  for (const {argv, env: own} of cases) timeOnce(argv, {...env, ...own}) // warm the file cache
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const {name, argv, env: own} = cases[(round + i) % cases.length]
      samples[name][round] = timeOnce(argv, {...env, ...own})
    }
  }

  return Object.fromEntries(
    cases.map(({name, floor, floor2}) => [
      name,
      {
        ms: median(samples[name]),
        ratio: floor ? median(samples[name].map((ms, round) => ms / samples[floor][round])) : undefined,
        ratio2: floor2 ? median(samples[name].map((ms, round) => ms / samples[floor2][round])) : undefined,
      },
    ]),
  )
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => String(row[i]).length)))
  return rows
    .map((row) =>
      row
        .map((cell, i) => String(cell).padEnd(widths[i]))
        .join('   ')
        .trimEnd(),
    )
    .join('\n')
}

/** The value after --NAME on the command line, or fallback. */
export function option(name, fallback) {
  const index = process.argv.indexOf(`--${name}`)
  return index > 0 ? process.argv[index + 1] : fallback
}

/** The environment for podctl on the lab with its pod directories, logs and links under work (the supervisor benches). */
export function labPodctlEnv(lab, work) {
  return {
    ...process.env,
    CONTAINER_RUNTIME_ENDPOINT: lab.PODCTL_LAB_ENDPOINT,
    PODCTL_POD_DIR_ROOT: join(work, 'pods'),
    PODCTL_POD_LOGS_ROOT: join(work, 'logs'),
    PODCTL_CONTAINER_LOGS_DIR: join(work, 'links'),
  }
}

/** Runs this checkout's podctl with env and returns its stdout; fails loudly if it fails. */
export function runPodctl(args, env) {
  const result = spawnSync(process.execPath, [PODCTL, ...args], {env, encoding: 'utf8', maxBuffer: 64 << 20})
  if (result.status !== 0) throw new Error(`podctl ${args.join(' ')}: exit ${result.status}: ${result.stderr}`)
  return result.stdout
}

const TICKS = Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100)

/** User and system CPU seconds a process has used so far (/proc/PID/stat). */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / TICKS
}

/**
 * Starts bench/fake-cri.mjs answering `pods` kubelet-like pods on `socket`; resolves with the server
 * process once it is listening (its first line). The caller kills it.
 */
export async function startFakeCri(socket, pods) {
  const server = spawn(process.execPath, [`${ROOT}bench/fake-cri.mjs`, socket, String(pods)], {stdio: ['ignore', 'pipe', 'inherit']})
  await new Promise((resolve, reject) => {
    server.stdout.once('data', resolve)
    server.once('exit', (code) => reject(new Error(`bench/fake-cri.mjs exited ${code}`)))
  })
  return server
}
