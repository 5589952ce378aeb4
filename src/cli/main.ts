#!/usr/bin/env node
/**
 * The `upholster` command. `run` starts the daemon; `status` asks a running
 * one for its smoosh channels. A bad command line (an unknown flag, a value
 * not among the choices) exits 2, like every other invalid configuration.
 */
import { Command, CommanderError, Option } from "commander";
import { LOG_LEVELS } from "../ports/shell.js";
import { UPHOLSTER_VERSION } from "../version.js";
import { runCommand, type RunFlags } from "./run.js";
import { fetchStatusText, StatusUsageError } from "./status.js";
import { deployDdocCommand, type DeployFlags } from "./deploy-ddoc.js";
import { DEFAULT_PORT, LOG_FORMATS } from "../config/upholster-section.js";
import { usageExitCode } from "./usage.js";

const terminal = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
  isTerminal: process.stdout.isTTY === true,
};

/** Resolves with the signal's name on the first SIGINT/SIGTERM; a second one exits at once. */
const untilSignal = (): Promise<string> =>
  new Promise((resolve) => {
    let stopping = false;
    const onSignal = (signal: string) => {
      if (stopping) process.exit(130);
      stopping = true;
      resolve(signal);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
  });

const program = new Command("upholster")
  .description("Maintenance companion for CouchDB-style databases: auto-compaction (smoosh), db updates feed, background indexing (ken)")
  .version(UPHOLSTER_VERSION)
  .showHelpAfterError()
  // Throw instead of exiting with commander's 1; set before the subcommands, which inherit it.
  .exitOverride();

const run = program
  .command("run")
  .description("run the daemon against a CouchDB server (--couch) or the in-memory store with a demo workload")
  .option("-c, --config <file>", "INI file with CouchDB-style sections ([smoosh], [smoosh.<channel>], [upholster], ...)")
  .option("-p, --port <port>", `HTTP port (default ${DEFAULT_PORT}; 0 picks a free one)`)
  .option("--host <address>", "address to bind (default 127.0.0.1)")
  .option("--couch <url>", "maintain this CouchDB server (http://user:pass@host:5984); default: env COUCHDB_URL, then [couchdb] url, else the in-memory store")
  .option("--no-demo", "do not run the demo workload on the in-memory store")
  .addOption(new Option("--log-level <level>", "log level").choices([...LOG_LEVELS]))
  .addOption(new Option("--log-format <format>", "log lines: pretty for people, json for machines (default auto: pretty on a terminal)").choices([...LOG_FORMATS]))
  .action(async (options: { config?: string; port?: string; host?: string; demo?: boolean; logLevel?: string; logFormat?: string; couch?: string }) => {
    const flags: RunFlags = {
      ...options,
      // Commander defaults --no-demo to true; only a flag actually given may override the file.
      demo: run.getOptionValueSource("demo") === "cli" ? options.demo : undefined,
    };
    process.exitCode = await runCommand(flags, terminal, untilSignal, process.env);
    // Timers of a store that does not close everything must not keep a stopped daemon alive.
    process.exit();
  });

program
  .command("status")
  .description("print the smoosh channels of a running upholster (or CouchDB 3.4 node) as a table")
  .option("--url <url>", "upholster's HTTP address", `http://127.0.0.1:${DEFAULT_PORT}`)
  .option("--json", "print the raw JSON instead of a table")
  .action(async (options: { url: string; json?: boolean }) => {
    try {
      terminal.out(await fetchStatusText(options));
    } catch (error) {
      terminal.err(`upholster: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = error instanceof StatusUsageError ? 2 : 1;
    }
  });

program
  .command("deploy-ddoc")
  .description("stage a new version of a design doc in a running upholster: its indexes are built in the background, then it is swapped in")
  .option("--url <url>", "upholster's HTTP address (a server admin in it: http://NAME:PASSWORD@host:port)", `http://127.0.0.1:${DEFAULT_PORT}`)
  .option("--db <db>", "the database")
  .option("--file <file>", "the design doc, as JSON")
  .option("--ddoc <name>", "its id (default: the file's _id)")
  .option("--detach", "start it and return; upholster carries on")
  .option("--cancel", "cancel the deploy of --ddoc (its stage is removed)")
  .action(async (options: DeployFlags) => {
    // Interrupted: the deploy goes on in upholster; the same command follows it again.
    process.once("SIGINT", () => {
      terminal.err("upholster: stopped following; the deploy goes on in upholster (run the same command to follow it, --cancel to stop it)");
      process.exit(130);
    });
    try {
      process.exitCode = await deployDdocCommand(options, { out: terminal.out, sleep: (ms) => new Promise((r) => setTimeout(r, ms)) });
    } catch (error) {
      terminal.err(`upholster: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = error instanceof StatusUsageError ? 2 : 1;
    }
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander has printed the problem (and the help) already.
  if (error instanceof CommanderError) process.exit(usageExitCode(error));
  throw error;
}
