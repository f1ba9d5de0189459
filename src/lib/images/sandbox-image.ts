/**
 * The runtime's sandbox (pause) image: no container lists it, yet removing it breaks every new pod,
 * so `rmi --prune` and the image collector keep it even where the runtime does not pin it. Where each
 * runtime names it:
 * - containerd 1.x: verbose Status info `config.sandboxImage`; 2.x: `config.pinnedImages.sandbox` (and pins it);
 * - CRI-O 1.27+: verbose Status info `config.sandboxImage` (1.28+ also pins it);
 * - CRI-O 1.26: no verbose info; `pause_image` of the configuration its socket serves at /config.
 */
import {CRI_CLIENT_VERSION, type CriClient} from '../cri/client.js'
import {crioInspect, pauseImageFromCrioConfig} from '../cri/crio-inspect.js'

/** From a verbose Status `info`; undefined when it does not say. */
export function sandboxImageFromInfo(info: Readonly<Record<string, string>> | undefined): string | undefined {
  const raw = info?.config
  if (!raw) return undefined
  try {
    const config = JSON.parse(raw) as {sandboxImage?: unknown; pinnedImages?: {sandbox?: unknown}}
    const image = config.sandboxImage ?? config.pinnedImages?.sandbox
    return typeof image === 'string' && image !== '' ? image : undefined
  } catch {
    return undefined
  }
}

/**
 * The sandbox image from the verbose Status `info` the caller already has, else (CRI-O, which names
 * itself in Version) from CRI-O's /config. Undefined when neither says: nothing extra is protected.
 */
export async function runtimeSandboxImage(
  client: CriClient,
  info: Readonly<Record<string, string>> | undefined,
): Promise<string | undefined> {
  const fromInfo = sandboxImageFromInfo(info)
  if (fromInfo) return fromInfo
  const version = await client.runtime('version', {version: CRI_CLIENT_VERSION}).catch(() => undefined)
  if (version?.runtimeName !== 'cri-o') return undefined
  return pauseImageFromCrioConfig(await crioInspect(client.runtimeEndpoint, '/config'))
}
