import {spawnSync} from 'node:child_process'
import {copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {afterAll, describe, expect, it, vi} from 'vitest'

import {injectBlob, isUnnamedNoteWarning} from '../../../scripts/bundle/inject.mjs'

/**
 * npm run build:binary injects the blob with postject, whose LIEF prints one "Can't find string
 * offset for section name '.note…'" warning per note section it creates (nine for nodejs.org's
 * node). A small ELF (/bin/true) with a fuse appended shows the same on one note in ~0.1 s.
 */
const FUSE = 'PODCTL_TEST_FUSE_5f0c2e'
const work = mkdtempSync(join(tmpdir(), 'podctl-inject-'))
afterAll(() => rmSync(work, {recursive: true, force: true}))

/** A copy of /bin/true with the fuse (unset) appended, optionally damaged first. */
function target(name: string, damage?: (elf: Buffer) => void): string {
  const elf = readFileSync('/bin/true')
  damage?.(elf)
  const file = join(work, name)
  writeFileSync(file, Buffer.concat([elf, Buffer.from(`${FUSE}:0`)]), {mode: 0o755})
  return file
}

describe('injecting the single-executable blob', () => {
  it("postject itself prints LIEF's warning for the note section it adds (why the filter exists)", async () => {
    const file = target('plain')
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {})
    try {
      const {inject} = createRequire(import.meta.url)('postject')
      await inject(file, 'NODE_SEA_BLOB', Buffer.from('blob'), {sentinelFuse: FUSE})
      expect(warn.mock.calls.map((args) => args.join(' '))).toContain("warning: Can't find string offset for section name '.note'")
    } finally {
      warn.mockRestore()
    }
  })

  it('prints nothing for a sound executable, sets the fuse and leaves it runnable', async () => {
    const file = target('sound')
    const lines: string[] = []
    await injectBlob(file, Buffer.from('blob'), FUSE, (line) => lines.push(line))
    expect(lines).toEqual([])
    expect(readFileSync(file).includes(`${FUSE}:1`)).toBe(true)
    expect(spawnSync(file).status).toBe(0)
  })

  it("shows postject's other lines and throws its error for a damaged executable", async () => {
    // The section header table's offset points past the end of the file.
    const file = target('damaged', (elf) => elf.writeBigUInt64LE(BigInt(elf.length + 4096), 0x28))
    const lines: string[] = []
    await expect(injectBlob(file, Buffer.from('blob'), FUSE, (line) => lines.push(line))).rejects.toThrow(
      `Could not find the sentinel ${FUSE} in the binary`,
    )
    expect(lines).toContain("error:   Can't parse section #00")
    expect(lines).toContain("warning: Can't find string offset for section name '.note.gnu.property'")
    expect(lines).not.toContain("warning: Can't find string offset for section name '.note'")
  })

  it('leaves console.warn as it was, also after a failure', async () => {
    const before = console.warn
    copyFileSync('/bin/true', join(work, 'no-fuse'))
    await expect(injectBlob(join(work, 'no-fuse'), Buffer.from('blob'), FUSE, () => {})).rejects.toThrow('Could not find the sentinel')
    expect(console.warn).toBe(before)
  })

  it('drops only the warnings for note sections LIEF created and named by type', () => {
    expect(isUnnamedNoteWarning("warning: Can't find string offset for section name '.note'")).toBe(true)
    expect(isUnnamedNoteWarning("warning: Can't find string offset for section name '.note.100'")).toBe(true)
    expect(isUnnamedNoteWarning("warning: Can't find string offset for section name '.note.gnu.property'")).toBe(false)
    expect(isUnnamedNoteWarning("warning: Can't find string offset for section name ''")).toBe(false)
    expect(isUnnamedNoteWarning("error: Can't find string offset for section name '.note'")).toBe(false)
    expect(isUnnamedNoteWarning("warning: Can't find string offset for section name '.note' (again)")).toBe(false)
  })
})
