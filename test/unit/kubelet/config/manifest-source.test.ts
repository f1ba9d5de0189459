import {chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, truncateSync, writeFileSync, writeSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {describe, expect, it} from 'vitest'

import {checkWatchedPaths, ManifestSource, type SourceUpdate, unsafeToRead} from '../../../../src/lib/kubelet/config/manifest-source.js'
import {until} from '../../../support/until.js'

const pod = (name: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  containers:\n  - {name: app, image: busybox:1.36}\n`

function directory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'podctl-source-'))
  chmodSync(dir, 0o755)
  return dir
}

/** A source on `dir` with its updates collected, until the returned stop is called. */
function watchDir(dir: string, settleMs: number) {
  const updates: SourceUpdate[] = []
  const stop = new AbortController()
  const source = new ManifestSource([dir], {
    claimsRoot: '/claims',
    settleMs,
    rescanMs: 50,
    async onUpdate(update) {
      updates.push(update)
    },
  })
  const running = source.run(stop.signal)
  return {
    updates,
    names: () =>
      updates.at(-1)?.files.map((file) => `${file.path.slice(dir.length + 1)}:${file.pods?.map((p) => p.name).join(',') ?? file.error}`),
    async stop() {
      stop.abort()
      await running
    },
  }
}

describe('ManifestSource', () => {
  it('reads .yaml/.yml/.json files (not hidden ones, not backups, not others); an emptied file is kept, a removed one goes', async () => {
    const dir = directory()
    writeFileSync(join(dir, 'a.yaml'), pod('a'))
    writeFileSync(
      join(dir, 'b.json'),
      JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'b'}, spec: {containers: [{name: 'c', image: 'busybox:1.36'}]}}),
    )
    writeFileSync(join(dir, '.hidden.yaml'), pod('hidden'))
    writeFileSync(join(dir, 'notes.txt'), 'not a manifest')
    for (const backup of ['a.yaml~', 'a.yaml.bak', '#a.yaml#', '.a.yaml.swp']) writeFileSync(join(dir, backup), pod('backup'))
    const watch = watchDir(dir, 20)
    try {
      await until('the first update', () => watch.updates.length > 0, {timeoutMs: 5000})
      expect(watch.names()).toEqual(['a.yaml:a', 'b.json:b'])
      expect(watch.updates[0].kept).toEqual(new Set())
      writeFileSync(join(dir, 'a.yaml'), '# emptied\n')
      const empty = `${join(dir, 'a.yaml')} is empty (no YAML or JSON document in it); remove the file to remove its pods`
      await until('the emptied file', () => watch.names()?.[0] === `a.yaml:${empty}`, {timeoutMs: 5000})
      expect(watch.updates.at(-1)!.kept).toEqual(new Set([join(dir, 'a.yaml')]))
      rmSync(join(dir, 'a.yaml'))
      await until('the removed file', () => watch.names()?.join(',') === 'b.json:b', {timeoutMs: 5000})
      expect(watch.updates.at(-1)!.kept).toEqual(new Set())
    } finally {
      await watch.stop()
    }
  })

  it('leaves a new file that is still empty unsaid (its writer may not have written yet), then reads it', async () => {
    const dir = directory()
    writeFileSync(join(dir, 'a.yaml'), pod('a'))
    writeFileSync(join(dir, 'new.yaml'), '')
    const watch = watchDir(dir, 20)
    try {
      await until('the first update', () => watch.updates.length > 0, {timeoutMs: 5000})
      expect(watch.names()).toEqual(['a.yaml:a'])
      expect(watch.updates.at(-1)!.settling).toEqual(new Set([join(dir, 'new.yaml')]))
      writeFileSync(join(dir, 'new.yaml'), pod('new'))
      await until('the written file', () => watch.names()?.join(',') === 'a.yaml:a,new.yaml:new', {timeoutMs: 5000})
      expect(watch.updates.flatMap((update) => update.files).filter((file) => file.error)).toEqual([])
    } finally {
      await watch.stop()
    }
  })

  it('keeps what it knew of a directory moved away: a file emptied the moment it is back is said empty, and kept', async () => {
    const parent = directory()
    const dir = join(parent, 'manifests')
    mkdirSync(dir, {mode: 0o755})
    writeFileSync(join(dir, 'a.yaml'), pod('a'))
    const watch = watchDir(dir, 20)
    try {
      await until('the first update', () => watch.names()?.join(',') === 'a.yaml:a', {timeoutMs: 5000})
      renameSync(dir, `${dir}.away`)
      await until('the move', () => watch.updates.at(-1)!.kept.has(dir), {timeoutMs: 5000})
      renameSync(`${dir}.away`, dir)
      truncateSync(join(dir, 'a.yaml'), 0)
      const empty = `${join(dir, 'a.yaml')} is empty (no YAML or JSON document in it); remove the file to remove its pods`
      await until('the emptied file', () => watch.names()?.join(',') === `a.yaml:${empty}`, {timeoutMs: 5000})
      expect(watch.updates.at(-1)!.kept).toEqual(new Set([join(dir, 'a.yaml')]))
    } finally {
      await watch.stop()
    }
  })

  it('never reads a file until it has stayed the same for the settle time', async () => {
    const dir = directory()
    const watch = watchDir(dir, 3000)
    try {
      await until('the first update', () => watch.updates.length > 0, {timeoutMs: 5000})
      const path = join(dir, 'slow.yaml')
      const fd = openSync(path, 'w', 0o644)
      const text = pod('slow')
      writeSync(fd, text.slice(0, 30))
      await new Promise((resolve) => {
        setTimeout(resolve, 200)
      })
      writeSync(fd, text.slice(30))
      closeSync(fd)
      await until('the written file', () => watch.names()?.includes('slow.yaml:slow'), {timeoutMs: 10_000})
      // No update ever held the half: no error was read from it.
      expect(watch.updates.flatMap((update) => update.files).filter((file) => file.error)).toEqual([])
      expect(watch.updates.some((update) => update.settling.has(path))).toBe(true)
    } finally {
      await watch.stop()
    }
  })

  it('refuses files and directories others may write, or that another user owns', async () => {
    expect(unsafeToRead('/m/x.yaml', {mode: 0o10_0666, uid: 0})).toBe(
      '/m/x.yaml is writable by users other than its owner (mode 0666); fix: chmod go-w /m/x.yaml',
    )
    expect(unsafeToRead('/m', {mode: 0o4_0775, uid: 0})).toContain('mode 0775')
    expect(unsafeToRead('/m', {mode: 0o4_0755, uid: 4242})).toBe('/m belongs to uid 4242, not to root or to this user; fix: chown root /m')
    expect(unsafeToRead('/m', {mode: 0o4_0755, uid: 0})).toBeUndefined()

    const dir = directory()
    const open = join(dir, 'open')
    mkdirSync(open)
    chmodSync(open, 0o777)
    await expect(checkWatchedPaths([open])).rejects.toThrow(`-f ${open} is writable by users other than its owner (mode 0777)`)
    await expect(checkWatchedPaths([join(dir, 'nope')])).rejects.toThrow(`-f ${join(dir, 'nope')}: no such file or directory`)
    await expect(checkWatchedPaths(['-'])).rejects.toThrow('-f - (stdin) cannot be watched')

    // A writable file inside a safe directory is refused alone.
    writeFileSync(join(dir, 'ok.yaml'), pod('ok'))
    writeFileSync(join(dir, 'loose.yaml'), pod('loose'))
    chmodSync(join(dir, 'loose.yaml'), 0o666)
    const watch = watchDir(dir, 20)
    try {
      await until('the first update', () => watch.updates.length > 0, {timeoutMs: 5000})
      expect(watch.names()).toEqual(['ok.yaml:ok'])
      expect([...watch.updates[0].unreadable.values()]).toEqual([
        `${join(dir, 'loose.yaml')} is writable by users other than its owner (mode 0666); fix: chmod go-w ${join(dir, 'loose.yaml')}`,
      ])
    } finally {
      await watch.stop()
    }
  })
})
