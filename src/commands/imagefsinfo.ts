import {Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {outputFlag} from '../lib/flags.js'
import {humanSize, nanosToIso} from '../lib/output/format.js'
import {renderTable} from '../lib/output/table.js'
import {imageFsInfo} from '../lib/node/runtime-info.js'
import type {FilesystemUsage, ImageFsInfoResponse} from '../generated/runtime/v1/api.js'

export default class Imagefsinfo extends BaseCommand<typeof Imagefsinfo> {
  static override summary = 'Show how much disk the image (and container) filesystems use (CRI ImageFsInfo).'

  static override description = `One ImageFsInfo call. JSON (the default, as in crictl) is crictl's document: \
{"status": {"imageFilesystems": [...], "containerFilesystems": [...]}}, each entry with timestamp (Unix \
nanoseconds), fsId.mountpoint, usedBytes.value and inodesUsed.value (int64 as strings). -o table prints one row per \
filesystem: which one, its mount point, bytes and inodes used (decimal sizes), and when the runtime measured it. \
containerd reports its snapshotter's directory as the image filesystem; containerFilesystems is empty unless the \
runtime keeps containers on a separate filesystem.`

  static override examples = [
    example('As crictl prints it'),
    example('A table', '-o table'),
    example('Bytes used by images', `-o jsonpath='{.status.imageFilesystems[0].usedBytes.value}'`),
  ]

  static override flags = {
    output: outputFlag(['json', 'yaml', 'table'], {templates: true}),
    template: Flags.string({summary: 'Go-template field paths to print, e.g. {{(index .status.imageFilesystems 0).fsId.mountpoint}}.'}),
  }

  public async run(): Promise<{status: ImageFsInfoResponse}> {
    const document = await imageFsInfo(await this.client())
    await this.emit(document, () => this.table(document.status))
    return document
  }

  private table(status: ImageFsInfoResponse): string {
    const row = (kind: string, usage: FilesystemUsage) => [
      kind,
      usage.fsId?.mountpoint ?? '',
      humanSize(usage.usedBytes?.value ?? 0),
      usage.inodesUsed?.value ?? '',
      nanosToIso(usage.timestamp) ?? '',
    ]
    return renderTable(
      ['FILESYSTEM', 'MOUNTPOINT', 'USED', 'INODES', 'TIMESTAMP'],
      [
        ...status.imageFilesystems.map((usage) => row('image', usage)),
        ...status.containerFilesystems.map((usage) => row('container', usage)),
      ],
    )
  }
}
