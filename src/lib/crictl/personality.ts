/**
 * Which program podctl is being, chosen once at start: itself, or crictl v1.37 (issues 20 and 34).
 * Invoked as `crictl` (bin/crictl, or the single binary or a link to it named crictl), podctl is
 * crictl's own front end (main.ts): crictl's command line, Actions and output, with none of podctl's
 * commands or oclif loaded; otherwise podctl's commands run. PODCTL_PERSONALITY overrides the name.
 * Imports nothing, so the entries can ask before anything else is loaded.
 */

export type PersonalityName = 'podctl' | 'crictl'

/** PODCTL_PERSONALITY=crictl|podctl: the personality asked for explicitly (tests, wrappers), whatever the program's name. */
export function personalityFromEnv(env: NodeJS.ProcessEnv = process.env): PersonalityName | undefined {
  const asked = env.PODCTL_PERSONALITY
  return asked === 'crictl' || asked === 'podctl' ? asked : undefined
}

/** The personality a program's name asks for: crictl for `crictl` (or `crictl.exe`, `crictl-v1.37`), else podctl. */
export function personalityOf(programPath: string | undefined): PersonalityName {
  if (!programPath) return 'podctl'
  const base = programPath.slice(programPath.lastIndexOf('/') + 1)
  return /^crictl(?:$|[.-])/.test(base) ? 'crictl' : 'podctl'
}

/** The personality of this start: the environment's choice, else the program's name. */
export function choosePersonality(program: string | undefined, env: NodeJS.ProcessEnv = process.env): PersonalityName {
  return personalityFromEnv(env) ?? personalityOf(program)
}
