#!/usr/bin/env node
// Issue 37's guard: the start-up ratios it sets, paired in one run, and where a start's time goes.
// Not a test (timings belong outside the suite): run `npm run bench:startup` with the lab up and
// podctl built, on a quiet machine. Every case runs once per round, the order turning each round;
// a ratio is the median of the per-round ratios (case ÷ its yardstick from the same round).
//   ROUNDS=30 (rounds)   FAKE_PODS=5000 (the big listing; 0 for none)
//   PODCTL_BINARY=path (default ./podctl-linux-<arch> when built)
//   PODCTL_REFERENCE_CRICTL=path (default the lab's reference crictl, else crictl on PATH)
//
// The stages split a `podctl pods` start into what each step adds, as paired differences of whole
// processes (no instrumentation inside podctl): Node itself, Node's built-in modules that podctl
// pods loads (read from its process.moduleLoadList), reading and compiling the bundle with its
// trained code cache, evaluating the bundle, and then the command itself (oclif, grpc-js, the calls).
import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {builtinModules} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {labEnv, median, PODCTL, ROOT, startFakeCri, table, timeOnce} from './lib.mjs'

const rounds = Number(process.env.ROUNDS ?? 30)
const fakePods = Number(process.env.FAKE_PODS ?? 5000)
const node = process.execPath
const binary = process.env.PODCTL_BINARY ?? `${ROOT}podctl-linux-${process.arch}`
const env = {CONTAINER_RUNTIME_ENDPOINT: labEnv().PODCTL_LAB_ENDPOINT, NO_COLOR: '1'}
const work = mkdtempSync(join(tmpdir(), 'podctl-bench-startup-'))

/** The reference crictl: as named, else the newest the lab built, else crictl on PATH. */
function referenceCrictl() {
  if (process.env.PODCTL_REFERENCE_CRICTL) return process.env.PODCTL_REFERENCE_CRICTL
  const cache = '/var/cache/podctl-lab/bin'
  const built = existsSync(cache) ? readdirSync(cache).filter((name) => /^crictl-v[\d.]+$/.test(name)) : []
  const newest = built.sort((a, b) => a.localeCompare(b, 'en', {numeric: true})).at(-1)
  if (newest) return join(cache, newest, 'crictl')
  return spawnSync('sh', ['-c', 'command -v crictl'], {encoding: 'utf8'}).stdout.trim() || undefined
}

/** Node's public built-in modules that `podctl pods` loads, as its process reports them. */
function builtinsOfPods() {
  const list = join(work, 'modules.json')
  const preload = join(work, 'record-modules.cjs')
  writeFileSync(
    preload,
    `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(list)}, JSON.stringify(process.moduleLoadList)))\n`,
  )
  spawnSync(node, ['-r', preload, PODCTL, 'pods'], {env: {...process.env, ...env}, stdio: 'ignore'})
  const publicNames = new Set(builtinModules)
  const loaded = JSON.parse(readFileSync(list, 'utf8')).map((entry) => entry.replace(/^NativeModule /, ''))
  return loaded.filter((name) => publicNames.has(name))
}

/** A script in the work directory; returns its argv. */
function script(name, text) {
  const path = join(work, name)
  writeFileSync(path, text)
  return [node, path]
}

/** The stages: each adds one step of a `podctl pods` start to the one before. */
function stages() {
  const bundle = JSON.stringify(`${ROOT}dist/bundle/podctl.quick.cjs`)
  const cache = JSON.stringify(`${ROOT}dist/bundle/podctl.pods.cache`)
  const compile = `const fs = require('fs'), vm = require('vm')
const source = fs.readFileSync(${bundle}, 'latin1')
const file = fs.readFileSync(${cache})
const script = new vm.Script(source, {filename: ${bundle}, cachedData: file.subarray(file.indexOf(10) + 1)})
if (script.cachedDataRejected) throw new Error('the pods code cache was rejected: rebuild podctl')
`
  const directory = JSON.stringify(`${ROOT}dist/bundle`)
  const evaluate = `const bundleModule = {exports: {}}
const wrapper = script.runInThisContext()
wrapper.call(bundleModule.exports, bundleModule.exports, require, bundleModule, ${bundle}, ${directory})
`
  const builtins = builtinsOfPods()
  return [
    {name: 'node -e 0', argv: [node, '-e', '0']},
    {
      name: `+ ${builtins.length} built-in modules`,
      argv: script('builtins.cjs', `for (const name of ${JSON.stringify(builtins)}) require(name)\n`),
    },
    {
      name: '+ bundle read, compiled with its cache',
      argv: script('compile.cjs', `for (const name of ${JSON.stringify(builtins)}) require(name)\n${compile}`),
    },
    {
      name: '+ bundle evaluated',
      argv: script('evaluate.cjs', `for (const name of ${JSON.stringify(builtins)}) require(name)\n${compile}${evaluate}`),
    },
    {name: 'podctl pods', label: '+ the command: podctl pods', argv: [node, PODCTL, 'pods'], bound: 1.35},
  ]
}

