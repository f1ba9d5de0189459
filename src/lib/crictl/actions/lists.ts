/** crictl pods, ps and images (sandbox.go OutputPodSandboxes, container.go OutputContainers, image.go). */
import type {CrictlFormat} from '../documents.js'
import {crictlLabels, imageStatusCache, listCrictlContainers, listCrictlImages, listCrictlPods} from '../list-calls.js'
import {crictlImagesText, crictlPodsText, crictlPsText} from '../lists.js'
import {CrictlError, type CrictlSession, describe, wrap} from '../session.js'
import type {ProtojsonMessageName} from '../protojson.js'

/** A list as -o json or yaml prints it; documents.ts (protojson, YAML) is loaded only for those, not for the tables. */
async function listDocument(type: ProtojsonMessageName, message: object, format: CrictlFormat): Promise<string> {
  const {crictlMessage} = await import('../documents.js')
  return crictlMessage(type, message, format)
}

async function pods(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  const labels = crictlLabels(session.strings('label'))
  const output = session.string('output')
  try {
    let items
    try {
      items = await listCrictlPods(client, {
        id: session.value('id'),
        name: session.value('name'),
        namespace: session.value('namespace'),
        state: session.value('state'),
        labels,
        latest: session.bool('latest'),
        last: session.int('last'),
      })
    } catch (error) {
      throw wrap('list pod sandboxes', error)
    }

    if (output === 'json' || output === 'yaml') return session.println(await listDocument('ListPodSandboxResponse', {items}, output))
    if (output !== 'table') throw new CrictlError(`unsupported output format ${JSON.stringify(output)}`)
    session.out(crictlPodsText(items, {quiet: session.bool('quiet'), verbose: session.bool('verbose'), noTrunc: session.bool('no-trunc')}))
  } catch (error) {
    throw wrap('listing pod sandboxes', error)
  }
}

async function ps(session: CrictlSession): Promise<void> {
  const runtime = await session.runtime()
  const image = await session.image()
  const labels = crictlLabels(session.strings('label'))
  const output = session.string('output')
  try {
    let containers
    try {
      containers = await listCrictlContainers(runtime, image, {
        id: session.value('id'),
        pod: session.value('pod'),
        namespace: session.value('namespace'),
        name: session.value('name'),
        image: session.value('image'),
        state: session.value('state'),
        all: session.bool('all'),
        labels,
        latest: session.bool('latest'),
        last: session.int('last'),
      })
    } catch (error) {
      throw wrap('list containers', error)
    }

    if (output === 'json' || output === 'yaml') return session.println(await listDocument('ListContainersResponse', {containers}, output))
    if (output !== 'table') throw new CrictlError(`unsupported output format ${JSON.stringify(output)}`)
    let repoImage: ((image: string) => Promise<string>) | undefined
    if (session.bool('resolve-image-path')) {
      const status = imageStatusCache(image)
      repoImage = async (name) => {
        try {
          return (await status(name))?.repoTags[0] ?? name
        } catch (error) {
          // fmt.Errorf("failed to fetch repo image %w", err): no colon in crictl's words.
          throw new CrictlError(`failed to fetch repo image ${describe(error)}`)
        }
      }
    }

    session.out(
      await crictlPsText(containers, {
        quiet: session.bool('quiet'),
        verbose: session.bool('verbose'),
        noTrunc: session.bool('no-trunc'),
        repoImage,
      }),
    )
  } catch (error) {
    throw wrap('listing containers', error)
  }
}

async function images(session: CrictlSession): Promise<void> {
  const client = await session.image()
  let list
  try {
    list = await listCrictlImages(client, session.args[0] ?? '', session.strings('filter'))
  } catch (error) {
    throw wrap('listing images', error)
  }

  const output = session.string('output')
  if (output === 'json' || output === 'yaml') return session.println(await listDocument('ListImagesResponse', {images: list}, output))
  // Any other -o is a table, as crictl's switch falls through.
  session.out(
    crictlImagesText(list, {
      quiet: session.bool('quiet'),
      verbose: session.bool('verbose'),
      noTrunc: session.bool('no-trunc'),
      digests: session.bool('digests'),
      pinned: session.bool('pinned'),
    }),
  )
}

export const ACTIONS = {pods, ps, images}
