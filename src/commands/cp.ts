import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {outputFlag} from '../lib/flags.js'
import {copy, type CopyResult} from '../lib/host/copy.js'
import {streamSink} from '../lib/host/tar-writer.js'
import {humanSize} from '../lib/output/format.js'

export default class Cp extends BaseCommand<typeof Cp> {
  static override summary = 'Copy files and directories between a running container and this host, through its root.'

  static override description = `One side is POD[/CONTAINER]:PATH (a pod's first running container unless CONTAINER \
is given; a container ID prefix works in place of POD), the other a local path, as in kubectl cp; a local path with a \
":" must start with "./" or "/". The copy goes through the container's root as the host sees it \
(/proc/PID/root), so it works on an image without a shell or tar. A symlink met on the way is followed inside the \
container, and one that leads out of its root is refused (exit 18), never followed to the host's files. Directories \
are copied whole, symlinks as symlinks; devices, sockets and FIFOs are skipped and named. Out of the container, files \
are owned by podctl's user with the container's modes; into it, they keep the local modes and owners (mapped into the \
container's user namespace), as kubectl cp leaves them. A missing file exits 5.

"-" stands for a tar stream, as in docker cp: POD:PATH - writes PATH (a file or a directory) to stdout as a tar \
archive, with the container's modes, mtimes and owners; - POD:DIR extracts a tar archive from stdin (pax, ustar or \
GNU) into DIR, with the archive's modes, mtimes and owners. An entry with an absolute name, a "..", or a path \
through a symlink is refused (exit 18) and named; what was extracted before a failure stays and the error says what.

JSON and YAML: {"direction": "in"|"out", "containerId", "files", "directories", "symlinks", "bytes", "skipped"}.`

  static override examples = [
    example('A file out of a container', 'web/app:/etc/nginx/nginx.conf ./nginx.conf -n shop'),
    example('A directory into a pod (its first container)', './fixtures web:/srv/fixtures -n shop'),
    example('By container ID prefix', '4f2a9c:/var/log/app.log /tmp/'),
    example('A directory out as a tar stream', 'web/app:/var/log - -n shop | tar -tvf -'),
    example('A tar stream into a directory', '- web/app:/srv -n shop < fixtures.tar'),
  ]

  static override args = {
    source: Args.string({description: 'POD[/CONTAINER]:PATH or a local path', required: true}),
    destination: Args.string({description: 'a local path or POD[/CONTAINER]:PATH', required: true}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Namespace of the pod (default "default").'}),
    output: outputFlag(['table', 'json', 'yaml']),
  }

  public async run(): Promise<CopyResult> {
    const streams = {input: process.stdin, output: streamSink(process.stdout)}
    const {source, destination} = this.args
    if (destination === '-' && this.machineOutput()) {
      throw new UsageError('cp POD:PATH -: stdout carries the tar archive; drop -o/--json')
    }

    if (source === '-' && process.stdin.isTTY)
      throw new UsageError('cp - POD:DIR reads a tar archive from stdin, which is a terminal; pipe one in')
    const result = await copy(await this.client(), source, destination, {namespace: this.flags.namespace, streams})
    // With "-" as the destination stdout carries the archive: nothing else may go there.
    if (destination !== '-') await this.emit(result, () => Cp.summaryLine(result))
    return result
  }

  static summaryLine(result: CopyResult): string {
    const what = [`${result.files} file${result.files === 1 ? '' : 's'}`, humanSize(result.bytes)]
    if (result.directories > 0) what.push(`${result.directories} director${result.directories === 1 ? 'y' : 'ies'}`)
    if (result.symlinks > 0) what.push(`${result.symlinks} symlink${result.symlinks === 1 ? '' : 's'}`)
    const skipped = result.skipped.length > 0 ? `; skipped (not a file, directory or symlink): ${result.skipped.join(', ')}` : ''
    return `copied ${result.direction === 'in' ? 'into' : 'out of'} ${result.containerId.slice(0, 12)}: ${what.join(', ')}${skipped}`
  }
}
