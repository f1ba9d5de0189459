/**
 * `run --dry-run`: the plans (run-plan.ts) and what to print of them. -o json|yaml print every
 * request whole, for scripts; the text for people is YAML with each pod's sandbox config once
 * (compact-plan.ts).
 */
import type {PodModel} from '../../manifest/model.js'
import {compactPlans} from './compact-plan.js'
import type {DryRunResult} from './run-result.js'
import {planPodRuns, type PlanSettings} from './run-plan.js'

export interface DryRunOutput {
  /** What the command returns (--json prints it). */
  result: DryRunResult
  /** What it prints, and in which format. */
  shown: unknown
  format: 'json' | 'yaml'
}

export async function planDryRun(pods: PodModel[], settings: PlanSettings, output: string): Promise<DryRunOutput> {
  const result: DryRunResult = {dryRun: true, pods: await planPodRuns(pods, settings)}
  if (output === 'json' || output === 'yaml') return {result, shown: result, format: output}
  return {result, shown: {dryRun: true, pods: compactPlans(result.pods)}, format: 'yaml'}
}
