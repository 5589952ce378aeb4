/**
 * Exit codes for what commander refuses: `--help` and `--version` are not
 * errors (commander's exit code 0); anything else about the command line
 * (an unknown flag, a value not among the choices, no command at all) is
 * invalid configuration, 2, the code `run` uses for a bad value in the file.
 */
import type { CommanderError } from "commander";

export const usageExitCode = (error: CommanderError): number => (error.exitCode === 0 ? 0 : 2);
