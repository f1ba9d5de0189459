/**
 * A supervisor beside a kubelet would fight it: the kubelet kills every pod it did not start within
 * ~2 s, the supervisor recreates it, forever (measured: 61 sandboxes in 183 s, log directories deleted
 * under running containers). So every OWNER_CHECK_MS the supervisor asks whether a kubelet now uses the
 * runtime; while one does, its workers change nothing (they keep watching), and it says so once.
 */
import {type EventSink, normalEvent, warningEvent} from '../../kube/events.js'

/** The kubelet's own orphan clean-up period: a check every 2 s sees it before its second kill. */
export const OWNER_CHECK_MS = 2000

/** Who else owns the runtime now ("kubelet pid 42 uses the runtime at … (…)"), or undefined. */
export type RuntimeOwnerCheck = () => Promise<string | undefined>

export class RuntimeOwnerWatch {
  /** The owner the last check found. */
  owner?: string
  private checkedAt = Number.NEGATIVE_INFINITY

  constructor(
    private readonly check: RuntimeOwnerCheck,
    private readonly events: EventSink,
    /** The owner went away: every pod is synced again. */
    private readonly onGone: () => void,
  ) {}

  /** Checks when due; a failing check changes nothing (the detection is best effort, the listing goes on). */
  async tick(now = Date.now()): Promise<void> {
    if (now - this.checkedAt < OWNER_CHECK_MS) return
    this.checkedAt = now
    const owner = await this.check().catch(() => this.owner)
    if (owner !== undefined && this.owner === undefined) {
      const message =
        `${owner}; it kills pods it did not start, so podctl stops starting, restarting and recreating pods and keeps watching ` +
        '(stop the kubelet, or hand the pods to it with podctl run --static)'
      this.events(warningEvent('KubeletOwnsRuntime', message, 'supervisor'))
    } else if (owner === undefined && this.owner !== undefined) {
      this.events(normalEvent('KubeletGone', 'No kubelet uses the runtime any more; syncing the pods again', 'supervisor'))
      this.onGone()
    }

    this.owner = owner
  }
}
