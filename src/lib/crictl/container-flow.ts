/**
 * What crictl's create and run share (container.go CreateContainer, image.go PullImageWithSandbox and
 * getAuth): the container and pod configs, the pulls create asks for (the image and every image
 * volume), CreateContainer; and AggregateGoroutines, which runs removals side by side and joins
 * their errors.
 */
import type {AuthConfig, PodSandboxConfig} from '../../generated/runtime/v1/api.js'
import type {CriClient} from '../cri/client.js'
import {loadContainerConfig, loadPodSandboxConfig} from './config-files.js'
import {info} from './log.js'
import {CrictlError, type CrictlSession, describe} from './session.js'

export interface PullOptions {
  creds: string
  auth: string
  username: string
  timeoutMs: number
}

export function pullOptionsOf(session: CrictlSession): PullOptions {
  return {
    creds: session.string('creds'),
    auth: session.string('auth'),
    username: session.string('username'),
    timeoutMs: session.duration('pull-timeout'),
  }
}

/** term.ReadPassword after "Enter Password:": the terminal without echo, a line. */
async function readPassword(): Promise<string> {
  process.stdout.write('Enter Password:')
  const stdin = process.stdin
  if (!stdin.isTTY) {
    process.stdout.write('\n')
    throw new CrictlError('inappropriate ioctl for device')
  }

  stdin.setRawMode(true)
  try {
    return await new Promise<string>((resolve) => {
      let text = ''
      const onData = (chunk: Buffer) => {
        for (const char of chunk.toString('utf8')) {
          if (char === '\r' || char === '\n' || char === '\u0004') {
            stdin.off('data', onData)
            stdin.pause()
            resolve(text)
            return
          }

          text = char === '\u007F' ? text.slice(0, -1) : text + char
        }
      }

      stdin.on('data', onData)
      stdin.resume()
    })
  } finally {
    stdin.setRawMode(false)
    process.stdout.write('\n')
  }
}

/** getAuth: --username (asks for the password), --creds USER[:PASS], or --auth; never two of them. */
export async function authOf(options: PullOptions): Promise<AuthConfig | undefined> {
  if (options.username)
    return {username: options.username, password: await readPassword(), auth: '', serverAddress: '', identityToken: '', registryToken: ''}
  if (options.creds && options.auth) throw new CrictlError('both `--creds` and `--auth` are specified')
  if (options.creds) {
    const colon = options.creds.indexOf(':')
    if (colon === 0) throw new CrictlError("username can't be empty")
    const [username, password] = colon === -1 ? [options.creds, ''] : [options.creds.slice(0, colon), options.creds.slice(colon + 1)]
    return {username, password, auth: '', serverAddress: '', identityToken: '', registryToken: ''}
  }

  return options.auth
    ? {auth: options.auth, username: '', password: '', serverAddress: '', identityToken: '', registryToken: ''}
    : undefined
}

/** PullImageWithSandbox: one PullImage, bounded by --pull-timeout when given; the image reference the runtime answers. */
export async function pullImage(
  client: CriClient,
  image: string,
  auth: AuthConfig | undefined,
  sandbox: PodSandboxConfig | undefined,
  annotations: Record<string, string> | undefined,
  timeoutMs: number,
): Promise<string> {
  if (timeoutMs < 0) throw new CrictlError('timeout should be bigger than 0')
  const response = await client.image(
    'pullImage',
    {image: {image, annotations: annotations ?? {}}, auth, sandboxConfig: sandbox},
    timeoutMs > 0 ? {timeoutMs} : {timeoutMs: 24 * 3_600_000},
  )
  return response.imageRef
}

export interface CreateOptions {
  podId: string
  containerConfig: string
  podConfig: string
  /** Set when crictl pulls first (--with-pull, pull-image-on-create, run by default). */
  pull?: PullOptions
}

/** CreateContainer: the configs, the pulls, then the call; the new container's ID. */
export async function createContainer(runtime: CriClient, image: CriClient | undefined, options: CreateOptions): Promise<string> {
  const config = await loadContainerConfig(options.containerConfig)
  const podConfig = options.podConfig ? await loadPodSandboxConfig(options.podConfig) : undefined
  const name = config.image!.image
  if (!config.image!.userSpecifiedImage) config.image!.userSpecifiedImage = name
  if (options.pull && image) {
    const auth = await authOf(options.pull)
    const images = [name]
    info(`Pulling container image: ${name}`)
    for (const mount of config.mounts ?? []) {
      if (mount.image?.image) {
        info(`Pulling image ${mount.image.image} to be mounted to container path: ${mount.containerPath}`)
        images.push(mount.image.image)
      }
    }

    for (const each of images) await pullImage(image, each, auth, podConfig, config.image!.annotations, options.pull.timeoutMs)
  }

  const {containerId} = await runtime.runtime('createContainer', {podSandboxId: options.podId, config, sandboxConfig: podConfig})
  return containerId
}

/** AggregateGoroutines: every task at once, then their errors joined by newlines (errors.Join). */
export async function aggregate(tasks: ReadonlyArray<() => Promise<void>>): Promise<void> {
  const results = await Promise.allSettled(tasks.map((task) => task()))
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [describe(result.reason)] : []))
  if (failures.length > 0) throw new CrictlError(failures.join('\n'))
}
