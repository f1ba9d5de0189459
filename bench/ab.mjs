#!/usr/bin/env node
// A/B: this build against another build of podctl (e.g. main's, in a worktree of its own with
// `npm run build` done), interleaved round by round so the lab's load and size affect both alike.
// Prints each command's median time for A and B and the median of the per-round ratios A/B.
// Not a test: run with the lab up and both builds made.
//   ROUNDS=30 node bench/ab.mjs /path/to/other/podctl
// AB_ENDPOINT names another runtime (e.g. bench/fake-cri.mjs's socket) and AB_COMMANDS other
// commands, separated by ";" (default "pods -o json;ps -a -o json").
import {join} from 'node:path'

import {compare, labEnv, PODCTL, table} from './lib.mjs'

const other = process.argv[2]
if (!other) throw new Error('usage: node bench/ab.mjs /path/to/other/podctl   (its root, built with npm run build)')
const rounds = Number(process.env.ROUNDS ?? 30)
const env = {CONTAINER_RUNTIME_ENDPOINT: process.env.AB_ENDPOINT ?? labEnv().PODCTL_LAB_ENDPOINT, NO_COLOR: '1'}
const node = process.execPath
const B = join(other, 'bin', 'run.js')
const commands = (process.env.AB_COMMANDS ?? 'pods -o json;ps -a -o json').split(';').map((command) => command.trim().split(/\s+/))
const cases = commands.flatMap((args) => {
  const name = args.join(' ')
  return [
    {name: `B: ${name}`, argv: [node, B, ...args]},
    {name: `A: ${name}`, argv: [node, PODCTL, ...args], floor: `B: ${name}`},
  ]
})
const results = compare(cases, rounds, env)
const rows = [['command', 'A ms', 'B ms', 'A/B (median of rounds)']]
for (const args of commands) {
  const name = args.join(' ')
  const a = results[`A: ${name}`]
  const b = results[`B: ${name}`]
  rows.push([name, a.ms.toFixed(1), b.ms.toFixed(1), a.ratio.toFixed(3)])
}

console.log(`A = ${PODCTL}\nB = ${B}\n${rounds} interleaved rounds\n`)
console.log(table(rows))
