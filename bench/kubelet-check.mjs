#!/usr/bin/env node
// The cost of the kubelet check that run, runp, create, start and sync make before creating anything
// (dist/lib/local-kubelet/detect.js kubeletOfRuntime), side by side with its floor: one readdir of /proc
// and one read of each process's comm, the least any /proc scan does. In-process, many calls, medians:
// once with no kubelet (every node without one pays this), once beside a stand-in kubelet process
// connected to the runtime socket under another endpoint flag (the slowest path: its argv, then `ss`).
// Not a test: run `npm run bench:kubelet-check` with the lab up and podctl built.
import {spawn} from 'node:child_process'
import {mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {kubeletOfRuntime} from '../dist/lib/local-kubelet/detect.js'
import {labEnv, median, ROOT, table} from './lib.mjs'

const endpoint = labEnv().PODCTL_LAB_ENDPOINT
const rounds = Number(process.env.ROUNDS ?? 200)
const noOrphan = {rootDir: '/nonexistent'}

function floor() {
  for (const entry of readdirSync('/proc')) {
    const first = entry.codePointAt(0)
    if (first < 48 || first > 57) continue
    try {
      readFileSync(`/proc/${entry}/comm`, 'utf8')
    } catch {}
  }
}

async function time(rounds, call) {
  const times = []
  for (let i = 0; i < rounds; i++) {
    const started = performance.now()
    await call()
    times.push(performance.now() - started)
  }

  return median(times)
}

async function measure(label) {
  // Interleaved: the floor and the check take turns, so noise hits both.
  const floors = []
  const checks = []
  for (let i = 0; i < 5; i++) {
    floors.push(await time(rounds / 5, floor))
    checks.push(await time(rounds / 5, () => kubeletOfRuntime(endpoint, noOrphan)))
  }

  return [label, `${median(floors).toFixed(2)} ms`, `${median(checks).toFixed(2)} ms`, (median(checks) / median(floors)).toFixed(2)]
}

const processes = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).length
const rows = [['case', 'floor (/proc comm scan)', 'kubelet check', '× floor'], await measure(`no kubelet (${processes} processes)`)]

const dir = mkdtempSync(join(tmpdir(), 'podctl-bench-kubelet-'))
symlinkSync(process.execPath, join(dir, 'kubelet'))
const socket = endpoint.replace(/^unix:\/\//, '')
const standIn = spawn(
  join(dir, 'kubelet'),
  [`${ROOT}test/support/kubelet-stand-in.mjs`, '--connect', socket, '--container-runtime-endpoint', 'unix:///run/elsewhere.sock'],
  {
    stdio: ['ignore', 'pipe', 'inherit'],
  },
)
await new Promise((resolve) => {
  standIn.stdout.once('data', resolve)
})
try {
  if ((await kubeletOfRuntime(endpoint, noOrphan))?.pid !== standIn.pid) throw new Error('the stand-in kubelet was not found')
  rows.push(await measure('beside a kubelet found by its connection (ss)'))
} finally {
  standIn.kill()
  rmSync(dir, {recursive: true, force: true})
}

console.log(table(rows))