/** The least any Node client can do for one unary CRI call: node:http2 alone, the gRPC framing written by hand. */
function http2Floor() {
  const socket = JSON.stringify(env.CONTAINER_RUNTIME_ENDPOINT.replace(/^unix:\/\//, ''))
  return script(
    'http2-floor.cjs',
    `const http2 = require('http2'), net = require('net')
const session = http2.connect('http://localhost', {createConnection: () => net.connect(${socket})})
const path = '/runtime.v1.RuntimeService/ListPodSandbox'
const call = session.request({':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers'})
call.on('data', () => {})
call.on('trailers', (trailers) => {
  if (trailers['grpc-status'] !== '0') process.exitCode = 1
  session.close()
})
call.end(Buffer.alloc(5))
`,
  )
}

/** Runs the cases paired: each round runs every case once, starting one case later than the round before. */
function pairedSamples(cases, extraEnv) {
  const samples = Object.fromEntries(cases.map(({name}) => [name, []]))
  for (const {argv} of cases) timeOnce(argv, extraEnv)
  for (let round = 0; round < rounds; round++) {
    for (let i = 0; i < cases.length; i++) {
      const {name, argv} = cases[(round + i) % cases.length]
      samples[name][round] = timeOnce(argv, extraEnv)
    }
  }

  return samples
}

const ratio = (samples, name, base) => median(samples[name].map((ms, round) => ms / samples[base][round]))
const difference = (samples, name, base) => median(samples[name].map((ms, round) => ms - samples[base][round]))
const verdict = (value, bound) => (value <= bound ? `within ${bound}` : `OVER ${bound}`)

function startupReport(crictl) {
  const stageCases = stages()
  const cases = [
    ...stageCases,
    {name: 'podctl --help', argv: [node, PODCTL, '--help'], bound: 1.35},
    {name: 'podctl pods', argv: [node, PODCTL, 'pods'], bound: 1.35},
    {name: 'podctl ps -a', argv: [node, PODCTL, 'ps', '-a'], bound: 1.35},
    {name: 'bin/crictl pods', argv: [node, `${ROOT}bin/crictl`, 'pods'], bound: 1.35},
    {
      name: 'grpc-js and one ListPodSandbox (bench/floor-list.mjs)',
      argv: [node, `${ROOT}bench/floor-list.mjs`, env.CONTAINER_RUNTIME_ENDPOINT],
    },
    {name: 'node:http2 and one ListPodSandbox, no grpc-js', argv: http2Floor()},
    ...(crictl ? [{name: 'crictl pods (Go)', argv: [crictl, 'pods']}] : []),
  ]
  if (existsSync(binary)) cases.push({name: 'single binary: pods', argv: [binary, 'pods'], against: 'podctl pods', bound: 1})
  const samples = pairedSamples(
    cases.filter((item, i) => cases.findIndex(({name}) => name === item.name) === i),
    env,
  )
  const base = 'node -e 0'
  const rows = [['case', 'median ms', 'x node -e 0', 'issue 37']]
  for (const {name, bound, against} of cases.slice(stageCases.length)) {
    const value = ratio(samples, name, against ?? base)
    rows.push([
      name,
      median(samples[name]).toFixed(1),
      ratio(samples, name, base).toFixed(2),
      bound ? `${value.toFixed(2)} ${against ? `x ${against}, ` : ''}${verdict(value, bound)}` : '',
    ])
  }

  const breakdown = [['where a podctl pods start goes', 'median ms', 'adds (paired, ms)']]
  for (const [i, {name, label}] of stageCases.entries()) {
    const adds = i === 0 ? '' : difference(samples, name, stageCases[i - 1].name).toFixed(1)
    breakdown.push([label ?? name, median(samples[name]).toFixed(1), adds])
  }

  return [rows, breakdown]
}

/** podctl's listings against the reference crictl's on bench/fake-cri.mjs with `pods` kubelet-like pods. */
async function fakeReport(pods, crictl) {
  const socket = join(work, 'cri.sock')
  const server = await startFakeCri(socket, pods)
  try {
    const cases = [
      {name: 'crictl pods', argv: [crictl, 'pods']},
      {name: 'crictl ps -a', argv: [crictl, 'ps', '-a']},
      {name: 'podctl pods', argv: [node, PODCTL, 'pods'], against: 'crictl pods'},
      {name: 'podctl ps -a', argv: [node, PODCTL, 'ps', '-a'], against: 'crictl ps -a'},
    ]
    const samples = pairedSamples(cases, {...env, CONTAINER_RUNTIME_ENDPOINT: `unix://${socket}`})
    return [
      [`fake runtime: ${pods} pods`, 'median ms', 'x crictl', 'issue 37'],
      ...cases.map(({name, against}) => {
        const value = against ? ratio(samples, name, against) : undefined
        return [name, median(samples[name]).toFixed(1), value?.toFixed(2) ?? '', value === undefined ? '' : verdict(value, 2)]
      }),
    ]
  } finally {
    server.kill()
  }
}

try {
  console.log(`podctl start-up against Node's own (issue 37), ${rounds} paired rounds, node ${process.version}\n`)
  const crictl = referenceCrictl()
  const [rows, breakdown] = startupReport(crictl)
  console.log(`${table(rows)}\n\n${table(breakdown)}\n`)
  if (fakePods > 0 && crictl) console.log(`${table(await fakeReport(fakePods, crictl))}\n`)
  else if (fakePods > 0) console.log('no reference crictl: the big listing was not compared (set PODCTL_REFERENCE_CRICTL)\n')
} finally {
  rmSync(work, {recursive: true, force: true})
}
