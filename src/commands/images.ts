import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {humanSize, truncateId} from '../lib/output/format.js'
import {renderTable} from '../lib/output/table.js'
import {type ImageRow, imagesOf, listImageRows, NONE, parseImageFilters} from '../lib/images/store.js'
import type {Image} from '../generated/runtime/v1/api.js'

export interface ImagesResult {
  images: Image[]
}

export default class Images extends BaseCommand<typeof Images> {
  static override summary = 'List images, one row per tag.'

  static override hiddenAliases = ['image', 'img']

  static override description = `One ListImages call. An image with several tags shows once per tag (same IMAGE ID); \
an image without tags shows as <none> (dangling). Sizes are decimal (1MB = 1000000 bytes), like crictl and docker. \
REPOSITORY[:TAG] and --filter reference= are exact unless they contain "*", and also match docker's short names \
(busybox for docker.io/library/busybox). Repeated reference filters are alternatives; filters of different kinds \
must all match. JSON and YAML carry the CRI Image objects ({"images": [...]}, size as a string).`

  static override examples = [
    example('Every image'),
    example('One repository, with digests', 'registry.k8s.io/pause --digests'),
    example('Untagged images, IDs only (for podctl rmi)', '--filter dangling=true -q'),
    example('Every tag, digest and exact size of each image', '-v'),
    example('Images from the local registry, pinned ones marked', `--filter reference='localhost:5000/*' --pinned`),
  ]

  static override args = {
    repository: Args.string({description: 'Only this REPOSITORY or REPOSITORY:TAG (exact or * glob).'}),
  }

  static override flags = {
    filter: Flags.string({
      char: 'f',
      summary: 'Filter: dangling=true|false or reference=PATTERN (repeatable).',
      multiple: true,
      helpValue: 'KEY=VALUE',
    }),
    digests: Flags.boolean({summary: 'Add a DIGEST column.'}),
    pinned: Flags.boolean({summary: 'Add a PINNED column (images the runtime keeps from garbage collection).'}),
    quiet: Flags.boolean({char: 'q', summary: 'Print full image IDs only, once per image.'}),
    verbose: Flags.boolean({char: 'v', summary: 'One block per image, as crictl images -v prints it (size in bytes).'}),
    'no-trunc': Flags.boolean({summary: 'Show full image IDs and digests.'}),
    output: outputFlag(['table', 'json', 'yaml'], {templates: true}),
  }

  public async run(): Promise<ImagesResult> {
    const {flags} = this
    const filters = parseImageFilters(flags.filter, this.args.repository)
    const rows = await listImageRows(await this.client(), filters)
    const result: ImagesResult = {images: imagesOf(rows)}

    if (flags.quiet) {
      if (!this.jsonEnabled()) for (const image of result.images) this.log(image.id)
      return result
    }

    const human = flags.verbose ? () => this.verbose(result.images) : () => this.table(rows, flags.digests, flags.pinned, flags['no-trunc'])
    await this.emit(result, human)
    return result
  }

  /** crictl's `images -v`: ID, one line per tag and digest, size in bytes, user, pinned; a blank line after each. */
  private verbose(images: Image[]): string {
    return images
      .map((image) => {
        const lines = [`ID: ${image.id}`, ...image.repoTags.map((tag) => `RepoTags: ${tag}`)]
        lines.push(...image.repoDigests.map((digest) => `RepoDigests: ${digest}`), `Size: ${image.size}`)
        if (image.uid) lines.push(`Uid: ${image.uid.value}`)
        if (image.username) lines.push(`Username: ${image.username}`)
        lines.push(`Pinned: ${image.pinned}`, '')
        return lines.join('\n')
      })
      .join('\n')
      .trimEnd()
  }

  private table(rows: ImageRow[], digests: boolean, pinned: boolean, noTrunc: boolean): string {
    const {chalk} = this
    const headers = ['IMAGE', 'TAG']
    if (digests) headers.push('DIGEST')
    headers.push('IMAGE ID', 'SIZE')
    if (pinned) headers.push('PINNED')
    return renderTable(
      headers,
      rows.map((row) => {
        const cells = [row.repository, row.tag === NONE ? chalk.dim(NONE) : row.tag]
        if (digests) cells.push(row.digest ? truncateId(row.digest, noTrunc) : NONE)
        cells.push(truncateId(row.image.id, noTrunc), humanSize(row.image.size))
        if (pinned) cells.push(String(row.image.pinned))
        return cells
      }),
    )
  }
}
