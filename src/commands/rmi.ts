import {Args, Flags} from '@oclif/core'

import {BaseCommand, toPodctlError} from '../lib/base-command.js'
import {settleLimit} from '../lib/util/concurrency.js'
import {UsageError, type PodctlError} from '../lib/errors.js'
import {truncateId} from '../lib/output/format.js'
import {
  collateralTags,
  imageLabel,
  planRemoval,
  removedNames,
  sandboxImageFromInfo,
  type RemovalFailure,
} from '../lib/images/store.js'

export interface RmiResult {
  dryRun: boolean
  deleted: Array<{id: string; repoTags: string[]; repoDigests: string[]}>
  failures: Array<{ref: string; code: string; exitCode: number; message: string}>
}

/** At most this many RemoveImage calls in flight. */
const REMOVE_CONCURRENCY = 4

export default class Rmi extends BaseCommand<typeof Rmi> {
  static override summary = 'Remove images by tag, digest or ID prefix; --prune removes every unused image.'

  static override description = `A CRI RemoveImage removes the whole image with ALL its tags, so podctl resolves each \
reference to its image first, says which tags go (a note on stderr when you named only one of several) and prints \
"Deleted: <tag>" for every tag removed. Images used by a container in any state, and images the runtime pins (such as \
its sandbox/pause image), are refused unless --force; the message names the containers. --prune selects images that \
no container uses and that are not pinned (never the runtime's sandbox image). --dry-run shows the plan and removes \
nothing. Removals run concurrently; one failure never stops the others, each is reported, and the exit code is that of \
the first failure (5 for an unknown image, 15 for an ambiguous ID prefix, 2 for a refused one). Nothing to remove is \
not an error: exit 0 with a note on stderr.`

  static override examples = [
    {description: 'Remove one image by tag', command: '<%= config.bin %> <%= command.id %> localhost:5000/app:v1'},
    {description: 'Remove by ID prefix, even if a container still uses it', command: '<%= config.bin %> <%= command.id %> 3f57d9401f8d --force'},
    {description: 'See what a prune would remove', command: '<%= config.bin %> <%= command.id %> --prune --dry-run'},
    {description: 'Remove every unused, unpinned image', command: '<%= config.bin %> <%= command.id %> --prune'},
    {description: 'Remove all dangling images', command: '<%= config.bin %> <%= command.id %> $(<%= config.bin %> images --filter dangling=true -q)'},
  ]

  static override strict = false

  static override args = {
    image: Args.string({description: 'Image tag, repo@digest, or image ID (prefix); several allowed.'}),
  }

  static override flags = {
    all: Flags.boolean({char: 'a', summary: 'Remove every image (in-use and pinned ones only with --force).', exclusive: ['prune']}),
    prune: Flags.boolean({char: 'p', summary: 'Remove every image no container uses and the runtime does not pin.'}),
    force: Flags.boolean({char: 'f', summary: 'Remove images even if a container uses them or the runtime pins them.'}),
    'dry-run': Flags.boolean({summary: 'Print what would be removed; remove nothing.'}),
  }

  public async run(): Promise<RmiResult> {
    const {flags} = this
    const refs = (await this.parse(Rmi)).argv as string[]
    if (refs.length === 0 && !flags.all && !flags.prune) {
      throw new UsageError('rmi needs IMAGE arguments, --all or --prune; e.g. podctl rmi localhost:5000/app:v1')
    }

    if (refs.length > 0 && (flags.all || flags.prune)) {
      throw new UsageError(`--${flags.all ? 'all' : 'prune'} takes no IMAGE arguments; drop ${refs.join(' ')} or the flag`)
    }

    const client = await this.client()
    const [{images}, {containers}, status] = await Promise.all([
      client.image('listImages', {}),
      client.runtime('listContainers', {}),
      // Only to learn the sandbox image; a runtime that cannot answer simply protects nothing extra.
      client.runtime('status', {verbose: true}).catch(() => undefined),
    ])
    const sandboxImage = sandboxImageFromInfo(status?.info)
    const plan = planRemoval(images, containers, {
      refs,
      all: flags.all,
      prune: flags.prune,
      force: flags.force,
      protectedRefs: sandboxImage ? [sandboxImage] : [],
    })

    for (const target of plan.remove) {
      const others = collateralTags(target)
      if (others.length > 0) {
        this.note(
          `${target.requestedAs.join(', ')} is image ${truncateId(target.image.id)}; removing it also removes ${others.join(', ')} (RemoveImage deletes every tag)`,
        )
      }
    }

    const failures: RemovalFailure[] = [...plan.failures]
    const deleted: RmiResult['deleted'] = []
    if (flags['dry-run']) {
      for (const target of plan.remove) {
        for (const name of removedNames(target.image)) this.say(`Would delete: ${name}`)
        deleted.push(summary(target.image))
      }
    } else {
      const settled = await settleLimit(plan.remove, REMOVE_CONCURRENCY, (target) =>
        client.image('removeImage', {image: {image: target.image.id}}),
      )
      settled.forEach((outcome, i) => {
        const {image, requestedAs} = plan.remove[i]
        if (outcome.status === 'fulfilled') {
          for (const name of removedNames(image)) this.say(`Deleted: ${name}`)
          deleted.push(summary(image))
        } else {
          failures.push({ref: requestedAs[0] ?? imageLabel(image), error: toPodctlError(outcome.reason)})
        }
      })
    }

    if (plan.remove.length === 0 && failures.length === 0) {
      this.note(flags.prune ? "nothing to remove: every image is in use, pinned or the runtime's sandbox image" : 'nothing to remove: there are no images')
    }

    // Reported in the order the images were named (then --all/--prune order); the first one sets the exit code.
    const rank = (failure: RemovalFailure) => (refs.includes(failure.ref) ? refs.indexOf(failure.ref) : refs.length)
    failures.sort((a, b) => rank(a) - rank(b))
    for (const failure of failures) this.reportFailure(failure.error)
    if (failures.length > 0) process.exitCode = failures[0].error.exitCode
    return {
      dryRun: Boolean(flags['dry-run']),
      deleted,
      failures: failures.map(({ref, error}) => ({ref, ...(error as PodctlError).toJSON()})),
    }
  }

  private say(line: string): void {
    if (!this.jsonEnabled()) this.log(line)
  }

  private note(line: string): void {
    process.stderr.write(`${line}\n`)
  }
}

function summary(image: {id: string; repoTags: string[]; repoDigests: string[]}): RmiResult['deleted'][number] {
  return {id: image.id, repoTags: [...image.repoTags], repoDigests: [...image.repoDigests]}
}
