/**
 * Why garbage collection removes what it removes, and what it leaves alone: every removal names
 * the proof that the object is podctl's (core/ownership.ts, core/owned-logs.ts) and the kubelet's
 * rule that makes it collectable; objects of other tools that the kubelet's rules would have taken
 * are counted by the reason they stay. `gc --dry-run` prints both; -o json carries them as
 * `reasons` and `leftAlone`.
 */
/** What a round collects, in its order. */
const KINDS = ['pod', 'container', 'sandbox', 'pod log directory', 'log link', 'image'] as const

export type GcKind = (typeof KINDS)[number]

export interface GcReason {
  kind: GcKind
  /** The object as the other lists of the result name it: an ID, a path, an image reference. */
  object: string
  /** Why it goes: whose it is, then the collection rule. */
  why: string
}

export interface GcLeftAlone {
  kind: GcKind
  why: string
  count: number
}

export class GcExplanation {
  readonly reasons: GcReason[] = []
  private readonly alone = new Map<string, GcLeftAlone>()

  removing(kind: GcKind, object: string, why: string): void {
    this.reasons.push({kind, object, why})
  }

  /** Forgets a removal that failed (the object stays; the failure says why). */
  failed(kind: GcKind, object: string): void {
    const index = this.reasons.findIndex((reason) => reason.kind === kind && reason.object === object)
    if (index !== -1) this.reasons.splice(index, 1)
  }

  leftAlone(kind: GcKind, why: string): void {
    const key = `${kind}\u0000${why}`
    const entry = this.alone.get(key) ?? {kind, why, count: 0}
    entry.count++
    this.alone.set(key, entry)
  }

  /** In the round's order of kinds, then by reason: the same objects always read the same. */
  leftAloneList(): GcLeftAlone[] {
    const order = (kind: GcKind) => KINDS.indexOf(kind)
    return [...this.alone.values()].sort((a, b) => order(a.kind) - order(b.kind) || a.why.localeCompare(b.why))
  }
}
