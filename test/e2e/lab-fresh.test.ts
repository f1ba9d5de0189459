/**
 * The private instance of the lab's runtime that test/support/fresh-runtime.ts starts (written by
 * `scripts/lab.sh fresh DIR`) must share nothing writable with the lab it stands beside: specs run
 * `rm -a`, `rmi -a` and `rmp -a` on it. Every path its files name is under DIR, or a binary, plugin
 * or search path it only reads; its CNI bridge and subnet are not the lab's.
 */
import {mkdtempSync, readdirSync, readFileSync, rmSync, statSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it} from 'vitest'

import {writeFreshRuntime} from '../support/fresh-runtime.js'
import {lab} from '../support/lab.js'

/** What an instance only reads: binaries, the CNI plugins, PATH entries. */
const READ_ONLY = [/^\/usr\/(local\/)?s?bin(\/|$)/, /^\/s?bin(\/|$)/, /^\/usr\/lib\/cni$/, /^\/var\/cache\/podctl-lab\/bin\//]

function filesUnder(dir: string): string[] {
  return readdirSync(dir, {recursive: true, encoding: 'utf8'})
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
}

describe(`scripts/lab.sh fresh on ${process.env.PODCTL_LAB_RUNTIME || 'containerd2'}`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-lab-fresh-'))
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it('names no path outside its dir but binaries, plugins and PATH, and a network of its own', () => {
    const endpoint = writeFreshRuntime(dir)
    expect(endpoint.startsWith(`unix://${dir}/`)).toBe(true)
    const files = filesUnder(dir)
    expect(files.map((file) => file.slice(dir.length + 1))).toContain('start')
    // comments (TOML's and sh's) may name the node's paths, to say why they are not used
    const text = files.map((file) => readFileSync(file, 'utf8').replaceAll(/(^|\s)#.*$/gm, '')).join('\n')
    // absolute paths: not a path's tail after a shell variable (`${arg}/config.json`)
    const paths = new Set(text.match(/(?<![\w.:/}$-])\/[\w.@/-]+/g))
    const elsewhere = [...paths].filter((path) => !path.startsWith(`${dir}/`) && !READ_ONLY.some((pattern) => pattern.test(path)))
    expect(elsewhere).toEqual([])
    const cidr = /"subnet": "([\d./]+)"/.exec(text)?.[1]
    expect(cidr).toMatch(/^10\.\d+\.0\.0\/16$/)
    expect(cidr).not.toBe(lab().podCidr)
  })
})
