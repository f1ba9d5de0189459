/**
 * The flags a user gave among some names, spelled `--name`: set, not false, not an empty list (oclif's
 * value for a repeatable flag nobody gave). For refusing flags that mean nothing in a mode.
 */
export function givenFlags(flags: Readonly<Record<string, unknown>>, names: readonly string[]): string[] {
  return names
    .filter((name) => {
      const value = flags[name]
      return value !== undefined && value !== false && !(Array.isArray(value) && value.length === 0)
    })
    .map((name) => `--${name}`)
}
