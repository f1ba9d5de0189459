/** Every crictl v1.37 command in the order `crictl help` lists them (by name), urfave's `help` last. */
import {commandNames, type CrictlCommand, HELP_COMMAND} from './command-spec.js'
import {COMMANDS_A_TO_L} from './command-table-a-l.js'
import {COMMANDS_M_TO_Z} from './command-table-m-z.js'

export const CRICTL_COMMANDS: readonly CrictlCommand[] = [...COMMANDS_A_TO_L, ...COMMANDS_M_TO_Z, HELP_COMMAND]

/** The command a name or alias stands for (`img` is images, `h` is help). */
export function findCommand(name: string): CrictlCommand | undefined {
  return CRICTL_COMMANDS.find((command) => commandNames(command).includes(name))
}
