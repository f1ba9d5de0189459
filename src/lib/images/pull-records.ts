/**
 * Which images podctl pulled, per runtime: image garbage collection removes only those
 * (kubelet/gc/image-gc.ts), never an image crictl, a kubelet or a user pulled on a shared node.
 * The image manager writes a record when its pull succeeds; one small file per image in
 * `<pod dir root>/.image-pulls-<hash of the endpoint>/`, so podctl processes pulling at the same
 * time never overwrite each other's records, and a record is forgotten once its image is gone.
 */
import {createHash} from 'node:crypto'
import {mkdir, readdir, readFile, rename, rm, writeFile} from 'node:fs/promises'
import {join} from 'node:path'

import {normalizeEndpoint} from '../cri/endpoint.js'
import type {Image} from '../../generated/runtime/v1/api.js'

export interface PullRecord {
  /** The image ID the runtime reported after the pull (ImageStatus), else the pull's image ref. */
  imageId: string
  /** PullImage's answer (an ID or a repo@digest, as the runtime gives it). */
  imageRef: string
  /** The reference pulled, with its default tag. */
  image: string
  pulledMs: number
}

const hash = (text: string, length: number) => createHash('sha256').update(text).digest('hex').slice(0, length)

/** `<podDirRoot>/.image-pulls-<hash>`: a dot name, which pod directory scans pass by (no pod.json). */
export function pullRecordsDir(podDirRoot: string, runtimeEndpoint: string): string {
  let endpoint = runtimeEndpoint.trim()
  try {
    endpoint = normalizeEndpoint(endpoint)
  } catch {
    // As given: the same spelling finds the same records.
  }

  return join(podDirRoot, `.image-pulls-${hash(endpoint, 12)}`)
}

/** Whether `record` is a pull of `image` (by ID, or by the digest reference the pull answered). */
export function isPullOf(record: PullRecord, image: Pick<Image, 'id' | 'repoDigests'>): boolean {
  return record.imageId === image.id || record.imageRef === image.id || image.repoDigests.includes(record.imageRef)
}

export class PullRecords {
  constructor(readonly dir: string) {}

  /** Best effort: a pull whose record cannot be written is an image garbage collection leaves alone. */
  async record(pull: PullRecord): Promise<void> {
    const file = join(this.dir, `${hash(pull.imageId, 32)}.json`)
    const temporary = `${file}.${process.pid}.tmp`
    try {
      await mkdir(this.dir, {recursive: true, mode: 0o700})
      await writeFile(temporary, `${JSON.stringify(pull)}\n`, {mode: 0o600})
      await rename(temporary, file)
    } catch {
      await rm(temporary, {force: true}).catch(() => {})
    }
  }

  async read(): Promise<PullRecord[]> {
    const names = await readdir(this.dir).catch(() => [] as string[])
    const records = await Promise.all(names.filter((name) => name.endsWith('.json')).map((name) => this.readOne(name)))
    return records.filter((record): record is PullRecord => record !== undefined)
  }

  /**
   * Forgets the records of images the runtime no longer lists (`images`, listed at `listedMs`). A
   * record written after the listing began may be of an image the listing could not see yet: it stays.
   */
  async forgetGone(images: readonly Image[], listedMs: number): Promise<void> {
    for (const record of await this.read()) {
      if (record.pulledMs >= listedMs || images.some((image) => isPullOf(record, image))) continue
      await rm(join(this.dir, `${hash(record.imageId, 32)}.json`), {force: true}).catch(() => {})
    }
  }

  private async readOne(name: string): Promise<PullRecord | undefined> {
    try {
      const record = JSON.parse(await readFile(join(this.dir, name), 'utf8')) as Partial<PullRecord>
      const valid =
        typeof record.imageId === 'string' &&
        typeof record.imageRef === 'string' &&
        typeof record.image === 'string' &&
        typeof record.pulledMs === 'number'
      return valid ? (record as PullRecord) : undefined
    } catch {
      return undefined
    }
  }
}
