/**
 * `run --dry-run`'s view of the volumes: where each one goes on the host, whether it is a tmpfs,
 * and the files a configMap, secret, downwardAPI or projected volume would hold — by path, mode
 * and size only, so no Secret value is ever printed.
 */
import type {PodModel} from '../../manifest/model.js'
import type {DownwardContext} from '../core/env.js'
import {isMemoryBacked, payloadSummary, tmpfsOptions, volumePayload} from './volumes.js'

export const POD_IP_PLACEHOLDER = '<pod IP>'

export interface PlannedVolume {
  name: string
  /** hostPath, emptyDir, configMap, secret, downwardAPI, projected, or the bound source (persistentVolumeClaim, ...). */
  type: string
  hostPath: string
  tmpfs?: {options: string[]}
  /** From ConfigMap "x" / Secret "y" (names only). */
  from?: string[]
  files?: Array<{path: string; mode: string; bytes: number}>
  /** A projected source podctl cannot serve. */
  skipped?: string[]
  /** A claim volume: its claim name, and whether its host path is the claim directory or a --volume binding. */
  claim?: {name: string; from: 'claim directory' | '--volume'; readOnly?: true}
}

function volumeType(volume: PodModel['volumes'][number]): string {
  if (volume.external) return volume.external.source
  if (volume.persistentVolumeClaim) return 'persistentVolumeClaim'
  if (volume.image) return 'image'
  for (const key of ['hostPath', 'emptyDir', 'configMap', 'secret', 'downwardAPI', 'projected'] as const) if (volume[key]) return key
  return 'emptyDir'
}

export function planVolumes(pod: PodModel, volumePaths: ReadonlyMap<string, string>, context: DownwardContext): PlannedVolume[] {
  return pod.volumes.map((volume) => {
    const planned: PlannedVolume = {name: volume.name, type: volumeType(volume), hostPath: volumePaths.get(volume.name) ?? ''}
    const source = volume.persistentVolumeClaim
    if (source) {
      planned.claim = {
        name: source.claimName,
        from: volume.hostPath ? '--volume' : 'claim directory',
        ...(source.readOnly ? {readOnly: true as const} : {}),
      }
    }

    if (isMemoryBacked(volume)) planned.tmpfs = {options: tmpfsOptions(volume)}
    const from = [
      ...(volume.configMap ? [`ConfigMap ${volume.configMap.name}`] : []),
      ...(volume.secret ? [`Secret ${volume.secret.secretName}`] : []),
      ...(volume.projected?.sources ?? []).flatMap((source) => [
        ...(source.configMap ? [`ConfigMap ${source.configMap.name}`] : []),
        ...(source.secret ? [`Secret ${source.secret.name}`] : []),
      ]),
    ]
    if (from.length > 0) planned.from = from
    const skipped = (volume.projected?.sources ?? []).flatMap((source) => (source.skipped ? [source.skipped] : []))
    if (skipped.length > 0) planned.skipped = skipped
    const payload = volumePayload(pod, volume, context)
    if (payload) planned.files = payloadSummary(payload)
    return planned
  })
}
