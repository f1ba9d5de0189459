/**
 * crictl pull and rmi (image.go). rmi removes what the runtime removes: no pinned or in-use policy of
 * podctl's own (podctl rmi keeps its guard); --prune leaves pinned and in-use images as crictl does.
 */
import type {CriClient} from '../../cri/client.js'
import {loadPodSandboxConfig} from '../config-files.js'
import {aggregate, authOf, pullImage, pullOptionsOf} from '../container-flow.js'
import {crictlLabels} from '../list-calls.js'
import {info, error as logError, warning} from '../log.js'
import {CrictlError, type CrictlSession, describe, wrap} from '../session.js'

async function pull(session: CrictlSession): Promise<void> {
  const client = await session.image()
  const options = pullOptionsOf(session)
  const auth = await authOf(options)
  let sandbox
  if (session.isSet('pod-config')) {
    try {
      sandbox = await loadPodSandboxConfig(session.string('pod-config'))
    } catch (error) {
      throw wrap('load podSandboxConfig', error)
    }
  }

  const annotations = session.isSet('annotation') ? crictlLabels(session.strings('annotation')) : undefined
  try {
    const ref = await pullImage(client, session.args[0], auth, sandbox, annotations, options.timeoutMs)
    session.println(`Image is up to date for ${ref}`)
  } catch (error) {
    throw wrap('pulling image', error)
  }
}

/** The images --all or --prune adds, with --prune's pinned and in-use ones left out. */
async function selectAll(session: CrictlSession, client: CriClient, ids: Map<string, boolean>, prune: boolean): Promise<void> {
  const {images} = await client.image('listImages', {})
  for (const image of images) if (!(prune && image.pinned)) ids.set(image.id, true)
  if (!prune) return
  const runtime = await session.runtime()
  const {containers} = await runtime.runtime('listContainers', {})
  for (const container of containers) {
    const ref = container.image?.image ?? ''
    try {
      const status = await client.image('imageStatus', {image: {image: ref}, verbose: false})
      ids.set(status.image?.id ?? '', false)
    } catch (error) {
      logError(`image status request for ${JSON.stringify(ref)} failed: ${describe(error)}`)
    }
  }
}

async function removeOne(session: CrictlSession, client: CriClient, id: string, prune: boolean): Promise<void> {
  let image
  try {
    ;({image} = await client.image('imageStatus', {image: {image: id}, verbose: false}))
  } catch (error) {
    throw wrap(`image status request for ${JSON.stringify(id)} failed`, error)
  }

  if (!image) throw new CrictlError(`no such image ${id}`)
  const likelyTag = !id.startsWith('sha256:') && (id.includes(':') || id.includes('/'))
  if (image.repoTags.length > 1 && likelyTag) {
    warning(`Image ${JSON.stringify(id)} has multiple tags. Removing this image will delete all of the following tags:`)
    for (const tag of image.repoTags) warning(`  ${tag}`)
  }

  try {
    await client.image('removeImage', {image: {image: id}})
  } catch (error) {
    // crictl ignores removal errors on prune: another process may have raced it.
    if (prune) return
    throw wrap(`error of removing image ${JSON.stringify(id)}`, error)
  }

  const names = image.repoTags.length === 0 ? image.repoDigests : image.repoTags
  for (const name of names) session.println(`Deleted: ${name}`)
}

async function rmi(session: CrictlSession): Promise<void> {
  const client = await session.image()
  const ids = new Map<string, boolean>(session.args.map((id) => [id, true]))
  const all = session.bool('all')
  const prune = session.bool('prune')
  if (all || prune) await selectAll(session, client, ids, prune)
  if (ids.size === 0) {
    if (all || prune) return info('No images to remove')
    return session.usage()
  }

  await aggregate(
    [...ids]
      .filter(([, remove]) => remove)
      .map(
        ([id]) =>
          () =>
            removeOne(session, client, id, prune),
      ),
  )
}

export const ACTIONS = {pull, rmi}
