/** Placeholder: sync --watch (filled in by the next commit). */
import type {SyncTarget} from './sync-pods.js'
import type {SyncSettings} from './reconciler.js'

export async function superviseSelection(_select: () => Promise<SyncTarget[]>, _settings: SyncSettings, _deps: unknown): Promise<void> {}
