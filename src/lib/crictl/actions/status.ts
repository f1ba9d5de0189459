/**
 * crictl inspect, inspectp, inspecti, info, imagefsinfo, version, runtime-config and
 * update-runtime-config (container.go, sandbox.go, image.go, info.go, version.go, runtime_config.go,
 * update_runtime_config.go): one status call per ID, the document of outputStatusData or the
 * table crictl prints.
 */
import type {ContainerStatusResponse, ImageStatusResponse, PodSandboxStatusResponse} from '../../../generated/runtime/v1/api.js'
import {CRI_CLIENT_VERSION} from '../../cri/client.js'
import {humanAge} from '../../output/format.js'
import {
  containerStatusValue,
  imageStatusValue,
  outputStatusData,
  podSandboxStatusValue,
  runtimeStatusData,
  type StatusData,
} from '../documents.js'
import {GoTemplateError} from '../go-template.js'
import {crictlLabels, listCrictlContainers, listCrictlImages, listCrictlPods} from '../list-calls.js'
import {info, error as logError} from '../log.js'
import {crictlFilesystemsText} from '../stats-text.js'
import {tabwrite} from '../tabwriter.js'
import {goHumanSize} from '../units.js'
import {CrictlError, type CrictlSession, wrap} from '../session.js'
import {toProtojson} from '../protojson.js'

/** outputStatusData with crictl's words for a template that fails (`execute template: …`). */
function printStatusData(session: CrictlSession, statuses: readonly StatusData[], output: string): void {
  let text: string | undefined
  try {
    text = outputStatusData(statuses, output, session.string('template'))
  } catch (error) {
    if (error instanceof GoTemplateError) throw new CrictlError(`execute template: ${error.message}`)
    throw new CrictlError((error as Error).message)
  }

  if (text !== undefined) session.println(text)
}

const sortedLines = (map: Record<string, string>) =>
  Object.keys(map)
    .sort()
    .map((key) => `\t${key} -> ${map[key]}\n`)
    .join('')

/** fmt's %v of a map[string]string. */
function goMapText(map: Record<string, string> | undefined): string {
  const keys = Object.keys(map ?? {}).sort()
  return `map[${keys.map((key) => `${key}:${map![key]}`).join(' ')}]`
}

function labelsAndAnnotations(status: {labels: Record<string, string>; annotations: Record<string, string>}): string {
  let text = ''
  if (Object.keys(status.labels).length > 0) text += `Labels:\n${sortedLines(status.labels)}`
  if (Object.keys(status.annotations).length > 0) text += `Annotations:\n${sortedLines(status.annotations)}`
  return text
}

function containerTable(response: ContainerStatusResponse, verbose: boolean): string {
  const status = response.status!
  let text = `ID: ${status.id}\n`
  if (status.metadata?.name) text += `Name: ${status.metadata.name}\n`
  if (status.metadata?.attempt) text += `Attempt: ${status.metadata.attempt}\n`
  text += `State: ${status.state}\nCreated: ${humanAge(status.createdAt)}\n`
  if (status.state !== 'CONTAINER_CREATED') text += `Started: ${humanAge(status.startedAt)}\n`
  if (status.state === 'CONTAINER_EXITED') {
    if (BigInt(status.finishedAt) > 0n) text += `Finished: ${humanAge(status.finishedAt)}\n`
    text += `Exit Code: ${status.exitCode}\n`
  }

  text += labelsAndAnnotations(status)
  return verbose ? `${text}Info: ${goMapText(response.info)}\n` : text
}

function podTable(response: PodSandboxStatusResponse, verbose: boolean): string {
  const status = response.status!
  let text = `ID: ${status.id}\n`
  if (status.metadata) {
    if (status.metadata.name) text += `Name: ${status.metadata.name}\n`
    if (status.metadata.uid) text += `UID: ${status.metadata.uid}\n`
    if (status.metadata.namespace) text += `Namespace: ${status.metadata.namespace}\n`
    text += `Attempt: ${status.metadata.attempt}\n`
  }

  text += `Status: ${status.state}\nCreated: ${humanAge(status.createdAt)}\n`
  if (status.network) {
    text += `IP Addresses: ${status.network.ip}\n`
    for (const ip of status.network.additionalIps) text += `Additional IP: ${ip.ip}\n`
  }

  text += labelsAndAnnotations(status)
  return verbose ? `${text}Info: ${goMapText(response.info)}\n` : text
}

function imageTable(response: ImageStatusResponse, verbose: boolean): string {
  const image = response.image!
  let text = `ID: ${image.id}\n`
  for (const tag of image.repoTags) text += `Tag: ${tag}\n`
  for (const digest of image.repoDigests) text += `Digest: ${digest}\n`
  text += `Size: ${goHumanSize(image.size, 3)}\n`
  return verbose ? `${text}Info: ${goMapText(response.info)}\n` : text
}

/** resourceStatus: each ID's status, printed as a table at once or gathered into one document. */
async function resourceStatus<T extends {info: Record<string, string>}>(
  session: CrictlSession,
  ids: readonly string[],
  fetch: (id: string, verbose: boolean) => Promise<T>,
  value: (response: T) => unknown,
  table: (response: T, verbose: boolean) => string,
): Promise<void> {
  const verbose = !session.bool('quiet')
  const output = session.string('output') || 'json'
  const statuses: StatusData[] = []
  for (const id of ids) {
    const response = await fetch(id, verbose)
    if (output === 'table') session.out(table(response, verbose))
    else statuses.push({status: value(response), info: response.info})
  }

  printStatusData(session, statuses, output)
}

function nothingFound(session: CrictlSession): never {
  logError('No IDs provided or nothing found per filter')
  return session.usage()
}

