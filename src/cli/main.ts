#!/usr/bin/env node
/**
 * The `upholster` command. `run` starts the daemon; `status` asks a running
 * one for its smoosh channels.
 */
import { Command, Option } from "commander";
import { LOG_LEVELS } from "../ports/shell.js";
import { UPHOLSTER_VERSION } from "../version.js";
import { runCommand, type RunFlags } from "./run.js";
import { fetchStatusText } from "./status.js";
import { DEFAULT_PORT } from "../config/upholster-section.js";

const terminal = {
  out: (line: string) => process.stdout.write(`${line}\n`),
  err: (line: string) => process.stderr.write(`${line}\n`),
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
  .description("Maintenance companion for CouchDB-style databases: auto-compaction (smoosh), db updates feed")
  .version(UPHOLSTER_VERSION)
  .showHelpAfterError();

const run = program
  .command("run")
  .description("run the daemon against a CouchDB server (--couch) or the in-memory store with a demo workload")
  .option("-c, --config <file>", "INI file with CouchDB-style sections ([smoosh], [smoosh.<channel>], [upholster], ...)")
  .option("-p, --port <port>", `HTTP port (default ${DEFAULT_PORT}; 0 picks a free one)`)
  .option("--host <address>", "address to bind (default 127.0.0.1)")
  .option("--couch <url>", "maintain this CouchDB server (http://user:pass@host:5984); default: env COUCHDB_URL, then [couchdb] url, else the in-memory store")
  .option("--no-demo", "do not run the demo workload on the in-memory store")
  .addOption(new Option("--log-level <level>", "log level").choices([...LOG_LEVELS]))
  .action(async (options: { config?: string; port?: string; host?: string; demo?: boolean; logLevel?: string; couch?: string }) => {
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
      process.exitCode = 1;
    }
  });

await program.parseAsync(process.argv);
