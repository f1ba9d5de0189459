/**
 * `podctl claims`: the PersistentVolumeClaims' local directories (kubelet/claims/claim-list.ts)
 * — size, request, the running pod using each — and, with --delete, the explicit removal of named
 * claims' data.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {claimsRootFlag, outputFlag, podDirRootFlag} from '../lib/flags.js'
import {DEFAULT_NAMESPACE} from '../lib/kube/helpers.js'
import {type ClaimRow, claimRows, deleteNamedClaims} from '../lib/kubelet/claims/claim-list.js'
import {humanSize} from '../lib/output/format.js'
import {renderTable} from '../lib/output/table.js'

export default class Claims extends BaseCommand<typeof Claims> {
  static override summary = 'List the claims (PersistentVolumeClaim directories) with size and user, or delete named ones.'

  static override description = `run serves every persistentVolumeClaim volume (and a StatefulSet's volumeClaimTemplates) \
from the directory --claims-root/<namespace>/<claim>, made on first use (mode 0777) and kept across kill and run, with \
<claim>.claim.json beside it recording the claim. This lists them: namespace, name, bytes used, the claim's requested \
storage (not enforced), the running pod using it and the path. --delete NAME... removes the named claims' data in \
--namespace (default "default"); a claim a running pod uses is refused (exit 9) naming the pod. kill --delete-claims \
removes the claims of the pods it kills.`

  static override examples = [
    example('Every claim, with its size and the pod using it'),
    example('Delete the data of claim data-web-0 in namespace prod', '--delete data-web-0 -n prod'),
  ]

  static override strict = false

  static override args = {
    claim: Args.string({description: 'Claim names: only these are listed (or deleted with --delete).'}),
  }

  static override flags = {
    namespace: Flags.string({char: 'n', summary: 'Only claims of this namespace (with --delete: default "default").'}),
    delete: Flags.boolean({summary: "Remove the named claims' data (a claim a running pod uses is refused)."}),
    'claims-root': claimsRootFlag,
    'pod-dir-root': podDirRootFlag,
    output: outputFlag(['table', 'json', 'yaml']),
  }

  public async run(): Promise<{items: ClaimRow[]} | {removed: string[]}> {
    const {flags, positional: names} = this
    const settings = {claimsRoot: flags['claims-root'], podDirRoot: flags['pod-dir-root']}
    if (flags.delete) {
      if (names.length === 0) throw new UsageError('--delete needs the claim names: podctl claims --delete NAME [-n NAMESPACE]')
      const namespace = flags.namespace ?? DEFAULT_NAMESPACE
      const {removed, failures} = await deleteNamedClaims(await this.client(), settings, namespace, names)
      if (this.machineOutput()) await this.emit({removed})
      else for (const claim of removed) this.log(`claim ${claim}: deleted`)
      this.reportFailures(failures.map(({error}) => error))
      return {removed}
    }

    const items = await claimRows(await this.client(), settings, {namespace: flags.namespace, names})
    await this.emit({items}, () => this.table(items))
    return {items}
  }

  private table(items: ClaimRow[]): string {
    if (items.length === 0) return `no claims under ${this.flags['claims-root']}`
    return renderTable(
      ['NAMESPACE', 'NAME', 'USED', 'REQUEST', 'USED BY', 'PATH'],
      items.map((row) => [row.namespace, row.name, humanSize(row.bytes), row.storage ?? '', row.usedBy ?? '', row.path]),
    )
  }
}
