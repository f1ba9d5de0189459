/**
 * `podctl rmi`: references (or --all/--prune) → a removal plan that says what goes and why not
 * (images/removal-plan.ts), then one RemoveImage per image; every failure reported, the first sets the exit code.
 */
import {Args, Flags} from '@oclif/core'

import {BaseCommand, example, toPodctlError} from '../lib/base-command.js'
import {UsageError} from '../lib/errors.js'
import {imageLabel} from '../lib/images/store.js'
import {
  collateralTags,
  planImageRemoval,
  type RemovalFailure,
  type RemovalOutcome,
  type RemovalTarget,
  removedNames,
  removeImages,
} from '../lib/images/removal-plan.js'
import {podDirRootFromEnv} from '../lib/kubelet/core/pod-directory.js'
import {truncateId} from '../lib/output/format.js'

export interface RmiResult {
  dryRun: boolean
  deleted: Array<{id: string; repoTags: string[]; repoDigests: string[]}>
  failures: Array<{ref: string; code: string; exitCode: number; message: string}>
}

export default class Rmi extends BaseCommand<typeof Rmi> {
  static override summary = 'Remove images by tag, digest or ID prefix; --prune removes every unused image podctl pulled.'

  static override description = `A CRI RemoveImage removes the whole image with ALL its tags, so podctl resolves each \
reference to its image first, says which tags go (a note on stderr when you named only one of several) and prints \
"Deleted: <tag>" for every tag removed. Images used by a container in any state, and images the runtime pins (such as \
its sandbox/pause image), are refused unless --force; the message names the containers. --prune selects images that \
no container uses and that are not pinned (never the runtime's sandbox image). --all and --prune take only images \
podctl pulled on this runtime (run, sync, create, pull record them under $PODCTL_POD_DIR_ROOT): images crictl, a \
kubelet or a user pulled are left alone (counted on stderr; name one to remove it). --dry-run shows the plan and removes \
nothing. Removals run concurrently; one failure never stops the others, each is reported, and the exit code is that of \
the first failure (5 for an unknown image, 15 for an ambiguous ID prefix, 2 for a refused one). Nothing to remove is \
not an error: exit 0 with a note on stderr.`

  static override examples = [
    example('Remove one image by tag', 'localhost:5000/app:v1'),
    example('Remove by ID prefix, even if a container still uses it', '3f57d9401f8d --force'),
    example('See what a prune would remove', '--prune --dry-run'),
    example('Remove every unused, unpinned image podctl pulled', '--prune'),
    example("The same in crictl's short form, as a dry run", '-q --dry-run'),
    example('Remove all dangling images', '$(<%= config.bin %> images --filter dangling=true -q)'),
  ]

  static override strict = false

  static override args = {
    image: Args.string({description: 'Image tag, repo@digest, or image ID (prefix); several allowed.'}),
  }

  static override flags = {
    all: Flags.boolean({
      char: 'a',
      summary: 'Remove every image podctl pulled (in-use and pinned ones only with --force).',
      exclusive: ['prune'],
    }),
    prune: Flags.boolean({
      char: 'p',
      // crictl's short form of --prune; -q is free in rmi (it has no quiet mode).
      charAliases: ['q'],
      summary: 'Remove every image podctl pulled that no container uses and the runtime does not pin (-q too, as in crictl).',
    }),
    force: Flags.boolean({char: 'f', summary: 'Remove images even if a container uses them or the runtime pins them.'}),
    'dry-run': Flags.boolean({summary: 'Print what would be removed; remove nothing.'}),
  }

  /** IMAGE arguments or --all/--prune, never both. */
  private checkArguments(): void {
    const {flags, positional: refs} = this
    if (refs.length === 0 && !flags.all && !flags.prune) {
      throw new UsageError('rmi needs IMAGE arguments, --all or --prune; e.g. podctl rmi localhost:5000/app:v1')
    }

    if (refs.length > 0 && (flags.all || flags.prune)) {
      throw new UsageError(`--${flags.all ? 'all' : 'prune'} takes no IMAGE arguments; drop ${refs.join(' ')} or the flag`)
    }
  }

  public async run(): Promise<RmiResult> {
    const {flags, positional: refs} = this
    this.checkArguments()
    const client = await this.client()
    // --all and --prune take only the images podctl pulled, recorded under $PODCTL_POD_DIR_ROOT (images/pull-records.ts).
    const request = {refs, all: flags.all, prune: flags.prune, force: flags.force}
    const plan = await planImageRemoval(client, request, {pullRecordsIn: podDirRootFromEnv()})
    if (plan.leftAlone)
      this.stderrLine(
        `left alone ${plan.leftAlone} image${plan.leftAlone === 1 ? '' : 's'} podctl did not pull; name an image to remove it`,
      )
    this.noteCollateralTags(plan.remove)
    const failures: RemovalFailure[] = [...plan.failures]
    const deleted: RmiResult['deleted'] = []
    const dryRun = flags['dry-run']
    const outcomes: RemovalOutcome[] = dryRun ? plan.remove.map((target) => ({target, removed: true})) : await removeImages(client, plan)
    for (const {target, removed, error} of outcomes) {
      if (!removed) {
        failures.push({ref: target.requestedAs[0] ?? imageLabel(target.image), error: toPodctlError(error)})
        continue
      }

      for (const name of removedNames(target.image)) this.say(`${dryRun ? 'Would delete' : 'Deleted'}: ${name}`)
      deleted.push(summary(target.image))
    }

    if (plan.remove.length === 0 && failures.length === 0) this.nothingToRemove()

    // Reported in the order the images were named (then --all/--prune order); the first one sets the exit code.
    const rank = (failure: RemovalFailure) => (refs.includes(failure.ref) ? refs.indexOf(failure.ref) : refs.length)
    failures.sort((a, b) => rank(a) - rank(b))

    this.reportFailures(failures.map((failure) => failure.error))
    return {dryRun: Boolean(dryRun), deleted, failures: failures.map(({ref, error}) => ({ref, ...error.toJSON()}))}
  }

  private nothingToRemove(): void {
    const why = this.flags.prune
      ? "every image podctl pulled is in use, pinned or the runtime's sandbox image"
      : 'there are no images podctl pulled'
    this.stderrLine(`nothing to remove: ${why}`)
  }

  /** Before removing: the tags that go too although another tag of the image was named. */
  private noteCollateralTags(targets: readonly RemovalTarget[]): void {
    for (const target of targets) {
      const others = collateralTags(target)
      if (others.length === 0) continue
      const image = `${target.requestedAs.join(', ')} is image ${truncateId(target.image.id)}`
      this.stderrLine(`${image}; removing it also removes ${others.join(', ')} (RemoveImage deletes every tag)`)
    }
  }

  private say(line: string): void {
    if (!this.jsonEnabled()) this.log(line)
  }
}

function summary(image: {id: string; repoTags: string[]; repoDigests: string[]}): RmiResult['deleted'][number] {
  return {id: image.id, repoTags: [...image.repoTags], repoDigests: [...image.repoDigests]}
}
