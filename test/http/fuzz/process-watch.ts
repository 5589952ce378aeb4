/**
 * Watches this process while the fuzzer runs: an unhandled rejection, an
 * uncaught exception or a warning (a timer that overflowed, listeners piling
 * up on an emitter) is a bug in the daemon, which runs in this process.
 */
export interface ProcessWatch {
  /** What happened since `watchProcess()`, one line each. */
  readonly incidents: readonly string[];
  stop(): void;
}

export function watchProcess(): ProcessWatch {
  const incidents: string[] = [];
  const describe = (what: string) => (error: unknown) =>
    incidents.push(`${what}: ${error instanceof Error ? `${error.name}: ${error.message}\n${error.stack ?? ""}` : String(error)}`);
  const onRejection = describe("unhandled rejection");
  const onException = describe("uncaught exception");
  const onWarning = describe("process warning");
  process.on("unhandledRejection", onRejection);
  process.on("uncaughtException", onException);
  process.on("warning", onWarning);
  return {
    incidents,
    stop() {
      process.off("unhandledRejection", onRejection);
      process.off("uncaughtException", onException);
      process.off("warning", onWarning);
    },
  };
}