async function inspect(session: CrictlSession): Promise<void> {
  const runtime = await session.runtime()
  const image = await session.image()
  let ids = [...session.args]
  if (ids.length === 0) {
    const labels = crictlLabels(session.strings('label'))
    try {
      const containers = await listCrictlContainers(runtime, image, {
        name: session.value('name'),
        pod: session.value('pod'),
        namespace: session.value('namespace'),
        image: session.value('image'),
        state: session.value('state'),
        latest: session.bool('latest'),
        last: session.int('last'),
        all: session.bool('all'),
        labels,
      })
      ids = containers.map((container) => container.id)
    } catch (error) {
      throw wrap('listing containers', error)
    }
  }

  if (ids.length === 0) nothingFound(session)
  try {
    await resourceStatus(
      session,
      ids,
      async (id, verbose) => {
        try {
          return await runtime.runtime('containerStatus', {containerId: id, verbose})
        } catch (error) {
          throw wrap('get container status', error)
        }
      },
      (response) => containerStatusValue(response.status!),
      containerTable,
    )
  } catch (error) {
    throw wrap('get the status of containers', error)
  }
}

async function inspectp(session: CrictlSession): Promise<void> {
  const runtime = await session.runtime()
  let ids = [...session.args]
  if (ids.length === 0) {
    const labels = crictlLabels(session.strings('label'))
    try {
      const pods = await listCrictlPods(runtime, {
        name: session.value('name'),
        namespace: session.value('namespace'),
        state: session.value('state'),
        latest: session.bool('latest'),
        last: session.int('last'),
        labels,
      })
      ids = pods.map((pod) => pod.id)
    } catch (error) {
      throw wrap('listing pod sandboxes', error)
    }
  }

  if (ids.length === 0) nothingFound(session)
  try {
    await resourceStatus(
      session,
      ids,
      async (id, verbose) => {
        try {
          return await runtime.runtime('podSandboxStatus', {podSandboxId: id, verbose})
        } catch (error) {
          throw wrap('get pod sandbox status', error)
        }
      },
      (response) => podSandboxStatusValue(response.status!),
      podTable,
    )
  } catch (error) {
    throw wrap('get the status of pod sandboxes', error)
  }
}

async function inspecti(session: CrictlSession): Promise<void> {
  const client = await session.image()
  const verbose = !session.bool('quiet')
  const output = session.string('output') || 'json'
  let ids = [...session.args]
  if (ids.length === 0) {
    try {
      ids = (await listCrictlImages(client, session.string('name'), session.strings('filter'))).map((image) => image.id)
    } catch (error) {
      throw wrap('listing images', error)
    }
  }

  if (ids.length === 0) nothingFound(session)
  const statuses: StatusData[] = []
  for (const id of ids) {
    let response: ImageStatusResponse
    try {
      response = await client.image('imageStatus', {image: {image: id}, verbose})
    } catch (error) {
      throw wrap(`image status for ${JSON.stringify(id)} request`, error)
    }

    if (!response.image) throw new CrictlError(`no such image ${JSON.stringify(id)} present`)
    if (output === 'table') session.out(imageTable(response, verbose))
    else statuses.push({status: imageStatusValue(response.image), info: response.info})
  }

  printStatusData(session, statuses, output)
}

async function infoCommand(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  try {
    const response = await client.runtime('status', {verbose: !session.bool('quiet')})
    printStatusData(session, [runtimeStatusData(response)], session.string('output'))
  } catch (error) {
    throw wrap('getting status of runtime', error)
  }
}

async function imagefsinfo(session: CrictlSession): Promise<void> {
  const client = await session.image()
  const output = session.string('output') || 'json'
  let response
  try {
    response = await client.image('imageFsInfo', {})
  } catch (error) {
    throw wrap('image filesystem info request', error)
  }

  if (output !== 'table') return printStatusData(session, [{status: JSON.parse(toProtojson('ImageFsInfoResponse', response))}], output)
  session.out(crictlFilesystemsText(response))
}

async function version(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  try {
    const response = await client.runtime('version', {version: CRI_CLIENT_VERSION === '0.1.0' ? 'v1' : 'v1'})
    session.out(
      `Version:  ${response.version}\nRuntimeName:  ${response.runtimeName}\nRuntimeVersion:  ${response.runtimeVersion}\n` +
        `RuntimeApiVersion:  ${response.runtimeApiVersion}\n`,
    )
  } catch (error) {
    throw wrap('getting the runtime version', error)
  }
}

async function runtimeConfig(session: CrictlSession): Promise<void> {
  let client
  try {
    client = await session.runtime()
  } catch (error) {
    throw wrap('get runtime client', error)
  }

  let response
  try {
    response = await client.runtime('runtimeConfig', {})
  } catch (error) {
    throw wrap('get runtime config', wrap('call RuntimeConfig RPC', error))
  }

  if (response.linux) session.out(tabwrite([['cgroup driver:', response.linux.cgroupDriver]], {minWidth: 10, padding: 3}))
}

async function updateRuntimeConfig(session: CrictlSession): Promise<void> {
  const client = await session.runtime()
  try {
    await client.runtime('updateRuntimeConfig', {runtimeConfig: {networkConfig: {podCidr: session.string('pod-cidr')}}})
  } catch (error) {
    throw wrap('update runtime config', error)
  }

  info('Runtime config successfully updated')
}

export const ACTIONS = {
  inspect,
  inspectp,
  inspecti,
  info: infoCommand,
  imagefsinfo,
  version,
  'runtime-config': runtimeConfig,
  'update-runtime-config': updateRuntimeConfig,
}
