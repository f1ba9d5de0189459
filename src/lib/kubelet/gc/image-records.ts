/**
 * What the kubelet's image GC remembers of each image (imageRecords): when it was first seen and
 * when a container last used it. A supervisor keeps them in memory across rounds; a one-shot
 * `podctl gc` has no memory, so records live in a small file beside the pod directories (one per
 * runtime) and every run of gc or a supervisor updates it. An image podctl never saw before is
 * first seen now, as the kubelet takes every image it finds at start.
 */
import {createHash} from 'node:crypto'
import {mkdir, readFile, rename, writeFile} from 'node:fs/promises'
import {dirname, join} from 'node:path'

import type {Image} from '../../../generated/runtime/v1/api.js'

export interface ImageRecord {
  /** Epoch ms the image was first seen. */
  firstDetectedMs: number
  /** Epoch ms a container last used it; 0 when none has since it was first seen. */
  lastUsedMs: number
}

/** `<podDirRoot>/.image-gc-<hash of the endpoint>.json`: a file, so pod directory scans (directories) pass it by. */
export function imageRecordsFile(podDirRoot: string, runtimeEndpoint: string): string {
  const hash = createHash('sha256').update(runtimeEndpoint).digest('hex').slice(0, 12)
  return join(podDirRoot, `.image-gc-${hash}.json`)
}

export class ImageRecords {
  private records = new Map<string, ImageRecord>()
  private loaded = false

  /** Without a file the records live only as long as this object (tests, dry runs). */
  constructor(private readonly file?: string) {}

  /** The kubelet's detectImages: new images are first seen now, used ones used now, vanished ones forgotten. */
  async detect(images: readonly Image[], inUse: (image: Image) => boolean, nowMs: number): Promise<ReadonlyMap<string, ImageRecord>> {
    await this.load()
    const next = new Map<string, ImageRecord>()
    for (const image of images) {
      const record = this.records.get(image.id) ?? {firstDetectedMs: nowMs, lastUsedMs: 0}
      next.set(image.id, inUse(image) ? {...record, lastUsedMs: nowMs} : record)
    }

    this.records = next
    return next
  }

  /** Writes the records (atomically); a failure only costs the memory of first-seen times. */
  async save(): Promise<void> {
    if (!this.file) return
    const text = JSON.stringify({images: Object.fromEntries(this.records)})
    const temporary = `${this.file}.${process.pid}.tmp`
    try {
      await mkdir(dirname(this.file), {recursive: true})
      await writeFile(temporary, text, {mode: 0o600})
      await rename(temporary, this.file)
    } catch {
      // Next round starts from what is in memory.
    }
  }

  private async load(): Promise<void> {
    if (this.loaded || !this.file) return
    this.loaded = true
    try {
      const parsed = JSON.parse(await readFile(this.file, 'utf8')) as {images?: Record<string, Partial<ImageRecord>>}
      for (const [id, record] of Object.entries(parsed.images ?? {})) {
        if (typeof record?.firstDetectedMs === 'number')
          this.records.set(id, {firstDetectedMs: record.firstDetectedMs, lastUsedMs: Number(record.lastUsedMs) || 0})
      }
    } catch {
      // No file yet, or unreadable: every image is first seen now.
    }
  }
}
