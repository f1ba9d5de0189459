/** Every crictl v1.29 command in the order `crictl help` lists them, urfave's `help` last. */
import {commandNames, type CrictlCommand, HELP_COMMAND} from './command-spec.js'
import {COMMANDS_ATTACH_TO_RM} from './command-table-attach-rm.js'
import {COMMANDS_RMI_TO_EVENTS} from './command-table-rmi-events.js'

export const CRICTL_COMMANDS: readonly CrictlCommand[] = [...COMMANDS_ATTACH_TO_RM, ...COMMANDS_RMI_TO_EVENTS, HELP_COMMAND]

/** The command a name or alias stands for (`img` is images, `h` is help). */
export function findCommand(name: string): CrictlCommand | undefined {
  return CRICTL_COMMANDS.find((command) => commandNames(command).includes(name))
}
